"""Hostile input and refused outputs (issue 18 items 1, 3-5, 18; issue 17 items 8, 9): every
line of the corpus in hostile_inputs.py either finishes as a case or is a clean exit 2 naming
file:line; no run overwrites its input or an earlier run's results; the exit status says when
nothing could be scored."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from eval_helpers import read_jsonl
from hostile_inputs import FINISHES, MALFORMED, ordinary_line

from rewardkit.evaluation import EvalConfigError, EvalInputError, read_cases, run_math_eval
from rewardkit.evaluation.inputs.cases import DecidedCase
from rewardkit.evaluation.main.executors import default_workers


def write_lines(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


@pytest.mark.parametrize("workers", ["0", "2"])
def test_lone_surrogates_finish_and_are_escaped_in_every_output(
    tmp_path: Path, run_cli, workers: str
) -> None:
    """A `\\udc80` escape in a response, gold or id once raised UnicodeEncodeError, lost the
    batch's good cases, and killed every resume at the same place; --html crashed on it."""
    path = write_lines(
        tmp_path / "in.jsonl", [ordinary_line("a"), *FINISHES.values(), ordinary_line("b")]
    )
    out, report, html = tmp_path / "out.jsonl", tmp_path / "r.json", tmp_path / "r.html"
    args = [str(path), "--workers", workers, "--output", str(out), "--report", str(report)]
    proc = run_cli(*args, "--html", str(html))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    for written in (out, report, html):
        written.read_bytes().decode("utf-8")  # strict: valid UTF-8
    records = {record["id"]: record for record in read_jsonl(out)}
    assert len(records) == 2 + len(FINISHES)
    assert "id-\udc80" in records  # the escape reads back as the same id
    assert records["a"]["passed"]
    assert records["b"]["passed"]
    assert records["s-response"]["passed"]
    assert "\\udc80" in out.read_text(encoding="utf-8")

    resumed = run_cli(*args, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(report.read_text())["timings"]["new_cases"] == 0
    assert json.loads(report.read_text())["n"] == 2 + len(FINISHES)


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_hostile_line_is_exit_2_naming_file_and_line(tmp_path: Path, run_cli, name: str) -> None:
    raw, message = MALFORMED[name]
    path = write_lines(tmp_path / "in.jsonl", [ordinary_line("a"), raw, ordinary_line("b")])
    proc = run_cli(str(path), "--workers", "1", "--output", str(tmp_path / "out.jsonl"))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"{path}:2: " in proc.stderr
    assert message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    with pytest.raises(EvalInputError, match=f"{path.name}:2: .*{message}"):
        list(read_cases(path))


@pytest.mark.parametrize("workers", ["0", "2"])
def test_hostile_lines_are_harness_errors_under_skip_bad(
    tmp_path: Path, run_cli, workers: str
) -> None:
    bad = [raw for raw, _ in MALFORMED.values()]
    path = write_lines(tmp_path / "in.jsonl", [ordinary_line("a"), *bad, ordinary_line("b")])
    out = tmp_path / "out.jsonl"
    proc = run_cli(
        str(path),
        "--workers",
        workers,
        "--skip-bad",
        "--output",
        str(out),
        "--html",
        str(tmp_path / "r.html"),
    )
    assert proc.returncode == 0, proc.stderr
    records = {record["id"]: record for record in read_jsonl(out)}
    assert records["a"]["passed"]
    assert records["b"]["passed"]
    for number, (_raw, message) in enumerate(MALFORMED.values(), start=2):
        record = records[f"line:{number}"]
        assert record["tag"] == "HARNESS_ERROR"
        assert f"{path}:{number}: " in record["detail"]["error"]
        assert message in record["detail"]["error"]
    cases = list(read_cases(path, skip_bad=True))
    assert [case.id for case in cases if isinstance(case, DecidedCase)] == [
        f"line:{n}" for n in range(2, 2 + len(MALFORMED))
    ]


# --- outputs that would destroy something -------------------------------------------------


def two_cases(tmp_path: Path) -> Path:
    return write_lines(tmp_path / "in.jsonl", [ordinary_line("a"), ordinary_line("b", 2)])


@pytest.mark.parametrize(
    "layout",
    [
        "output-is-input",
        "output-is-symlink-to-input",
        "report-is-input",
        "report-is-output",
        "html-is-report",
        "html-is-hard-link-to-output",
    ],
)
def test_two_files_of_a_run_that_are_one_file_are_refused(
    tmp_path: Path, run_cli, layout: str
) -> None:
    """`--output` equal to the input (or a symlink to it) once destroyed the input with exit 0."""
    data = two_cases(tmp_path)
    original = data.read_bytes()
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"")  # an empty results file exists (the hard link needs a target)
    args = {"--output": str(out)}
    if layout == "output-is-input":
        args["--output"] = str(data)
    elif layout == "output-is-symlink-to-input":
        (tmp_path / "link.jsonl").symlink_to(data)
        args["--output"] = str(tmp_path / "link.jsonl")
    elif layout == "report-is-input":
        args["--report"] = str(data)
    elif layout == "report-is-output":
        args["--report"] = str(out)
    elif layout == "html-is-report":
        args["--report"] = args["--html"] = str(tmp_path / "r")
    else:
        os.link(out, tmp_path / "hard.html")
        args["--html"] = str(tmp_path / "hard.html")
    flat = [item for pair in args.items() for item in pair]
    proc = run_cli(str(data), "--workers", "0", *flat)
    assert proc.returncode == 2, proc.stderr
    assert "are the same file" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert data.read_bytes() == original


def test_an_existing_results_file_needs_resume_or_overwrite(tmp_path: Path, run_cli) -> None:
    """Forgetting --resume after Ctrl-C once overwrote the partial results silently."""
    data = two_cases(tmp_path)
    out = tmp_path / "out.jsonl"
    assert run_cli(str(data), "--workers", "0", "--output", str(out)).returncode == 0
    before = out.read_bytes()
    again = run_cli(str(data), "--workers", "0", "--output", str(out))
    assert again.returncode == 2
    assert "--resume" in again.stderr
    assert "--overwrite" in again.stderr
    assert out.read_bytes() == before
    both = run_cli(str(data), "--workers", "0", "--output", str(out), "--resume", "--overwrite")
    assert both.returncode == 2
    replaced = run_cli(str(data), "--workers", "0", "--output", str(out), "--overwrite")
    assert replaced.returncode == 0, replaced.stderr
    assert len(read_jsonl(out)) == 2
    with pytest.raises(EvalConfigError, match=r"resume=True .* overwrite=True"):  # Python's names
        run_math_eval(data, workers=0, output=out)
    out.write_bytes(b"")  # an empty file is nothing to lose
    assert run_math_eval(data, workers=0, output=out).summary.n == 2


def test_nothing_to_score_has_its_own_exit_status(tmp_path: Path, run_cli) -> None:
    """An empty input, or only ADAPTER_ERROR/HARNESS_ERROR cases, once exited 0 with score n/a."""
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n  \n", encoding="utf-8")
    for workers in ("0", "2"):
        proc = run_cli(str(empty), "--workers", workers, "--report", str(tmp_path / "e.json"))
        assert proc.returncode == 3, proc.stderr
        assert "nothing could be scored: the input has no cases" in proc.stderr
        assert json.loads((tmp_path / "e.json").read_text())["n"] == 0
    errors = tmp_path / "errors.jsonl"
    errors.write_text(
        json.dumps({"id": "down", "response": "", "gold": "1", "error": "503 from endpoint"})
        + "\n"
        + json.dumps({"id": "bad-gold", "response": r"\boxed{1}", "gold": ""})
        + "\n",
        encoding="utf-8",
    )
    proc = run_cli(str(errors), "--workers", "1", "--report", str(tmp_path / "r.json"))
    assert proc.returncode == 3, proc.stderr
    assert "all 2 cases are ADAPTER_ERROR or HARNESS_ERROR" in proc.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["score"] is None
    assert (
        report["failure_counts"]["ADAPTER_ERROR"] == report["failure_counts"]["HARNESS_ERROR"] == 1
    )
    assert run_cli(str(two_cases(tmp_path)), "--limit", "0", "--workers", "0").returncode == 3


def test_more_workers_than_cores_are_capped_with_a_warning(tmp_path: Path, run_cli) -> None:
    """`--workers 100000` once started 1,365 processes in 12 s."""
    cores = default_workers()
    proc = run_cli(str(two_cases(tmp_path)), "--workers", "100000", "--report", "r.json")
    assert proc.returncode == 0, proc.stderr
    assert f"--workers 100000 is more than the {cores} core" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    executor = json.loads((tmp_path / "r.json").read_text())["timings"]["executor"]
    assert executor == f"{cores} worker process{'es' if cores > 1 else ''}"
    with pytest.warns(RuntimeWarning, match=rf"workers={cores + 1} is more than the"):
        run_math_eval(two_cases(tmp_path), workers=cores + 1)
