"""Reading one long input line: through a pipe against from the file, in this run.

    python benchmarks/eval_long_lines.py [--sizes 8 16 32]

The runner cuts a pipe into blocks of whole lines (`batches.read_blocks`) and a regular file
into spans (`batches.read_spans`). A line longer than a read used to be carried by appending
each 16 KiB read to it (`carry + data`): quadratic, 46 s for a 40 MB line through a pipe against
0.6 s from the file. The pieces are now kept in a list and joined once. This prints, for lines
of each size (MB), the time to read a file holding it (three ordinary lines around it) through
a real pipe, from the file, and through a pipe with the old carry (the peer), and the ratios.
Linear reading keeps pipe/file near a constant as the line grows; the old carry's ratio grows
with the size.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from rewardkit.evaluation.inputs.blocks import TaskSizer, read_blocks, read_spans

ORDINARY = b'{"id": "a", "response": "\\\\boxed{1}", "gold": "1"}\n'


def old_read_blocks(handle: IO[bytes], size: int) -> Iterator[tuple[int, bytes]]:
    """The pipe reader before the change (the peer): each read appended to the carried line."""
    number, carry = 1, b""
    while True:
        data = handle.read(size)
        if not data:
            if carry:
                yield number, carry
            return
        if carry:
            data = carry + data
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            carry = data
            continue
        block, carry = data[:cut], data[cut:]
        yield number, block
        number += block.count(b"\n")


def through_pipe(data: bytes, read: Callable[[IO[bytes]], int]) -> float:
    """Seconds to read `data` through a real pipe (a writer thread feeds it)."""
    read_end, write_end = os.pipe()

    def feed() -> None:
        with open(write_end, "wb") as sink:
            sink.write(data)

    writer = threading.Thread(target=feed)
    started = time.perf_counter()
    writer.start()
    with open(read_end, "rb") as stream:
        total = read(stream)
    writer.join()
    elapsed = time.perf_counter() - started
    assert total == len(data), (total, len(data))
    return elapsed


LIMIT = 64 << 20


def new_pipe(stream: IO[bytes]) -> int:
    blocks = read_blocks(stream, sizer=TaskSizer(), path="<pipe>", max_line_bytes=LIMIT)
    return sum(len(block) for _first, block in blocks)


def old_pipe(stream: IO[bytes]) -> int:
    return sum(len(block) for _first, block in old_read_blocks(stream, 16 << 10))


def from_file(path: Path) -> float:
    """Seconds to cut the file into spans (the regular-file reader)."""
    descriptor = os.open(path, os.O_RDONLY)
    started = time.perf_counter()
    spans = read_spans(descriptor, sizer=TaskSizer(), path=str(path), max_line_bytes=LIMIT)
    total = sum(length for _first, _offset, length in spans)
    elapsed = time.perf_counter() - started
    os.close(descriptor)
    assert total == path.stat().st_size
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[4, 8, 16, 32])
    parser.add_argument("--repeat", type=int, default=3, help="best of N (default 3)")
    args = parser.parse_args()
    print(f"load (1-minute average) before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(
        f"{'line MB':>8}{'pipe s':>9}{'file s':>9}{'pipe/file':>11}{'old pipe s':>12}{'old/file':>10}"
    )
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "in.jsonl"
        for megabytes in args.sizes:
            line = b'{"id": "long", "response": "' + b"x" * (megabytes << 20) + b'", "gold": "2"}\n'
            data = ORDINARY + line + ORDINARY
            path.write_bytes(data)
            pipe = min(through_pipe(data, new_pipe) for _ in range(args.repeat))
            file = min(from_file(path) for _ in range(args.repeat))
            old = min(through_pipe(data, old_pipe) for _ in range(max(1, args.repeat // 2)))
            print(
                f"{megabytes:8d}{pipe:9.3f}{file:9.3f}{pipe / file:11.1f}{old:12.3f}{old / file:10.1f}"
            )
    print(f"load (1-minute average) after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
