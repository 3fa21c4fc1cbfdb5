"""Files graded in worker processes: the main process ships raw lines, workers parse, validate,
grade and serialise them. These tests hold that path to the behaviour of in-process grading."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eval_helpers import read_jsonl, write_jsonl
from eval_test_graders import RAISE, SLOW, grade_or_crash

from rewardkit.evaluation import EvalInputError, run_math_eval, sample_path
from rewardkit.evaluation.inputs.cases import FieldNames
from rewardkit.evaluation.worker.grading import GradeOptions
from rewardkit.evaluation.worker.lines import LineGrader, LineSettings


def _comparable(records: list[dict]) -> list[dict]:
    """Results-file records without the timing, in input order."""
    return sorted(
        ({k: v for k, v in record.items() if k != "seconds"} for record in records),
        key=lambda record: record["line"],
    )


@pytest.mark.parametrize(
    ("workers", "chunk_size"),
    [(2, None), (2, 3), (0, None)],
    ids=["workers-spans", "workers-counted-blocks", "in-process"],
)
def test_file_runs_write_the_same_lines_as_grading_parsed_records(
    tmp_path: Path, workers: int, chunk_size: int | None
) -> None:
    """Records go through the general path (parse, `grade_case`, `CaseResult.to_line`); a file
    goes through workers' fast path (raw lines, cached serialised verdicts): same output."""
    records = read_jsonl(sample_path())
    assert len(records) == len(sample_path().read_text(encoding="utf-8").splitlines())
    reference = run_math_eval(records, workers=0, output=tmp_path / "records.jsonl")
    run = run_math_eval(
        sample_path(), workers=workers, chunk_size=chunk_size, output=tmp_path / "file.jsonl"
    )
    assert _comparable(read_jsonl(tmp_path / "file.jsonl")) == _comparable(
        read_jsonl(tmp_path / "records.jsonl")
    )
    assert run.summary == reference.summary
    assert [
        (r.id, r.outcome, r.reason, dict(r.detail), r.line, r.response) for r in run.results
    ] == [
        (r.id, r.outcome, r.reason, dict(r.detail), r.line, r.response) for r in reference.results
    ]


def test_blank_lines_and_a_missing_final_newline_keep_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    rows = [
        {"id": "a", "response": r"\boxed{1}", "gold": "1"},
        {"id": "b", "response": "x", "gold": "2"},
    ]
    path.write_text("\n" + json.dumps(rows[0]) + "\n  \n" + json.dumps(rows[1]), encoding="utf-8")
    run = run_math_eval(path, workers=2, output=tmp_path / "out.jsonl")
    assert [(r.id, r.line, r.outcome) for r in run.results] == [
        ("a", 2, "PASS"),
        ("b", 4, "NO_ANSWER"),
    ]
    assert [r.response for r in run.results] == [rows[0]["response"], "x"]


def _rows(n: int) -> list[dict | str]:
    return [{"id": f"c{i}", "response": rf"\boxed{{{i}}}", "gold": str(i)} for i in range(n)]


def test_a_malformed_line_in_a_worker_stops_the_run_naming_the_earliest(tmp_path: Path) -> None:
    rows = _rows(40)
    rows[12] = "{not json"
    rows[30] = '["a list"]'
    path = write_jsonl(tmp_path / "in.jsonl", rows)
    with pytest.raises(EvalInputError) as caught:
        run_math_eval(path, workers=2, chunk_size=4, output=tmp_path / "out.jsonl")
    assert str(caught.value).startswith(f"{path}:13: not valid JSON")
    assert caught.value.line == 13


def test_lines_the_fast_parser_refuses_are_read_as_json_reads_them(tmp_path: Path) -> None:
    """Workers parse lines with orjson, which refuses NaN, a lone surrogate escape and a
    byte-order mark, and reads a big integer as a float; such lines take `json`'s path and
    give what grading the records `json.loads` reads from them gives."""
    rows: list[dict | str] = [
        '{"id": "nan", "response": "\\\\boxed{1}", "gold": "1", "score": NaN}',
        '{"id": "surrogate", "response": "\\ud800 so \\\\boxed{2}", "gold": "2"}',
        '{"id": 123456789012345678901234567890, "response": "\\\\boxed{3}", "gold": "3"}',
        '{"id": "big-gold", "response": "\\\\boxed{123456789012345678901234567890}", '
        '"gold": 123456789012345678901234567890}',
        {"id": "plain", "response": r"\boxed{5}", "gold": "5"},
    ]
    path = write_jsonl(tmp_path / "in.jsonl", rows)
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    run_math_eval(records, workers=0, output=tmp_path / "records.jsonl")
    run = run_math_eval(path, workers=2, output=tmp_path / "workers.jsonl")
    assert _comparable(read_jsonl(tmp_path / "workers.jsonl")) == _comparable(
        read_jsonl(tmp_path / "records.jsonl")
    )
    assert [(r.id, r.outcome) for r in run.results] == [
        ("nan", "PASS"),
        ("surrogate", "PASS"),
        ("123456789012345678901234567890", "PASS"),
        ("big-gold", "PASS"),
        ("plain", "PASS"),
    ]
    assert run.results[1].response == "\ud800 so \\boxed{2}"


def test_a_line_that_is_not_utf8_is_malformed_with_its_line_number(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "in.jsonl", _rows(3))
    with open(path, "ab") as handle:
        handle.write(b'{"id": "bad", "response": "\xff\xfe", "gold": "1"}\n')
    with pytest.raises(EvalInputError, match=r"in\.jsonl:4: not UTF-8"):
        run_math_eval(path, workers=2)
    run = run_math_eval(path, workers=2, skip_bad=True)
    last = run.results[-1]
    assert (last.id, last.tag.value, last.line) == ("line:4", "HARNESS_ERROR", 4)
    assert f"{path}:4" in last.detail["error"]


@pytest.mark.parametrize("slow_first_chunk", [False, True], ids=["in-order", "out-of-order"])
def test_a_duplicate_id_is_the_later_line_whichever_chunk_finishes_first(
    tmp_path: Path, slow_first_chunk: bool
) -> None:
    first = rf"{SLOW} \boxed{{1}}" if slow_first_chunk else r"\boxed{1}"
    rows: list[dict | str] = [
        {"id": "a", "response": first, "gold": "1"},
        {"id": "dup", "response": r"\boxed{2}", "gold": "2"},
        {"id": "x", "response": r"\boxed{3}", "gold": "3"},
        {"id": "dup", "response": r"\boxed{5}", "gold": "4"},
    ]
    path = write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out.jsonl"
    with pytest.raises(
        EvalInputError, match=r"in\.jsonl:4: duplicate id 'dup' \(first on line 2\)"
    ):
        run_math_eval(path, workers=2, chunk_size=2, grader=grade_or_crash, output=out)
    run = run_math_eval(
        path,
        workers=2,
        chunk_size=2,
        grader=grade_or_crash,
        output=out,
        skip_bad=True,
        overwrite=True,
    )
    expected = [
        ("a", 1, "PASS"),
        ("dup", 2, "PASS"),
        ("x", 3, "PASS"),
        ("line:4", 4, "HARNESS_ERROR"),
    ]
    assert [(r.id, r.line, r.outcome) for r in run.results] == expected
    assert "duplicate id 'dup' (first on line 2)" in run.results[3].detail["error"]
    written = sorted((r["id"], r["line"], r["tag"] or "PASS") for r in read_jsonl(out))
    assert written == sorted(expected)  # the superseded line-4 result is not in the file
    assert run.summary.n == 4
    assert run.summary.failure_counts["HARNESS_ERROR"] == 1


def test_a_grader_exception_in_a_worker_is_a_harness_error_naming_it(tmp_path: Path) -> None:
    rows = _rows(3)
    rows[1] = {"id": "boom", "response": rf"{RAISE} \boxed{{1}}", "gold": "1"}
    path = write_jsonl(tmp_path / "in.jsonl", rows)
    run = run_math_eval(path, workers=1, grader=grade_or_crash)
    boom = run.results[1]
    assert (boom.id, boom.outcome, boom.reason) == ("boom", "HARNESS_ERROR", "grader_error")
    assert boom.detail["error"] == "grader raised ZeroDivisionError: grader bug"
    assert [r.outcome for r in run.results] == ["PASS", "HARNESS_ERROR", "PASS"]


def test_limit_counts_cases_not_lines_in_worker_runs(tmp_path: Path) -> None:
    rows = _rows(6)
    rows.insert(1, "")
    path = write_jsonl(tmp_path / "in.jsonl", rows)
    run = run_math_eval(path, workers=2, limit=3)
    assert [(r.id, r.line) for r in run.results] == [("c0", 1), ("c1", 3), ("c2", 4)]


def test_resume_in_workers_skips_done_ids_and_still_checks_them_for_duplicates(
    tmp_path: Path,
) -> None:
    path = write_jsonl(tmp_path / "in.jsonl", _rows(8))
    out = tmp_path / "out.jsonl"
    first = run_math_eval(path, workers=2, limit=5, output=out)
    assert first.summary.n == 5
    seen: list[str] = []
    second = run_math_eval(
        path,
        workers=2,
        output=out,
        resume=True,
        html=tmp_path / "r.html",
        on_result=lambda r: seen.append(r.id),
    )
    assert sorted(seen) == ["c5", "c6", "c7"]  # only the new cases were graded
    assert [r.id for r in second.results] == [f"c{i}" for i in range(8)]
    assert all(r.response == rf"\boxed{{{i}}}" for i, r in enumerate(second.results))
    assert second.timings.resumed_cases == 5
    assert sorted(r["id"] for r in read_jsonl(out)) == [f"c{i}" for i in range(8)]
    with open(path, "a", encoding="utf-8") as handle:  # a duplicate of a done id
        handle.write(json.dumps({"id": "c1", "response": "x", "gold": "1"}) + "\n")
    # (the input grew: resuming it is forced, as the results file was written for the old one)
    with pytest.raises(EvalInputError, match=r"in\.jsonl:9: duplicate id 'c1' \(first on line 2\)"):
        run_math_eval(path, workers=2, output=out, resume=True, force_resume=True)


def test_a_worker_reads_exactly_its_span_of_the_file(tmp_path: Path) -> None:
    """Workers read a span (first line, offset, length) of the input as lines: spans of one
    line each, a one-byte blank line and a last line without a newline included, give every
    case once with its own line number."""
    rows = [
        json.dumps({"id": f"c{i}", "response": rf"\boxed{{{i}}}", "gold": str(i)}) for i in range(3)
    ]
    content = f"{rows[0]}\n\n{rows[1]}\n \n{rows[2]}".encode()
    path = tmp_path / "in.jsonl"
    path.write_bytes(content)
    spans, offset = [], 0
    for number, line in enumerate(content.splitlines(keepends=True), start=1):
        spans.append((number, offset, len(line)))
        offset += len(line)
    settings = LineSettings(
        path=str(path),
        fields=FieldNames(),
        options=GradeOptions(),
        skip_bad=False,
        keep_responses=True,
    )
    grader = LineGrader(settings, set())
    try:
        batches = [grader.grade_block(span) for span in spans]
        whole = grader.grade_block((1, 0, len(content)))
    finally:
        grader.close()
    graded = [(i, line) for batch in batches for i, line in zip(batch.ids, batch.lines)]
    assert graded == [("c0", 1), ("c1", 3), ("c2", 5)]
    assert list(zip(whole.ids, whole.lines)) == graded
    assert whole.responses == [r"\boxed{0}", r"\boxed{1}", r"\boxed{2}"]
