"""The run's input file: opened once, read by one line reader, watched for changes.

Everything that reads a run's input reads the file the run opened, never the path again: the
main process cutting tasks, the worker processes reading their spans (a forked worker inherits
the descriptor; a spawned one opens the path and checks it is still the same file), the parsed
path of Ray and `--model`, the resume check and the responses read back for the HTML report.
So an input replaced with `mv` during a run is graded whole from the version the run opened,
and one rewritten in place or truncated stops the run (`InputChangedError`) rather than ending
with fewer cases.

Lines end at `\\n` only, for every executor (`cases.numbered_lines`), and no line may be longer
than `max_line_bytes`: every reader enforces it while it reads, so a pipe carrying one endless
line (`/dev/zero`) stops at the limit instead of filling memory, and a long line is read in
linear time.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from rewardkit.evaluation.inputs.cases import (
    DEFAULT_MAX_LINE_BYTES,
    EvalInputError,
    FieldNames,
    case_id_of,
    fast_loads,
    numbered_lines,
)
from rewardkit.evaluation.option_names import option


class InputChangedError(EvalInputError):
    """The input file was rewritten, truncated or grown while the run read it: its results
    would mix two versions of it."""


@dataclass(frozen=True)
class InputRef:
    """What a worker process needs to read the run's input: the descriptor the run opened
    (valid in a forked worker) and the file's identity, to check any other way in."""

    path: str
    fd: int
    identity: tuple[int, int]
    """`(st_dev, st_ino)` of the file the run opened."""

    def open_descriptor(self) -> int:
        """A descriptor of the run's input file in this process: the inherited one, or the path
        opened again if it still names that file. Raises `InputChangedError` otherwise."""
        try:
            status = os.fstat(self.fd)
            if (status.st_dev, status.st_ino) == self.identity:
                return self.fd
        except OSError:
            pass
        descriptor = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        status = os.fstat(descriptor)
        if (status.st_dev, status.st_ino) != self.identity:
            os.close(descriptor)
            raise InputChangedError(
                "the input file was replaced during the run (another file has its name now)",
                path=self.path,
            )
        return descriptor


COMPRESSED_FORMATS = (
    (b"\x1f\x8b", "gzip", "gunzip -c"),
    (b"BZh", "bzip2", "bunzip2 -c"),
    (b"\xfd7zXZ\x00", "xz", "xz -dc"),
    (b"\x28\xb5\x2f\xfd", "zstd", "zstd -dc"),
)
"""Magic bytes of compressed files, their name and the command that writes them out."""


def refuse_other_formats(stream: IO[bytes], path: str, *, piped: bool = False) -> None:
    """`EvalInputError` saying what is expected when the input is a compressed file or a JSON
    array (a `.json` file) rather than JSONL text: said once, before any line (a compressed file
    was "not UTF-8", an array "not valid JSON" or "expected a JSON object"). Peeks at the first
    bytes without consuming them (a pipe too)."""
    peek = getattr(stream, "peek", None)
    head = peek(64)[:64] if peek is not None else b""
    for magic, name, command in COMPRESSED_FORMATS:
        if head.startswith(magic) and piped:
            raise EvalInputError(
                f"{name}-compressed data, and rewardkit eval reads JSONL text: decompress it "
                f"before it is piped in ({command} FILE | rewardkit eval math /dev/stdin)",
                path=path,
            )
        if head.startswith(magic):
            raise EvalInputError(
                f"{name}-compressed, and rewardkit eval reads JSONL text: decompress it first "
                f"({command} {path} > cases.jsonl), or pipe it in "
                f"({command} {path} | rewardkit eval math /dev/stdin)",
                path=path,
            )
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"["):
        raise EvalInputError(
            "a JSON array (a .json file), and rewardkit eval reads JSONL: one JSON object per "
            f"line. Convert it first: jq -c '.[]' {path} > cases.jsonl",
            path=path,
            line=head[: len(head) - len(text)].count(b"\n") + 1,
        )


class InputFile:
    """The input of a run, opened once: a stream for the one sequential reader, its descriptor
    for positional reads and workers, and its state at the start, to notice changes."""

    def __init__(self, path: Path, stream: IO[bytes], *, max_line_bytes: int) -> None:
        self.path = path
        self.stream = stream
        self.fd = stream.fileno()
        self.max_line_bytes = max_line_bytes
        status = os.fstat(self.fd)
        self.regular = stat.S_ISREG(status.st_mode)
        self.identity = (status.st_dev, status.st_ino)
        self._state = (status.st_size, status.st_mtime_ns)

    @classmethod
    def open(cls, path: Path, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> InputFile:
        """Open `path` for the run (`EvalInputError` naming it when it cannot be read)."""
        try:
            stream = open(path, "rb")  # noqa: SIM115 - closed by close()
        except OSError as exc:
            raise EvalInputError(
                f"cannot read input: {exc.strerror or exc}", path=str(path)
            ) from None
        try:
            opened = cls(path, stream, max_line_bytes=max_line_bytes)
            refuse_other_formats(stream, str(path), piped=not opened.regular)
        except OSError as exc:
            stream.close()
            raise EvalInputError(
                f"cannot read input: {exc.strerror or exc}", path=str(path)
            ) from None
        except EvalInputError:
            stream.close()
            raise
        return opened

    @property
    def size(self) -> int:
        """Bytes of a regular file when the run opened it (0 for a pipe)."""
        return self._state[0] if self.regular else 0

    @property
    def ref(self) -> InputRef:
        """The picklable handle workers read the file through."""
        return InputRef(str(self.path), self.fd, self.identity)

    def lines(self, stream: IO[bytes] | None = None) -> Iterator[tuple[int, bytes]]:
        """The lines of the run's stream (or of `stream`, another reader of this file) from
        where it is, numbered from 1, bounded (`numbered_lines`)."""
        return numbered_lines(
            stream or self.stream, path=str(self.path), max_bytes=self.max_line_bytes
        )

    @contextlib.contextmanager
    def reread(self) -> Iterator[IO[bytes] | None]:
        """The file from its start, for another pass once the run's reading is done: the run's
        stream while it is open, else the path opened again if it still names this file,
        unchanged; None when neither can be had (a pipe, a file replaced since)."""
        if not self.regular:
            yield None
        elif not self.stream.closed:
            self.stream.seek(0)
            yield self.stream
        else:
            try:
                stream = open(self.path, "rb")  # noqa: SIM115 - closed below
            except OSError:
                yield None
                return
            with stream:
                status = os.fstat(stream.fileno())
                same = (status.st_dev, status.st_ino) == self.identity and (
                    status.st_size,
                    status.st_mtime_ns,
                ) == self._state
                yield stream if same else None

    def rewind(self) -> bool:
        """Go back to the start for another pass (a regular file only); False for a pipe."""
        if not self.regular:
            return False
        self.stream.seek(0)
        return True

    def pread(self, length: int, offset: int) -> bytes:
        """`length` bytes from `offset`, without moving the stream (any thread)."""
        return os.pread(self.fd, length, offset)

    def check_unchanged(self) -> None:
        """Raise `InputChangedError` when the file's size or modification time moved since
        the run opened it (rewritten in place, truncated, appended to). A pipe never changes."""
        if not self.regular:
            return
        status = os.fstat(self.fd)
        now = (status.st_size, status.st_mtime_ns)
        if now == self._state:
            return
        size = f"{self._state[0]:,} bytes when the run opened it, {now[0]:,} now"
        raise InputChangedError(
            f"the input file changed while the run read it ({size}): its results would mix "
            "two versions of it. Grade it once it is written, with "
            f"{option('overwrite')}; to update an input under a run, write a new file and "
            "`mv` it over: the run grades the file it opened, whole",
            path=str(self.path),
        )

    def replaced(self) -> bool:
        """The path names another file now (replaced with `mv` while the run read this one)."""
        try:
            status = os.stat(self.path)
        except OSError:
            return True
        return (status.st_dev, status.st_ino) != self.identity

    def close(self) -> None:
        """Close the file (workers are gone by then)."""
        self.stream.close()


@dataclass
class LeftToGrade:
    """What a resumed run has left, from one pass over the input's ids."""

    cases: int
    """Cases in the input (up to the run's limit)."""
    left: int
    """Of those, the ones not in the results yet."""
    found: set[str]
    """The done ids the input has (anywhere in it, limit or not)."""


def line_ids(
    lines: Iterable[tuple[int, bytes]], fields: FieldNames
) -> Iterator[tuple[int, str | None]]:
    """The number and id of each non-blank line (None where the line has no usable id)."""
    for number, raw in lines:
        if raw.isspace():
            continue
        try:
            record = fast_loads(raw)
        except (ValueError, RecursionError):
            record = None
        yield number, case_id_of(record, fields) if isinstance(record, dict) else None


def left_to_grade(
    ids: Iterable[tuple[int, str | None]], done_ids: set[str], limit: int | None
) -> LeftToGrade:
    """Count the cases left: a case is done when its id (on its first line), or the `line:N`
    that stands for it when it was malformed (`--skip-bad`), has a result."""
    cases = left = 0
    found: set[str] = set()
    for number, case_id in ids:
        done = False
        line_key = f"line:{number}"
        if line_key in done_ids:
            found.add(line_key)
            done = True
        if case_id is not None and case_id in done_ids:
            # (a second line with a done id is a duplicate, graded to be reported as one)
            done = done or case_id not in found
            found.add(case_id)
        if limit is None or cases < limit:
            cases += 1
            left += not done
    return LeftToGrade(cases=cases, left=left, found=found)
