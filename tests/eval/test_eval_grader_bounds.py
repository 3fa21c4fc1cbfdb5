"""A grader's own time on our side (`harness_seconds`: a served reward's HTTP requests) is not
the case's budget, and a worker killed past it is our failure, never a verdict. Through the CLI."""

from __future__ import annotations

from pathlib import Path

from eval_helpers import read_jsonl, write_jsonl
from eval_test_graders import HANG


def test_a_grader_that_hangs_past_its_own_bound_is_a_harness_error(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    rows = [
        {"id": "ok", "response": "\\boxed{4}", "gold": "4"},
        {"id": "hung", "response": f"{HANG} \\boxed{{4}}", "gold": "4"},
    ]
    data = write_jsonl(tmp_path / "cases.jsonl", rows)
    output = tmp_path / "results.jsonl"
    done = run_cli(
        str(data),
        "--workers",
        "1",
        "--grader",
        "eval_test_graders:slow_service",
        "--output",
        str(output),
    )
    assert done.returncode == 0, done.stderr
    results = {row["id"]: row for row in read_jsonl(output)}
    assert results["ok"]["passed"] is True
    hung = results["hung"]
    assert hung["tag"] == "HARNESS_ERROR"
    assert hung["detail"]["reason"] == "grader_hung"
    assert "did not return within" in hung["detail"]["error"]
    assert "graded by eval_test_graders:SlowService instance" in done.stdout
