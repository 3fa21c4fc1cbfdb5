"""The `--output` results file: a header line saying what produced it, then one JSON line per
case, appended and flushed as each batch arrives.

The header records the input's identity (name, size, SHA-256) and the options that decide
verdicts, so `--resume` refuses to mix two runs (another input, another policy) unless forced.
A run killed mid-write leaves at most a partial last line; `read_results` drops it (and
truncates it away before appending) so `--resume` neither loses nor double-counts a case.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, is_dataclass
from pathlib import Path
from typing import IO, Any

from rewardkit.evaluation.cases import EvalInputError, fast_loads
from rewardkit.evaluation.errors import EvalConfigError, EvalOutputError, os_error_reason
from rewardkit.evaluation.output_files import encode_text
from rewardkit.evaluation.scoring import LINE_ENCODER, CaseResult

RESULTS_FORMAT = 1
"""Version of the results file's layout (the header's `rewardkit_results` value)."""
HEADER_KEY = "rewardkit_results"


class InputFingerprint:
    """The identity of a run's input: its name, size and SHA-256.

    A regular file is hashed in a background thread (about 20 ms for 20 MB, with the GIL
    released) while the first cases are graded; the results file's header waits for it.
    A pipe cannot be read twice, so it has a name only (and cannot be checked on resume)."""

    def __init__(self, name: str, *, size: int | None = None, sha256: str | None = None) -> None:
        self.name = name
        self.size = size
        self._sha256 = sha256
        self._thread: threading.Thread | None = None
        self._error: OSError | None = None

    @classmethod
    def of_file(cls, path: Path, name: str) -> InputFingerprint:
        """Start hashing `path` (if it is a regular file) in the background."""
        try:
            status = os.stat(path)
        except OSError:
            return cls(name)
        if not stat.S_ISREG(status.st_mode):
            return cls(name)
        fingerprint = cls(name, size=status.st_size)
        fingerprint._thread = threading.Thread(
            target=fingerprint._hash_file, args=(path,), name="rewardkit-input-hash", daemon=True
        )
        fingerprint._thread.start()
        return fingerprint

    @classmethod
    def of_records(cls, records: Iterable[object]) -> InputFingerprint:
        """Hash records given as Python objects (dicts, `MathCase`s) by their JSON form."""
        digest = hashlib.sha256()
        count = 0
        for record in records:
            value = asdict(record) if is_dataclass(record) else record  # type: ignore[arg-type]
            digest.update(
                json.dumps(value, sort_keys=True, default=str, ensure_ascii=True).encode() + b"\n"
            )
            count += 1
        return cls("<records>", size=count, sha256=digest.hexdigest())

    def _hash_file(self, path: Path) -> None:
        digest = hashlib.sha256()
        try:
            with open(path, "rb") as handle:
                while block := handle.read(1 << 20):
                    digest.update(block)
        except OSError as error:
            self._error = error
            return
        self._sha256 = digest.hexdigest()

    def to_json(self) -> dict[str, Any]:
        """`{"name", "bytes", "sha256"}` (waits for the hash)."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        return {"name": self.name, "bytes": self.size, "sha256": self._sha256}


def results_header(fingerprint: InputFingerprint, grading: Mapping[str, Any], version: str) -> str:
    """The results file's first line: what was graded, and how."""
    header = {
        HEADER_KEY: RESULTS_FORMAT,
        "input": fingerprint.to_json(),
        "grading": dict(grading),
        "rewardkit_version": version,
    }
    return LINE_ENCODER.encode(header) + "\n"


@dataclass(frozen=True)
class ResultsFile:
    """What an existing results file holds: its header (None if it has none) and its results."""

    header: Mapping[str, Any] | None
    results: list[CaseResult]
    valid_bytes: int = 0
    """Length of the file's complete lines (a torn last line starts after them)."""
    ends_with_newline: bool = True

    @property
    def empty(self) -> bool:
        """No header and no result: a new file, as far as resuming goes."""
        return self.header is None and not self.results

    def repair(self, path: str | Path) -> None:
        """Truncate a torn last line away and end the file with a newline, so appends start clean."""
        try:
            size = os.stat(path).st_size
        except FileNotFoundError:
            return
        except OSError as error:
            raise EvalOutputError("results file", path, os_error_reason(error)) from None
        if size == self.valid_bytes and self.ends_with_newline:
            return
        try:
            with open(path, "r+b") as handle:
                handle.truncate(self.valid_bytes)
                if self.valid_bytes and not self.ends_with_newline:
                    handle.seek(self.valid_bytes)
                    handle.write(b"\n")
        except OSError as error:
            raise EvalOutputError("results file", path, os_error_reason(error)) from None


def _is_header(record: object) -> bool:
    return isinstance(record, dict) and HEADER_KEY in record


def read_results(path: str | Path) -> ResultsFile:
    """Read the header and results already in `path` (for `--resume`); a torn last line (a kill
    in the middle of a write) is dropped, and `ResultsFile.repair` truncates it away. A
    malformed line that is not the last one is corruption, reported as `EvalInputError`.
    """
    name = str(path)
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return ResultsFile(None, [])
    except OSError as exc:
        raise EvalInputError(
            f"cannot read results for --resume: {os_error_reason(exc)}", path=name
        ) from None
    header: Mapping[str, Any] | None = None
    results: list[CaseResult] = []
    seen: set[str] = set()
    segments = data.split(b"\n")  # the last segment is b"" when the file ends with a newline
    good_end = 0
    for number, raw in enumerate(segments, start=1):
        unterminated = number == len(segments)
        if raw.strip():
            try:
                record = fast_loads(raw)
                if number == 1 and _is_header(record):
                    header = record
                    good_end += len(raw) + (0 if unterminated else 1)
                    continue
                result = CaseResult.from_json(record)
            except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
                if unterminated:
                    break  # the torn final write of a killed run: that case is graded again
                raise EvalInputError(
                    f"not a result line ({type(exc).__name__}: {str(exc)[:200]})",
                    path=name,
                    line=number,
                ) from None
            if result.id not in seen:
                seen.add(result.id)
                results.append(result)
        good_end += len(raw) + (0 if unterminated else 1)
    return ResultsFile(
        header,
        results,
        valid_bytes=good_end,
        ends_with_newline=good_end == 0 or data[good_end - 1 : good_end] == b"\n",
    )


def _differences(theirs: Mapping[str, Any], ours: Mapping[str, Any]) -> list[str]:
    keys = sorted(set(theirs) | set(ours))
    return [
        f"{key} {theirs.get(key)!r} there, {ours.get(key)!r} here"
        for key in keys
        if theirs.get(key) != ours.get(key)
    ]


def check_resumable(
    existing: ResultsFile,
    *,
    path: str | Path,
    fingerprint: InputFingerprint,
    grading: Mapping[str, Any],
) -> None:
    """Raise `EvalConfigError` when resuming `path` would mix two runs: its results were graded
    from another input (by content: a renamed or moved input is the same input) or with other
    grading options, or it does not say (no header, an input that is a pipe)."""
    if existing.empty:
        return
    header = existing.header
    problems: list[str] = []
    if header is None:
        problems.append("it has no rewardkit header (written by hand or by an older rewardkit)")
    else:
        theirs = dict(header.get("input") or {})
        ours = fingerprint.to_json()
        if ours["sha256"] is None or theirs.get("sha256") is None:
            problems.append(
                f"the input {ours['name']} cannot be checked (not a regular file, or not hashed)"
            )
        elif theirs.get("sha256") != ours["sha256"]:
            problems.append(
                f"they were graded from another input ({theirs.get('name')}, "
                f"{theirs.get('bytes')} bytes, sha256 {str(theirs.get('sha256'))[:12]}...; "
                f"this one: {ours['name']}, {ours['bytes']} bytes, sha256 {ours['sha256'][:12]}...)"
            )
        changed = _differences(dict(header.get("grading") or {}), grading)
        if changed:
            problems.append("they were graded with other options (" + "; ".join(changed) + ")")
    if problems:
        raise EvalConfigError(
            f"{path}: --resume would mix two runs: "
            + "; ".join(problems)
            + ". Add --force-resume to continue it anyway, or use --overwrite (or another "
            "--output) to start over"
        )


class ResultsWriter:
    """Appends results to a JSONL file, one full line per case, each batch flushed to the OS as
    it is written (a batch is ~0.1 s of work: a few writes a second): the file always holds
    every batch the run has received, and a kill loses none of them (a torn last line at most,
    graded again on resume). `header` (a callable, evaluated at the first write or at close) is
    written first. Write failures raise `EvalOutputError`."""

    def __init__(
        self,
        path: str | Path,
        *,
        append: bool,
        header: Callable[[], str] | None = None,
        include_response: bool = True,
    ) -> None:
        self.path = Path(path)
        try:
            if self.path.parent and not self.path.parent.exists():
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle: IO[bytes] = open(self.path, "ab" if append else "wb")  # noqa: SIM115
        except OSError as error:
            raise EvalOutputError("results file", path, os_error_reason(error)) from None
        self._header = header
        self.include_response = include_response

    def write(self, result: CaseResult) -> None:
        """Append one case as one full line."""
        self.write_text(result.to_line(include_response=self.include_response))

    def _pending_header(self) -> bytes:
        if self._header is None:
            return b""
        text, self._header = self._header(), None
        return encode_text(text)

    def write_text(self, text: str) -> None:
        """Append whole result lines (a chunk's, already serialised) with one write and flush."""
        data = encode_text(text)
        try:
            if self._header is not None:
                data = self._pending_header() + data
            self._handle.write(data)
            self._handle.flush()
        except OSError as error:
            raise EvalOutputError("results file", self.path, os_error_reason(error)) from None

    def close(self) -> None:
        """Write the header if nothing was written yet, flush to the OS and close. No fsync:
        resuming is for interrupted runs (Ctrl-C, a killed process), whose written lines the OS
        keeps; a crash of the machine itself may lose the last lines, which `read_results`
        repairs and a resumed run grades again."""
        if self._handle.closed:
            return
        try:
            if self._header is not None:
                self._handle.write(self._pending_header())
            self._handle.close()
        except OSError as error:
            with contextlib.suppress(OSError):
                self._handle.close()
            raise EvalOutputError("results file", self.path, os_error_reason(error)) from None

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
