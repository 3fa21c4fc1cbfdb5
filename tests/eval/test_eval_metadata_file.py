"""The run's metadata file (`.NAME.rewardkit.json`) as `--resume` reads it: a FIFO or a device
behind its name is refused at once (neither blocks nor is read until memory runs out), and
fields of the wrong type are "not rewardkit's metadata" (exit 2), never a traceback. Through
the real CLI."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from eval_helpers import write_jsonl

CASES = [{"id": f"q{i}", "response": "\\boxed{1}", "gold": "1"} for i in range(3)]


def _graded(tmp_path: Path, run_cli) -> tuple[Path, Path, Path]:  # type: ignore[no-untyped-def]
    data = write_jsonl(tmp_path / "cases.jsonl", CASES)
    results = tmp_path / "results.jsonl"
    done = run_cli(str(data), "--output", str(results), "--workers", "0")
    assert done.returncode == 0, done.stderr
    return data, results, tmp_path / ".results.jsonl.rewardkit.json"


@pytest.mark.parametrize("kind", ["fifo", "dev_zero"])
def test_a_metadata_file_that_is_not_a_regular_file_is_refused_at_once(
    tmp_path: Path,
    run_cli,
    kind: str,  # type: ignore[no-untyped-def]
) -> None:
    data, results, metadata = _graded(tmp_path, run_cli)
    metadata.unlink()
    if kind == "fifo":
        os.mkfifo(metadata)  # nobody writes it: reading it would block for ever
    else:
        metadata.symlink_to("/dev/zero")  # reading it whole would never end
    resumed = run_cli(str(data), "--output", str(results), "--resume", "--workers", "0", timeout=60)
    assert resumed.returncode == 2, resumed.stderr
    assert "not rewardkit's metadata" in resumed.stderr
    assert "not a regular file" in resumed.stderr
    assert "Traceback" not in resumed.stderr


def test_a_huge_metadata_file_is_refused_by_size(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    data, results, metadata = _graded(tmp_path, run_cli)
    with metadata.open("r+b") as handle:
        handle.truncate(64 << 20)  # sparse: cheap to make, too big to be ours
    resumed = run_cli(str(data), "--output", str(results), "--resume", "--workers", "0", timeout=60)
    assert resumed.returncode == 2, resumed.stderr
    assert "larger than 1 MiB" in resumed.stderr


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"input": ["cases.jsonl"]}, "the field 'input' is an array, not an object"),
        ({"grading": "lenient"}, "the field 'grading' is a string, not an object"),
        ({"rewardkit_results": "2"}, "the field 'rewardkit_results' is a string, not an integer"),
        (
            {"rewardkit_version": 1},
            "the field 'rewardkit_version' is an integer, not a string or null",
        ),
        ({"input": {"name": "cases.jsonl", "sha256": 5}}, "the field 'input.sha256' is an integer"),
        ({"input": {"name": "cases.jsonl", "bytes": True}}, "the field 'input.bytes' is true"),
    ],
)
def test_fields_of_the_wrong_type_are_not_our_metadata(
    tmp_path: Path,
    run_cli,
    change: dict[str, object],
    said: str,  # type: ignore[no-untyped-def]
) -> None:
    data, results, metadata = _graded(tmp_path, run_cli)
    metadata.write_text(json.dumps({**json.loads(metadata.read_text()), **change}))
    resumed = run_cli(str(data), "--output", str(results), "--resume", "--workers", "0")
    assert resumed.returncode == 2, resumed.stderr
    assert "not rewardkit's metadata" in resumed.stderr
    assert said in resumed.stderr
    assert "Traceback" not in resumed.stderr


def test_a_legacy_first_line_of_the_wrong_type_is_not_our_metadata(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    data, results, metadata = _graded(tmp_path, run_cli)
    header = {**json.loads(metadata.read_text()), "grading": 3}
    metadata.unlink()
    results.write_text(json.dumps(header) + "\n" + results.read_text())
    resumed = run_cli(str(data), "--output", str(results), "--resume", "--workers", "0")
    assert resumed.returncode == 2, resumed.stderr
    assert f"{results}:1: not rewardkit's metadata" in resumed.stderr
    assert "Traceback" not in resumed.stderr
