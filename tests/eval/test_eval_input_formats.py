"""What `rewardkit eval math` says about input it cannot take, through the real CLI: a JSON
array and a compressed file are named as such with the way on (not "not valid JSON" / "not
UTF-8"), a usage error found after parsing shows the task's usage, and a malformed line whose
id can be read is listed under that id (not `line:N`)."""

from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path

import pytest
from eval_helpers import cli_command, cli_env, read_jsonl, write_jsonl

CASE = {"id": "q1", "response": "\\boxed{1}", "gold": "1"}


def test_a_bad_model_spec_shows_the_task_usage(run_cli) -> None:  # type: ignore[no-untyped-def]
    done = run_cli("--model", "gpt-4")
    assert done.returncode == 2
    assert done.stderr.startswith("usage: rewardkit eval math ")
    assert "rewardkit eval math: error: --model 'gpt-4': expected openai:MODEL" in done.stderr
    assert "{math}" not in done.stderr


@pytest.mark.parametrize(
    "text", [json.dumps([CASE], indent=1), json.dumps([CASE]), "\n\n  " + json.dumps([CASE])]
)
def test_a_json_array_is_named_and_jsonl_asked_for(tmp_path: Path, run_cli, text: str) -> None:  # type: ignore[no-untyped-def]
    data = tmp_path / "cases.json"
    data.write_text(text + "\n")
    done = run_cli(str(data), "--workers", "0")
    assert done.returncode == 2
    assert "a JSON array (a .json file), and rewardkit eval reads JSONL" in done.stderr
    assert f"jq -c '.[]' {data}" in done.stderr
    assert "not valid JSON" not in done.stderr
    line = text[: text.index("[")].count("\n") + 1
    assert f"{data}:{line}: a JSON array" in done.stderr


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_gzip_file_is_named_with_how_to_decompress_it(
    tmp_path: Path, run_cli, workers: str
) -> None:  # type: ignore[no-untyped-def]
    data = tmp_path / "cases.jsonl.gz"
    data.write_bytes(gzip.compress((json.dumps(CASE) + "\n").encode()))
    done = run_cli(str(data), "--workers", workers)
    assert done.returncode == 2
    assert "gzip-compressed, and rewardkit eval reads JSONL text" in done.stderr
    assert f"gunzip -c {data} | rewardkit eval math /dev/stdin" in done.stderr
    assert "UTF-8" not in done.stderr


def test_a_gzip_stream_on_stdin_is_named_too(tmp_path: Path) -> None:
    done = subprocess.run(
        cli_command("/dev/stdin", "--workers", "0"),
        input=gzip.compress((json.dumps(CASE) + "\n").encode()),
        capture_output=True,
        timeout=120,
        env=cli_env(),
    )
    assert done.returncode == 2
    assert b"gzip-compressed data" in done.stderr
    assert b"decompress it before it is piped in" in done.stderr


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_malformed_line_is_listed_under_its_id(tmp_path: Path, run_cli, workers: str) -> None:  # type: ignore[no-untyped-def]
    rows = [
        CASE,
        {"id": "q2", "response": 5, "gold": "1"},  # wrong type: its id is known
        '{"id": "q3", "response": "x" "gold": 1}',  # not JSON: no id can be read
        {"id": "q1", "response": 7, "gold": "1"},  # malformed, and its id is taken
    ]
    data = write_jsonl(tmp_path / "cases.jsonl", rows)
    output = tmp_path / "results.jsonl"
    done = run_cli(str(data), "--workers", workers, "--skip-bad", "--output", str(output))
    assert done.returncode == 0, done.stderr
    results = {row["line"]: row for row in read_jsonl(output)}
    assert [results[line]["id"] for line in (1, 2, 3, 4)] == ["q1", "q2", "line:3", "line:4"]
    assert results[2]["tag"] == "HARNESS_ERROR"
    assert (
        "cases.jsonl:2: case 'q2': response field 'response' must be a string"
        in results[2]["detail"]["error"]
    )
    # A resume knows that id as done: nothing left, nothing foreign.
    resumed = run_cli(
        str(data), "--workers", workers, "--skip-bad", "--output", str(output), "--resume"
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "0 cases graded" in resumed.stdout
    assert "4 cases resumed" in resumed.stdout
