"""Input handling: field names, malformed lines (file:line), --skip-bad, --limit, exit statuses."""

from __future__ import annotations

from pathlib import Path

import pytest
from eval_helpers import read_jsonl, write_jsonl

from rewardkit.evaluation import EvalInputError, FieldNames, read_cases
from rewardkit.evaluation.cases import DecidedCase


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
