"""One line reader for every input and executor (issue 27 items 7, 14): lines end at `\\n`
only, read in linear time from pipes, and no line is longer than the limit, which is enforced
while reading (`/dev/zero` stops at it, naming line 1). Real FIFOs, pipes and `/dev/zero`."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import threading
from pathlib import Path

import pytest
from eval_helpers import cli_command, cli_env, read_jsonl, write_jsonl
from hostile_inputs import ordinary_line

from rewardkit.evaluation import EvalInputError, run_math_eval
from rewardkit.evaluation.inputs.blocks import TaskSizer, read_blocks
from rewardkit.evaluation.inputs.cases import DEFAULT_MAX_LINE_BYTES, FieldNames, cases_of_lines
from rewardkit.evaluation.inputs.file import InputFile

DEV_ZERO = Path("/dev/zero")


def run(*args: str, stdin: bytes | None = None, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """The CLI in a subprocess, with `stdin` fed through a real pipe."""
    return subprocess.run(
        cli_command(*args),
        input=stdin,
        capture_output=True,
        timeout=600,
        cwd=cwd,
        env=cli_env(),
    )


def one_line_error(proc: subprocess.CompletedProcess[bytes], *parts: str) -> None:
    stderr = proc.stderr.decode()
    assert proc.returncode == 2, stderr
    assert "Traceback" not in stderr
    assert len(stderr.strip().splitlines()) == 1, stderr
    for part in parts:
        assert part in stderr


@pytest.mark.skipif(not DEV_ZERO.exists(), reason="needs /dev/zero")
@pytest.mark.parametrize("workers", ["0", "2"])
def test_dev_zero_stops_at_the_line_limit_naming_line_1(tmp_path: Path, workers: str) -> None:
    """`rewardkit eval math /dev/zero` once read forever, holding every byte."""
    proc = run("/dev/zero", "--workers", workers, "-o", "out.jsonl", cwd=tmp_path)
    limit = f"{DEFAULT_MAX_LINE_BYTES:,}"
    one_line_error(proc, f"/dev/zero:1: the line is longer than {limit} bytes", "--max-line-size")


def long_line_input(path: Path, response_bytes: int) -> bytes:
    rows = [
        json.loads(ordinary_line("a", 1)),
        {"id": "long", "response": "x" * response_bytes + r" \boxed{2}", "gold": "2"},
        json.loads(ordinary_line("b", 3)),
    ]
    write_jsonl(path, rows)
    return path.read_bytes()


@pytest.mark.slow
def test_a_48_mb_line_through_a_pipe_is_read_whole(tmp_path: Path) -> None:
    """Through a pipe, each read was appended to the partial line: a 40 MB line took 46 s,
    50 MB 330 s. The pieces are now joined once (linear); `benchmarks/eval_long_lines.py`
    measures the pipe against the file."""
    data = long_line_input(tmp_path / "in.jsonl", 48 << 20)
    proc = run(
        "/dev/stdin",
        "--workers",
        "2",
        "--max-line-size",
        "64M",
        "-o",
        "out.jsonl",
        stdin=data,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert sorted(r["id"] for r in read_jsonl(tmp_path / "out.jsonl")) == ["a", "b", "long"]


def test_the_block_reader_joins_a_long_line_from_a_pipe_once(tmp_path: Path) -> None:
    """`read_blocks` over a real pipe: the long line comes out whole, in one block, and the
    blocks cover the input exactly."""
    data = long_line_input(tmp_path / "in.jsonl", 3 << 20)
    read_end, write_end = os.pipe()
    writer = threading.Thread(target=lambda: (os.write(write_end, data), os.close(write_end)))
    writer.start()
    with open(read_end, "rb") as stream:
        blocks = list(read_blocks(stream, sizer=TaskSizer(16 << 10), path="<pipe>"))
    writer.join()
    assert b"".join(block for _first, block in blocks) == data
    assert blocks[0][0] == 1
    long = data.split(b"\n")[1] + b"\n"
    assert [first for first, block in blocks if long in block] == [2]


def _write_fifo(path: Path, data: bytes) -> threading.Thread:
    def feed() -> None:
        # (the reader may stop early, at a refused line)
        with contextlib.suppress(BrokenPipeError), open(path, "wb") as handle:
            handle.write(data)

    thread = threading.Thread(target=feed, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_line_over_the_limit_stops_the_run_naming_it(tmp_path: Path, workers: str) -> None:
    """From a file, a pipe and a FIFO, in this process and in workers, with `--skip-bad` too:
    exit 2 naming the line; a line under the limit is graded."""
    lines = [ordinary_line("a"), ordinary_line("b", 2), b'{"id": "c", "response": "' + b"y" * 3000]
    lines[2] += b'", "gold": "1"}'
    data = b"\n".join([*lines, ordinary_line("d", 4)]) + b"\n"
    path = tmp_path / "in.jsonl"
    path.write_bytes(data)
    limit = ("--max-line-size", "2K")
    from_file = run(str(path), "--workers", workers, *limit, "--skip-bad", cwd=tmp_path)
    one_line_error(from_file, f"{path}:3: the line is longer than 2,048 bytes")
    from_pipe = run("/dev/stdin", "--workers", workers, *limit, stdin=data, cwd=tmp_path)
    one_line_error(from_pipe, "/dev/stdin:3: the line is longer than 2,048 bytes")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    feeder = _write_fifo(fifo, data)
    from_fifo = run(str(fifo), "--workers", workers, *limit, "--limit", "10", cwd=tmp_path)
    feeder.join(timeout=60)
    one_line_error(from_fifo, f"{fifo}:3: the line is longer than 2,048 bytes")
    fine = run(str(path), "--workers", workers, "--max-line-size", "4K", cwd=tmp_path)
    assert fine.returncode == 0, fine.stderr.decode()


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_fifo_is_graded_like_the_file(tmp_path: Path, workers: str) -> None:
    data = b"".join(ordinary_line(f"c{i}", i % 3) + b"\n" for i in range(40))
    path = tmp_path / "in.jsonl"
    path.write_bytes(data)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    feeder = _write_fifo(fifo, data)
    proc = run(str(fifo), "--workers", workers, "-o", "fifo.jsonl", cwd=tmp_path)
    feeder.join(timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    expected = run_math_eval(path, workers=0)
    got = {r["id"]: (r["passed"], r["line"]) for r in read_jsonl(tmp_path / "fifo.jsonl")}
    assert got == {r.id: (r.passed, r.line) for r in expected.results}


BARE_CR = b'{"id": "cr",\r"response": "so \\\\boxed{2}",\r"gold": "2"}'
"""A bare CR between JSON tokens: whitespace inside one line, not a line break."""


def test_a_bare_cr_is_whitespace_inside_a_line_for_every_reader(tmp_path: Path) -> None:
    """Universal newlines split this line in two for Ray and `--model` (read as text), while
    local workers read it as one: the same file was graded by one executor and refused by
    another. Every reader now splits at `\\n` only (Ray's run: test_eval_ray.py)."""
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"\n".join([ordinary_line("a"), BARE_CR, ordinary_line("b", 3)]) + b"\n")
    for workers in (0, 2):
        run_ = run_math_eval(path, workers=workers)
        assert [(r.id, r.line, r.passed) for r in run_.results] == [
            ("a", 1, True),
            ("cr", 2, True),
            ("b", 3, True),
        ]
    source = InputFile.open(path)
    try:
        parsed = list(cases_of_lines(source.lines(), path=str(path), fields=FieldNames()))
    finally:
        source.close()
    assert [(case.id, case.line) for case in parsed] == [("a", 1), ("cr", 2), ("b", 3)]


def test_the_line_limit_is_an_option_of_the_python_api(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(ordinary_line("a") + b"\n" + b"z" * 100 + b"\n")
    with pytest.raises(EvalInputError, match=r"in\.jsonl:2: .*\(max_line_bytes=\.\.\. raises it\)"):
        run_math_eval(path, workers=0, max_line_bytes=64)
