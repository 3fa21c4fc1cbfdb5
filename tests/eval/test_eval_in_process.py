"""`--workers 0` and `run_math_eval(workers=0)` (the README's in-loop example): the grader's
symbolic workers start when a case first needs them, so a run whose cases need none starts no
process at all; and a throughput below one case a second is printed as seconds per case."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from eval_helpers import cli_env, write_jsonl

from rewardkit.evaluation.main.report import format_rate

SCRIPT = """
import json, sys
import psutil
from rewardkit.evaluation.cli import main as eval_main
from rewardkit.evaluation import run_math_eval
path, how = sys.argv[1], sys.argv[2]
if how == "cli":
    status = eval_main(["math", path, "--workers", "0", "--timeout", "0.2"])
    passed = None
else:
    run = run_math_eval(path, workers=0, timeout=0.2)
    status, passed = 0, run.summary.passed
children = psutil.Process().children(recursive=True)
print(json.dumps({"status": status, "children": len(children), "passed": passed}), file=sys.stderr)
"""

TRIVIAL = [
    {"id": "a", "response": "so \\boxed{4}", "gold": "4"},
    {"id": "b", "response": "\\boxed{\\frac{1}{2}}", "gold": "0.5"},
    {"id": "c", "response": "no box", "gold": "4"},
]
SYMBOLIC = {"id": "s", "response": "\\boxed{(x+1)^2}", "gold": "x^2+2x+1"}


def _run(tmp_path: Path, rows: list[dict[str, str]], how: str) -> dict[str, int]:
    data = write_jsonl(tmp_path / "cases.jsonl", rows)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(data), how],
        capture_output=True,
        text=True,
        timeout=300,
        env=cli_env(),
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stderr.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_the_cli_starts_no_process_for_cases_that_need_no_symbolic_work(tmp_path: Path) -> None:
    outcome = _run(tmp_path, TRIVIAL, "cli")
    assert outcome["status"] == 0
    assert outcome["children"] == 0


def test_the_python_api_starts_no_process_for_cases_that_need_no_symbolic_work(
    tmp_path: Path,
) -> None:
    outcome = _run(tmp_path, TRIVIAL, "api")
    assert outcome["passed"] == 2
    assert outcome["children"] == 0


def test_the_first_case_that_needs_them_starts_them_outside_its_budget(tmp_path: Path) -> None:
    """The symbolic case comes after a fast one, with a short budget: the workers are started
    when it is met, and it is graded once they run (a PASS, never a `timeout` verdict)."""
    outcome = _run(tmp_path, [TRIVIAL[0], SYMBOLIC, TRIVIAL[1]], "api")
    assert outcome["passed"] == 3
    assert outcome["children"] >= 1


def test_symbolic_case_first_in_a_block_through_the_cli(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    data = write_jsonl(tmp_path / "cases.jsonl", [SYMBOLIC, *TRIVIAL, SYMBOLIC | {"id": "s2"}])
    output = tmp_path / "results.jsonl"
    done = run_cli(str(data), "--workers", "0", "--timeout", "0.2", "--output", str(output))
    assert done.returncode == 0, done.stderr
    rows = {row["id"]: row for row in map(json.loads, output.read_text().splitlines())}
    assert [row["id"] for row in map(json.loads, output.read_text().splitlines())] == [
        "s",
        "a",
        "b",
        "c",
        "s2",
    ]
    assert rows["s"]["passed"] is True
    assert rows["s2"]["passed"] is True


def test_rates_below_one_case_a_second_read_as_seconds_per_case() -> None:
    assert format_rate(4719.3) == "4,719 cases/s"
    assert format_rate(2.54) == "2.5 cases/s"
    assert format_rate(1 / 2.6) == "2.6 s/case"
    assert format_rate(0.001) == "1,000.0 s/case"


def test_a_slow_run_prints_seconds_per_case(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    """One case whose grader first takes 2 s (`grade_after_a_slow_load`): under one a second."""
    data = write_jsonl(tmp_path / "cases.jsonl", [TRIVIAL[0]])
    report = tmp_path / "report.json"
    grader = "eval_test_graders:grade_after_a_slow_load"
    done = run_cli(str(data), "--workers", "0", "--grader", grader, "--report", str(report))
    assert done.returncode == 0, done.stderr
    assert "s/case (in-process)" in done.stdout
    assert "0 cases/s" not in done.stdout
    assert 0 < json.loads(report.read_text())["timings"]["cases_per_second"] < 1
