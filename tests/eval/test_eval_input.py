"""Input handling: field names, malformed lines (file:line), --skip-bad, --limit, exit statuses."""

from __future__ import annotations

from pathlib import Path

import pytest
from eval_helpers import read_jsonl, write_jsonl

from rewardkit.evaluation import (
    EvalConfigError,
    EvalInputError,
    FieldNames,
    read_cases,
    run_math_eval,
)
from rewardkit.evaluation.inputs.cases import DecidedCase


def test_gold_falls_back_to_answer_and_numbers_become_text(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "in.jsonl",
        [{"id": 1, "response": "r", "answer": 42}, "", {"id": "b", "response": "r", "gold": "x"}],
    )
    cases = list(read_cases(path))
    assert [(c.id, c.gold, c.line) for c in cases] == [("1", "42", 1), ("b", "x", 3)]


def test_custom_field_names(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "in.jsonl", [{"uid": "q1", "output": "text", "target": "7"}])
    (case,) = read_cases(path, fields=FieldNames(id="uid", response="output", gold=("target",)))
    assert (case.id, case.response, case.gold) == ("q1", "text", "7")


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        ("{not json", "not valid JSON"),
        ('["a list"]', "expected a JSON object"),
        ('{"response": "r", "gold": "1"}', "missing id field 'id'"),
        ('{"id": "x", "gold": "1"}', "response field 'response' must be a string"),
        ('{"id": "x", "response": "r"}', "missing gold field"),
        ('{"id": "a", "response": "r", "gold": "1"}', "duplicate id 'a' (first on line 1)"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path: Path, bad_line: str, message: str) -> None:
    path = write_jsonl(tmp_path / "in.jsonl", [{"id": "a", "response": "r", "gold": "1"}, bad_line])
    with pytest.raises(EvalInputError) as caught:
        list(read_cases(path))
    assert str(caught.value).startswith(f"{path}:2: ")
    assert message in str(caught.value)
    assert caught.value.line == 2


def test_skip_bad_turns_a_malformed_line_into_a_harness_error_case(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "in.jsonl",
        [
            {"id": "a", "response": "r", "gold": "1"},
            "{oops",
            {"id": "c", "response": "r", "gold": "1"},
        ],
    )
    cases = list(read_cases(path, skip_bad=True))
    assert [c.id for c in cases] == ["a", "line:2", "c"]
    bad = cases[1]
    assert isinstance(bad, DecidedCase)
    assert bad.tag.value == "HARNESS_ERROR"
    assert f"{path}:2" in bad.error


def test_cli_stops_on_a_malformed_line_with_exit_2(tmp_path: Path, run_cli) -> None:
    path = write_jsonl(
        tmp_path / "in.jsonl", [{"id": "a", "response": r"\boxed{1}", "gold": "1"}, "{oops"]
    )
    proc = run_cli(str(path), "--workers", "0")
    assert proc.returncode == 2
    assert f"{path}:2: not valid JSON" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_cli_skip_bad_completes_and_records_the_line(tmp_path: Path, run_cli) -> None:
    path = write_jsonl(
        tmp_path / "in.jsonl", [{"id": "a", "response": r"\boxed{1}", "gold": "1"}, "{oops"]
    )
    out = tmp_path / "out.jsonl"
    proc = run_cli(str(path), "--workers", "0", "--skip-bad", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    records = {r["id"]: r for r in read_jsonl(out)}
    assert records["line:2"]["tag"] == "HARNESS_ERROR"
    assert f"{path}:2" in records["line:2"]["detail"]["error"]
    assert records["a"]["passed"] is True


def test_cli_unreadable_input_and_usage_errors_exit_2(tmp_path: Path, run_cli) -> None:
    missing = run_cli(str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2
    assert "nope.jsonl: cannot read input" in missing.stderr
    assert run_cli("--policy", "sloppy").returncode == 2
    assert run_cli("--resume").returncode == 2
    assert run_cli("--model", "gpt-4o", "x.jsonl").returncode == 2  # not openai:MODEL


def test_limit_counts_cases(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "in.jsonl", [{"id": str(i), "response": "r", "gold": "1"} for i in range(10)]
    )
    assert [c.id for c in read_cases(path, limit=3)] == ["0", "1", "2"]


def test_limit_0_says_so_rather_than_an_empty_input(tmp_path: Path, run_cli) -> None:
    """`--limit 0` said "the input has no cases" of an input of 55 (issue 26 item 8)."""
    proc = run_cli("--workers", "0", "--limit", "0")
    assert proc.returncode == 3, proc.stderr
    assert "nothing could be scored: --limit 0 grades no case" in proc.stderr
    assert "no cases" not in proc.stderr


def test_one_case_is_one_case(tmp_path: Path, run_cli) -> None:
    """It said "1 cases graded" (issue 26 item 12)."""
    path = write_jsonl(tmp_path / "in.jsonl", [{"id": "a", "response": r"\boxed{1}", "gold": "1"}])
    proc = run_cli(str(path), "--workers", "0")
    assert proc.returncode == 0, proc.stderr
    assert "1 case graded in" in proc.stdout


@pytest.mark.parametrize("workers", [0, 2])
def test_messages_name_the_python_argument_or_the_flag(
    tmp_path: Path, run_cli, workers: int
) -> None:
    """`run_math_eval(...)` told Python callers to use `--gold-field` (issue 26 item 10): a
    message names what its reader can change, in the worker processes too."""
    path = write_jsonl(tmp_path / "in.jsonl", [{"id": "a", "response": "r", "target": "1"}])
    with pytest.raises(EvalInputError, match=r"choose one with fields=FieldNames\(gold="):
        run_math_eval(path, workers=workers)
    proc = run_cli(str(path), "--workers", str(workers))
    assert proc.returncode == 2, proc.stderr
    assert "(choose one with --gold-field)" in proc.stderr
    with pytest.raises(EvalConfigError, match="force_resume=True goes with resume=True"):
        run_math_eval(path, force_resume=True)
    assert "--force-resume goes with --resume" in run_cli("--force-resume", "-o", "x").stderr
