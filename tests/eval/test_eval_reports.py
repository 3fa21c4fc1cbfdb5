"""`rewardkit eval math` on the shipped sample: summary table, results file, JSON report schema."""

from __future__ import annotations

import json

import pytest
from eval_helpers import read_jsonl

from rewardkit.evaluation import SCHEMA_VERSION, sample_path
from rewardkit.runtime.define.failures import FailureTag


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One real CLI run on the sample (no input file), as right after `pip install`."""
    import subprocess

    from eval_helpers import cli_command

    where = tmp_path_factory.mktemp("sample")
    proc = subprocess.run(
        cli_command("--workers", "2", "--output", "out.jsonl", "--report", "report.json"),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=where,
    )
    return {"proc": proc, "dir": where}


def test_sample_run_prints_the_summary_table_and_is_quiet_on_stderr(sample_run: dict) -> None:
    proc = sample_run["proc"]
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # no progress bar when stderr is not a terminal
    out = proc.stdout
    assert "rewardkit eval math: <sample math_sample.jsonl>" in out
    for outcome in ("PASS", *(tag.value for tag in FailureTag)):
        assert outcome in out
    assert "score" in out
    assert "cases/s" in out
    report = json.loads((sample_run["dir"] / "report.json").read_text())
    assert f"{report['score']:.4f}" in out


def test_report_schema(sample_run: dict) -> None:
    report = json.loads((sample_run["dir"] / "report.json").read_text())
    assert report["schema_version"] == SCHEMA_VERSION
    assert set(report) >= {
        "schema_version",
        "score",
        "n",
        "passed",
        "scored",
        "failure_counts",
        "reason_counts",
        "config",
        "timings",
    }
    assert set(report["failure_counts"]) == {tag.value for tag in FailureTag}
    assert report["n"] == len(sample_path().read_text().splitlines())
    assert report["passed"] + sum(report["failure_counts"].values()) == report["n"]
    excluded = report["failure_counts"]["ADAPTER_ERROR"] + report["failure_counts"]["HARNESS_ERROR"]
    assert report["scored"] == report["n"] - excluded
    assert report["score"] == pytest.approx(report["passed"] / report["scored"])
    assert sum(report["reason_counts"].values()) == report["n"]
    assert report["config"]["policy"] == "lenient"
    assert report["config"]["extract"] == "boxed"
    assert report["config"]["timeout"] == 1.0
    timings = report["timings"]
    assert timings["new_cases"] == report["n"]
    assert timings["resumed_cases"] == 0
    assert timings["wall_seconds"] > 0


def test_results_file_has_one_documented_record_per_case(sample_run: dict) -> None:
    records = read_jsonl(sample_run["dir"] / "out.jsonl")
    ids = [r["id"] for r in records]
    assert (
        len(ids)
        == len(set(ids))
        == json.loads((sample_run["dir"] / "report.json").read_text())["n"]
    )
    for record in records:
        assert set(record) >= {"id", "passed", "tag", "detail"}
        assert set(record["detail"]) >= {"parsed_answer", "expected", "reason", "error"}
        assert record["passed"] == (record["tag"] is None)


def test_sample_exercises_every_tag_and_grades_as_labelled(sample_run: dict) -> None:
    records = {r["id"]: r for r in read_jsonl(sample_run["dir"] / "out.jsonl")}
    labelled = {row["id"]: row for row in map(json.loads, sample_path().read_text().splitlines())}
    outcomes = {case_id: (r["tag"] or "PASS") for case_id, r in records.items()}
    assert set(outcomes.values()) == {"PASS", *(tag.value for tag in FailureTag)}
    mismatches = {
        case_id: (row["expect"], outcomes[case_id], records[case_id]["detail"])
        for case_id, row in labelled.items()
        if outcomes[case_id] != row["expect"]
    }
    assert mismatches == {}


def test_progress_bar_goes_to_stderr_only_when_it_is_a_terminal(tmp_path) -> None:
    import os
    import pty
    import subprocess

    from eval_helpers import cli_command

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        cli_command("--workers", "0"), stdout=subprocess.PIPE, stderr=slave, cwd=tmp_path
    )
    os.close(slave)
    seen = b""
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        seen += data
    stdout, _ = proc.communicate(timeout=120)
    os.close(master)
    assert proc.returncode == 0
    assert b"grading" in seen  # the rich progress bar, on the terminal
    assert b"grading" not in stdout
    assert b"score" in stdout  # the summary table, on stdout
