"""The README's two set-up commands are the ones the project runs: CI runs the test command."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def setup_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Set-up", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", section, flags=re.DOTALL)]


def test_the_readme_gives_exactly_two_setup_commands() -> None:
    main_job, tests = setup_commands()
    assert main_job.endswith("rewardkit eval math")
    assert tests == "bash .ci/test-all"


def test_ci_runs_the_readme_test_command() -> None:
    ci_lines = [
        line.strip()
        for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert "export CI=true" in ci_lines
    assert ci_lines[-1] == setup_commands()[1]


def test_the_readme_eval_table_is_what_the_shipped_sample_gives() -> None:
    """The numbers the README quotes for `rewardkit eval math` on the sample: its size and the
    table's cases per outcome."""
    from rewardkit.evaluation import run_math_eval
    from rewardkit.evaluation.runner import sample_path

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Evaluating a model on MATH", 1)[1].split("\n## ", 1)[0]
    cases = len(sample_path().read_text(encoding="utf-8").splitlines())
    assert f"it grades the {cases} responses shipped with rewardkit" in section
    assert f"\n{cases} cases graded in " in section

    table = dict(re.findall(r"^│ ([A-Z_]+) +│ +(\d+) │", section, flags=re.MULTILINE))
    summary = run_math_eval(workers=0).summary
    assert summary.n == cases
    got = {outcome: str(count) for outcome, count in summary.failure_counts.items() if count}
    assert table == {"PASS": str(summary.passed), **got}
