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
