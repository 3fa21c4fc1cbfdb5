"""`--resume`: a run killed mid-way (a real subprocess, SIGKILL) and resumed gives the same report."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from eval_helpers import cli_command, read_jsonl, write_jsonl

from rewardkit.evaluation import run_math_eval, sample_path


def replicated_sample(path: Path, copies: int) -> Path:
    """The shipped sample repeated with distinct ids: a run long enough to be killed mid-way."""
    rows = [json.loads(line) for line in sample_path().read_text().splitlines()]
    return write_jsonl(
        path, [{**row, "id": f"{row['id']}#{k}"} for k in range(copies) for row in rows]
    )


def comparable(report: dict) -> dict:
    return {key: value for key, value in report.items() if key != "timings"}


def graded(records: list[dict]) -> dict[str, tuple]:
    return {
        r["id"]: (r["passed"], r["tag"], r["detail"]["reason"], r["detail"]["parsed_answer"])
        for r in records
    }


def test_killed_run_resumed_matches_an_uninterrupted_run(tmp_path: Path) -> None:
    data = replicated_sample(
        tmp_path / "in.jsonl", copies=150
    )  # long enough to be interrupted even on a fast idle machine
    total = len(data.read_text().splitlines())
    out = tmp_path / "out.jsonl"
    victim = subprocess.Popen(
        cli_command(
            str(data),
            "--workers",
            "1",
            "--output",
            str(out),
            "--report",
            str(tmp_path / "never.json"),
        ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    while victim.poll() is None and (not out.exists() or len(out.read_bytes().splitlines()) < 1):
        time.sleep(0.005)
    os.killpg(victim.pid, signal.SIGKILL)  # the CLI and its worker processes
    victim.wait(timeout=30)
    assert victim.returncode == -signal.SIGKILL, "the run finished before it could be killed"
    done_before = len(read_jsonl_tolerant(out))
    assert 0 < done_before < total
    with open(out, "a", encoding="utf-8") as handle:  # what a kill in the middle of a write leaves
        handle.write('{"id": "torn-wri')

    resumed = subprocess.run(
        cli_command(
            str(data),
            "--workers",
            "1",
            "--output",
            str(out),
            "--resume",
            "--report",
            str(tmp_path / "resumed.json"),
        ),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr
    full = run_math_eval(
        data, workers=1, output=tmp_path / "full.jsonl", report=tmp_path / "full.json"
    )

    resumed_report = json.loads((tmp_path / "resumed.json").read_text())
    full_report = json.loads((tmp_path / "full.json").read_text())
    assert comparable(resumed_report) == comparable(full_report)
    assert resumed_report["timings"]["resumed_cases"] == done_before
    assert resumed_report["timings"]["new_cases"] == total - done_before
    records = read_jsonl(out)  # every line parses: the torn one was dropped
    assert len(records) == total == len({r["id"] for r in records})
    assert graded(records) == graded(read_jsonl(tmp_path / "full.jsonl"))
    assert full.summary.n == total


def read_jsonl_tolerant(path: Path) -> list[dict]:
    """The result lines of a results file a kill may have torn."""
    lines = path.read_text(encoding="utf-8").split("\n")
    parsed = []
    for line in lines:
        try:
            parsed.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return parsed


def test_resume_skips_done_ids_and_drops_a_torn_last_line(tmp_path: Path) -> None:
    rows = [{"id": f"c{i}", "response": rf"\boxed{{{i}}}", "gold": str(i % 3)} for i in range(6)]
    data = write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out.jsonl"
    first = run_math_eval(data, workers=0, output=out, limit=3)
    assert [r.id for r in first.results] == ["c0", "c1", "c2"]
    with open(out, "a", encoding="utf-8") as handle:
        handle.write('{"id": "c3", "passed": tr')
    seen: list[str] = []
    second = run_math_eval(
        data, workers=0, output=out, resume=True, on_result=lambda r: seen.append(r.id)
    )
    assert seen == ["c3", "c4", "c5"]
    assert [r.id for r in second.results] == [f"c{i}" for i in range(6)]
    assert [r["id"] for r in read_jsonl(out)] == [f"c{i}" for i in range(6)]
    assert second.summary.passed == 3  # c0, c1, c2 (gold i % 3)


def test_interrupt_exits_130_and_keeps_what_was_written(tmp_path: Path) -> None:
    data = replicated_sample(
        tmp_path / "in.jsonl", copies=150
    )  # long enough to be interrupted even on a fast idle machine
    out = tmp_path / "out.jsonl"
    proc = subprocess.Popen(
        cli_command(str(data), "--workers", "1", "--output", str(out)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    while proc.poll() is None and (not out.exists() or len(out.read_bytes().splitlines()) < 1):
        time.sleep(0.005)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "continue with --resume --output" in stderr
    assert len(read_jsonl(out)) >= 1
