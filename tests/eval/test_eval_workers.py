"""Worker processes: same results as in-process grading, a killed worker loses no case, a stuck
case is killed at its budget."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from eval_helpers import cli_env
from eval_test_graders import HANG, KILL, KILL_ONCE, grade_or_crash

from rewardkit.evaluation import run_math_eval, sample_path


def sample_rows() -> list[dict]:
    return [json.loads(line) for line in sample_path().read_text().splitlines()]


def outcomes(run) -> dict[str, tuple]:
    return {r.id: (r.outcome, r.reason, r.detail["parsed_answer"]) for r in run.results}


def test_worker_processes_grade_like_the_in_process_grader() -> None:
    rows = sample_rows()
    in_process = run_math_eval(rows, workers=0)
    streamed: list[str] = []
    pooled = run_math_eval(rows, workers=2, chunk_size=4, on_result=lambda r: streamed.append(r.id))
    assert outcomes(pooled) == outcomes(in_process)
    assert sorted(streamed) == sorted(row["id"] for row in rows)  # each case exactly once
    assert [r.id for r in pooled.results] == [row["id"] for row in rows]  # returned in input order


def test_a_killed_worker_loses_no_case(tmp_path: Path) -> None:
    marker = tmp_path / "killed-once"
    rows = [{"id": f"ok{i}", "response": rf"so \boxed{{{i}}}", "gold": str(i)} for i in range(12)]
    rows.insert(
        3, {"id": "dies-once", "response": rf"{KILL_ONCE}{marker} then \boxed{{5}}", "gold": "5"}
    )
    rows.insert(8, {"id": "dies-always", "response": rf"{KILL} \boxed{{5}}", "gold": "5"})
    run = run_math_eval(rows, grader=grade_or_crash, workers=2, chunk_size=4)
    by_id = {r.id: r for r in run.results}
    assert sorted(by_id) == sorted(row["id"] for row in rows)
    assert marker.exists()  # the worker really died once on this case
    assert by_id["dies-once"].passed  # ... and the retry graded it
    dead = by_id["dies-always"]
    assert dead.outcome == "HARNESS_ERROR"
    assert "SIGKILL" in dead.detail["error"]
    assert "retried once" in dead.detail["error"]
    assert all(by_id[f"ok{i}"].passed for i in range(12))  # chunk-mates of the crashes included
    assert run.summary.scored == len(rows) - 1


def test_a_case_that_overruns_its_budget_is_killed_and_the_rest_graded() -> None:
    rows = [{"id": f"ok{i}", "response": rf"\boxed{{{i}}}", "gold": str(i)} for i in range(6)]
    rows.insert(2, {"id": "stuck", "response": rf"{HANG} \boxed{{1}}", "gold": "1"})
    run = run_math_eval(rows, grader=grade_or_crash, workers=1, chunk_size=8, timeout=0.2)
    by_id = {r.id: r for r in run.results}
    stuck = by_id["stuck"]
    assert (stuck.outcome, stuck.reason) == ("WRONG_ANSWER", "timeout")
    assert "0.2 s budget" in stuck.detail["error"]
    assert all(by_id[f"ok{i}"].passed for i in range(6))


def fresh_python(script: str) -> list[str]:
    """Run `script` in a fresh interpreter (nothing loaded yet; the test graders importable);
    return its stdout lines."""
    completed = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=180,
        env=cli_env(),
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    return completed.stdout.strip().splitlines()


COLD_WORKER = """
import json, sys
from rewardkit.evaluation import run_math_eval
from rewardkit.evaluation.worker.grading import SYMBOLIC_MODULE
from eval_test_graders import grade_after_a_slow_load

plain = [{"id": f"p{i}", "response": rf"so \\boxed{{{i}}}", "gold": str(i)} for i in range(40)]
first = run_math_eval(plain, workers=2, timeout=0.1, chunk_size=4)
loaded_after_plain = SYMBOLIC_MODULE in sys.modules
rows = [{"id": f"c{i}", "response": rf"so \\boxed{{{i}}}", "gold": str(i)} for i in range(6)]
run = run_math_eval(rows, workers=1, timeout=0.1, grader=grade_after_a_slow_load, chunk_size=3)
print(json.dumps({
    "plain": sorted({r.outcome for r in first.results}),
    "loaded_after_plain": loaded_after_plain,
    "slow": [[r.id, r.outcome, r.reason] for r in run.results],
    "loaded_after_slow": SYMBOLIC_MODULE in sys.modules,
}))
"""


def test_cold_workers_hand_cases_that_need_the_symbolic_grader_to_warm_ones() -> None:
    """Workers are forked before the grader's symbolic part is loaded (~1-2 s), so the first
    results stream out at once. A run that never needs it never loads it; the first case that
    does stops its cold worker's task, the parent loads the part once, and the rest of the
    task goes to workers forked from the warm parent: the load (2 s here) is never spent in a
    case's budget (0.1 s: killed after 1.1 s), and is paid once, not once per worker."""
    outcome = json.loads(fresh_python(COLD_WORKER)[-1])
    assert outcome == {
        "plain": ["PASS"],
        "loaded_after_plain": False,
        "slow": [[f"c{i}", "PASS", "exact"] for i in range(6)],
        "loaded_after_slow": True,
    }


SWALLOWING = """
import json
from rewardkit.evaluation import run_math_eval
from eval_test_graders import grade_swallowing_everything

rows = [{"id": "poly", "response": r"so \\boxed{(x+1)^2}", "gold": "x^2+2x+1"},
        {"id": "plain", "response": r"so \\boxed{3}", "gold": "3"}]
for _cold_then_warm in range(2):
    run = run_math_eval(rows, workers=1, grader=grade_swallowing_everything, chunk_size=2)
    print(json.dumps([[r.id, r.outcome, r.reason] for r in run.results]))
"""


def test_a_grader_that_swallows_every_exception_cannot_misgrade_a_cold_workers_case() -> None:
    """The cold worker's stop is an exception raised inside the grader's import: a grader with
    a bare `except` would turn it into a verdict, so the worker also checks, after each case,
    whether the stop happened."""
    expected = [["poly", "PASS", "symbolic"], ["plain", "PASS", "exact"]]
    assert [json.loads(line) for line in fresh_python(SWALLOWING)] == [expected, expected]


def test_the_symbolic_module_name_is_the_one_the_grader_loads() -> None:
    """Cold workers are stopped at this module's import: a rename in rewardkit.math must fail
    here, not silently let every worker load the symbolic part on its own."""
    script = (
        "import sys; from rewardkit.evaluation.worker.grading import SYMBOLIC_MODULE, warm_up; "
        "before = SYMBOLIC_MODULE in sys.modules; warm_up(); "
        "print(before, SYMBOLIC_MODULE in sys.modules)"
    )
    assert fresh_python(script)[-1].split() == ["False", "True"]


COLD_IN_PROCESS = """
import json, sys
from rewardkit.evaluation import run_math_eval

rows = [{"id": "first", "response": r"so \\boxed{(x+1)^2}", "gold": "x^2+2x+1"}]
data = sys.argv[1] if len(sys.argv) > 1 else rows
run = run_math_eval(data, workers=0, timeout=0.3)
print(json.dumps([run.results[0].outcome, run.results[0].reason]))
"""


def test_a_cold_in_process_run_starts_the_symbolic_workers_before_its_first_case(
    tmp_path: Path,
) -> None:
    """In a fresh process the grader's symbolic workers take longer than a 0.3 s budget to
    start; the run starts them first, so its first symbolic comparison is decided, not a
    `timeout` caused by the harness (records and file input take different paths)."""
    path = tmp_path / "cases.jsonl"
    path.write_text(
        json.dumps({"id": "first", "response": r"so \boxed{(x+1)^2}", "gold": "x^2+2x+1"}) + "\n",
        encoding="utf-8",
    )
    for extra in ([], [str(path)]):
        completed = subprocess.run(
            [sys.executable, "-c", COLD_IN_PROCESS, *extra],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert completed.returncode == 0, completed.stderr[-2000:]
        assert json.loads(completed.stdout.strip().splitlines()[-1]) == ["PASS", "symbolic"]
