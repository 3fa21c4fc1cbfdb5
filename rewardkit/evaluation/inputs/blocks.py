"""The input file cut into blocks of whole lines: by value (bytes) or by position (spans
the workers read themselves), sized by a `TaskSizer` that learns from finished tasks.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import IO

from rewardkit.evaluation.inputs.cases import (
    DEFAULT_MAX_LINE_BYTES,
    line_too_long,
    numbered_lines,
)
from rewardkit.evaluation.inputs.file import InputRef

RawBlock = tuple[int, bytes]
"""Whole input lines as read by the main process: the 1-based number of the first, and the bytes."""

FileSpan = tuple[int, int, int]
"""Whole lines of the input file by position: number of the first line, byte offset, length.
Workers read the bytes themselves, so they never pass through the main process."""


class TaskSizer:
    """How many bytes of input go into the next task: few at first, so that the first results
    reach the results file within milliseconds of the workers' start, then about
    `target_seconds` of a worker's time each, from the bytes per second of the tasks that
    finished. Small tasks stream results and lose little to an interrupt; each task also costs
    the main process ~0.3 ms, so fast (cached) grading gets bigger ones, up to `maximum`.

    The main loop calls `record`, the thread that cuts the input calls `size`."""

    FIRST = 16 << 10
    MINIMUM = 4 << 10
    TARGET_SECONDS = 0.1
    """Half of the ~0.2 s a batch may take, leaving room for a slower stretch of input."""

    def __init__(
        self, maximum: int = 1 << 20, *, first: int = FIRST, target_seconds: float = TARGET_SECONDS
    ) -> None:
        self.maximum = max(self.MINIMUM, maximum)
        self.target_seconds = target_seconds
        self._size = max(self.MINIMUM, min(first, self.maximum))
        self._cost: float | None = None
        """Seconds per byte, averaged: a slow stretch shrinks the tasks at once (the average
        of costs is dominated by the slow one), a fast one grows them back over a few tasks."""

    def size(self) -> int:
        """Bytes for the next task."""
        return self._size

    def record(self, nbytes: int, seconds: float) -> None:
        """A task of `nbytes` kept a worker busy for `seconds`."""
        if nbytes <= 0 or seconds <= 0:
            return
        cost = seconds / nbytes
        self._cost = cost if self._cost is None else (self._cost + cost) / 2
        self._size = int(min(self.maximum, max(self.MINIMUM, self.target_seconds / self._cost)))


def read_blocks(
    handle: IO[bytes],
    *,
    sizer: TaskSizer,
    path: str,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    lines_per_block: int | None = None,
    limit: int | None = None,
) -> Iterator[RawBlock]:
    """Yield a binary stream as blocks of whole lines, each with the number of its first line.

    This runs in the main process, where every microsecond per case is one every worker waits
    for, so it does not look at lines: it reads `sizer.size()` bytes and cuts after the last
    newline. A line longer than a read is carried as a list of pieces, joined once it ends
    (linear in its length, from a pipe too), and refused (`EvalInputError`) once it is longer
    than `max_line_bytes`. Only `lines_per_block` or `limit` (which count cases, i.e.
    non-blank lines, as `--limit` does) make it go line by line.
    """
    if lines_per_block is not None or limit is not None:
        lines = numbered_lines(handle, path=path, max_bytes=max_line_bytes)
        yield from _counted_blocks(lines, lines_per_block or 256, limit)
        return
    number = 1
    carry: list[bytes] = []
    carried = 0
    while data := handle.read(sizer.size()):
        end = data.find(b"\n")
        if carried + (len(data) if end < 0 else end) > max_line_bytes:
            raise line_too_long(path, number, max_line_bytes)
        if end < 0:
            carry.append(data)
            carried += len(data)
            continue
        cut = data.rfind(b"\n") + 1
        block = b"".join((*carry, data[:cut])) if carry else data[:cut]
        yield number, block
        number += block.count(b"\n")
        carry = [data[cut:]] if cut < len(data) else []
        carried = len(data) - cut
    if carry:
        yield number, b"".join(carry)


def line_lists(
    handle: IO[bytes], *, sizer: TaskSizer, path: str, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> Iterator[list[bytes]]:
    """A binary stream as lists of whole lines (newline included) of about `sizer.size()`
    bytes. Unnumbered: grading in this process numbers lines as it goes. One pass over the
    input, split in C by a bounded `readline` (`numbered_lines`'s rule: a line longer than
    `max_line_bytes` is refused as soon as that much of it is read)."""
    readline = handle.readline
    limit = max_line_bytes + 1
    number = 0
    while True:
        budget = sizer.size()
        lines: list[bytes] = []
        total = 0
        while total < budget and (raw := readline(limit)):
            if len(raw) == limit and raw[-1] != 0x0A:
                raise line_too_long(path, number + len(lines) + 1, max_line_bytes)
            lines.append(raw)
            total += len(raw)
        if not lines:
            return
        number += len(lines)
        yield lines


def read_spans(
    descriptor: int, *, sizer: TaskSizer, path: str, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> Iterator[FileSpan]:
    """Like `read_blocks` without a limit, but for a regular file, and yielding positions in
    it rather than bytes: the main process reads each block once to cut it after a newline
    and count its lines, and never pickles or sends input text (workers read their spans
    themselves). A line longer than a block doubles the read, up to `max_line_bytes`."""
    offset = 0
    number = 1
    size = sizer.size()
    while True:
        data = os.pread(descriptor, size, offset)
        if not data:
            return
        cut = data.rfind(b"\n") + 1
        if cut == 0 and len(data) == size:  # a line longer than the block: read more
            if size > max_line_bytes:
                raise line_too_long(path, number, max_line_bytes)
            size = min(2 * size, max_line_bytes + 1)
            continue
        cut = cut or len(data)  # the last line, without a newline
        yield number, offset, cut
        number += data.count(b"\n", 0, cut)
        offset += cut
        size = sizer.size()


def _counted_blocks(
    lines: Iterable[tuple[int, bytes]], cases_per_block: int, limit: int | None
) -> Iterator[RawBlock]:
    first = 1
    block: list[bytes] = []
    cases = 0
    total = 0
    for number, raw in lines:
        if limit is not None and total >= limit:
            break
        if not block:
            first = number
        block.append(raw)
        if raw.isspace():
            continue
        cases += 1
        total += 1
        if cases >= cases_per_block:
            yield first, b"".join(block)
            block, cases = [], 0
    if cases:
        yield first, b"".join(block)


def resolve_block(block: RawBlock | FileSpan, source: InputRef | None) -> RawBlock:
    """The bytes of a block, reading them from the run's input if it is given by position."""
    if len(block) == 2:
        return block  # type: ignore[return-value]
    assert source is not None
    first, offset, length = block  # type: ignore[misc]
    descriptor = source.open_descriptor()
    try:
        return first, os.pread(descriptor, length, offset)
    finally:
        if descriptor != source.fd:
            os.close(descriptor)


def block_lines(block: RawBlock) -> list[tuple[int, bytes]]:
    """The non-blank lines of a block with their line numbers."""
    first, data = block
    return [
        (first + offset, raw)
        for offset, raw in enumerate(data.split(b"\n"))
        if raw and not raw.isspace()
    ]
