"""The `--output` results file: one JSON line per case, appended and flushed as each arrives.

A run killed mid-write leaves at most a partial last line; `load_results` drops it (and
truncates it away before appending) so `--resume` neither loses nor double-counts a case.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import IO

from rewardkit.evaluation.cases import EvalInputError
from rewardkit.evaluation.scoring import CaseResult


def load_results(path: str | Path, *, repair: bool = True) -> list[CaseResult]:
    """Read the results already in `path` (for `--resume`); a torn last line is dropped.

    With `repair`, the file is truncated to its last complete line so appends start clean.
    A malformed line that is not the last one is corruption, reported as `EvalInputError`.
    """
    name = str(path)
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise EvalInputError(
            f"cannot read results for --resume: {exc.strerror or exc}", path=name
        ) from None
    results: list[CaseResult] = []
    seen: set[str] = set()
    segments = data.split(b"\n")  # the last segment is b"" when the file ends with a newline
    good_end = 0
    for number, raw in enumerate(segments, start=1):
        unterminated = number == len(segments)
        if raw.strip():
            try:
                result = CaseResult.from_json(json.loads(raw))
            except (ValueError, KeyError, TypeError) as exc:
                if unterminated:
                    break  # the torn final write of a killed run: that case is graded again
                raise EvalInputError(
                    f"not a result line ({type(exc).__name__}: {exc})", path=name, line=number
                ) from None
            if result.id not in seen:
                seen.add(result.id)
                results.append(result)
        good_end += len(raw) + (0 if unterminated else 1)
    if repair:
        _truncate_to(path, data, good_end)
    return results


def _truncate_to(path: str | Path, data: bytes, good_end: int) -> None:
    """Drop a torn tail and make sure the file ends with a newline."""
    if good_end < len(data):
        with open(path, "r+b") as handle:
            handle.truncate(good_end)
        data = data[:good_end]
    if data and not data.endswith(b"\n"):
        with open(path, "ab") as handle:
            handle.write(b"\n")


class ResultsWriter:
    """Appends results to a JSONL file, one full line per case, flushed at least every
    `flush_interval` seconds: a kill loses only the last moment's cases (graded again on resume)."""

    def __init__(
        self,
        path: str | Path,
        *,
        append: bool,
        include_response: bool = True,
        flush_interval: float = 0.1,
    ) -> None:
        self.path = Path(path)
        if self.path.parent and not self.path.parent.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle: IO[str] = open(self.path, "a" if append else "w", encoding="utf-8")  # noqa: SIM115
        self.flush_interval = flush_interval
        self.include_response = include_response
        self._last_flush = time.monotonic()

    def write(self, result: CaseResult) -> None:
        """Append one case as one full line; flush to the OS when the interval has passed."""
        self.write_text(result.to_line(include_response=self.include_response))

    def write_text(self, text: str) -> None:
        """Append whole result lines (a chunk's, already serialised) with one write."""
        self._handle.write(text)
        now = time.monotonic()
        if now - self._last_flush >= self.flush_interval:
            self._handle.flush()
            self._last_flush = now

    def close(self) -> None:
        """Flush to the OS and close. No fsync: resuming is for interrupted runs (Ctrl-C, a
        killed process), whose written lines the OS keeps; a crash of the machine itself may lose
        the last lines, which `load_results` repairs and a resumed run grades again."""
        if not self._handle.closed:
            self._handle.close()

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
