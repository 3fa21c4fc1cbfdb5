"""The `--output` results file: one JSON line per case and nothing else, appended and flushed
as each batch arrives, with the run's metadata in a hidden file beside it.

Readers of JSONL (`pandas.read_json(lines=True)`, `datasets.load_dataset("json")`) get exactly
one row per case. The metadata (`.NAME.rewardkit.json`) records the input's identity (name,
size, SHA-256) and the options that decide verdicts, so `--resume` refuses to mix two runs
(another input, another policy) unless forced. A run holds an OS lock on the results file from
start to end, so a second run on it is refused. A run killed mid-write leaves at most a
partial last line; `read_results` drops it (and truncates it away before appending) so
`--resume` neither loses nor double-counts a case.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field, is_dataclass
from pathlib import Path
from typing import IO, Any

from rewardkit.bounded_files import FileTooLargeError, NotRegularFileError, read_regular_file
from rewardkit.evaluation.errors import (
    EvalConfigError,
    EvalOutputError,
    ForeignResultsWarning,
    os_error_reason,
)
from rewardkit.evaluation.inputs.cases import EvalInputError, fast_loads
from rewardkit.evaluation.main.output_files import encode_text, write_atomically
from rewardkit.evaluation.option_names import option
from rewardkit.evaluation.scoring import CaseResult
from rewardkit.math.verdict import quoted

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no OS lock on results files
    fcntl = None  # type: ignore[assignment]

RESULTS_FORMAT = 2
"""Version of the results file's layout (the metadata's `rewardkit_results` value): 1 had the
metadata as the file's first line, 2 keeps it beside the file."""
METADATA_KEY = "rewardkit_results"
METADATA_SUFFIX = ".rewardkit.json"


class InputFingerprint:
    """The identity of a run's input: its name, size and SHA-256.

    A regular file is hashed in a background thread (about 20 ms for 20 MB, with the GIL
    released) while the first cases are graded; the results file's metadata waits for it.
    A pipe cannot be read twice, so it has a name only (and cannot be checked on resume)."""

    def __init__(self, name: str, *, size: int | None = None, sha256: str | None = None) -> None:
        self.name = name
        self.size = size
        self._sha256 = sha256
        self._thread: threading.Thread | None = None
        self._error: OSError | None = None

    @classmethod
    def of_descriptor(cls, descriptor: int, name: str) -> InputFingerprint:
        """Start hashing the file open at `descriptor` (if it is a regular file) in the
        background, by position: the stream's own reader is not disturbed."""
        try:
            status = os.fstat(descriptor)
        except OSError:
            return cls(name)
        if not stat.S_ISREG(status.st_mode):
            return cls(name)
        fingerprint = cls(name, size=status.st_size)
        fingerprint._thread = threading.Thread(
            target=fingerprint._hash_file,
            args=(descriptor,),
            name="rewardkit-input-hash",
            daemon=True,
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

    def _hash_file(self, descriptor: int) -> None:
        digest = hashlib.sha256()
        offset = 0
        try:
            while block := os.pread(descriptor, 1 << 20, offset):
                digest.update(block)
                offset += len(block)
        except OSError as error:
            self._error = error
            return
        self._sha256 = digest.hexdigest()

    def wait(self) -> None:
        """Wait for the hash (before the file is closed)."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def to_json(self) -> dict[str, Any]:
        """`{"name", "bytes", "sha256"}` (waits for the hash)."""
        self.wait()
        return {"name": self.name, "bytes": self.size, "sha256": self._sha256}


def run_metadata(
    fingerprint: InputFingerprint, grading: Mapping[str, Any], version: str
) -> dict[str, Any]:
    """What the results file's metadata says: what was graded, and how."""
    return {
        METADATA_KEY: RESULTS_FORMAT,
        "input": fingerprint.to_json(),
        "grading": dict(grading),
        "rewardkit_version": version,
    }


def metadata_path(results: str | Path) -> Path:
    """Where the run's metadata of `results` lives: `.NAME.rewardkit.json` beside the file the
    path names (symlinks resolved). A hidden file with its own suffix: readers of JSONL
    (`datasets` with `data_dir`, Spark, globs such as `*.jsonl`) never take it for data."""
    target = Path(os.path.realpath(results))
    return target.with_name(f".{target.name}{METADATA_SUFFIX}")


def write_metadata(results: str | Path, metadata: Mapping[str, Any]) -> None:
    """Write the metadata of `results` whole or not at all (`EvalOutputError`)."""
    text = json.dumps(metadata, indent=2, ensure_ascii=False) + "\n"
    write_atomically(
        metadata_path(results), encode_text(text), what="run metadata of the results file"
    )


MAX_METADATA_BYTES = 1 << 20
"""The largest metadata file read (ours are ~1 KB): a device such as `/dev/zero` behind its
name must not be read until memory runs out."""

_METADATA_TYPES: Mapping[str, tuple[type, ...]] = {
    METADATA_KEY: (int,),
    "input": (dict,),
    "grading": (dict,),
    "rewardkit_version": (str, type(None)),
}
"""The metadata's fields and the JSON types each may have (`rewardkit_version`: optional)."""

_INPUT_TYPES: Mapping[str, tuple[type, ...]] = {
    "name": (str, type(None)),
    "bytes": (int, type(None)),
    "sha256": (str, type(None)),
    "changed_during_run": (bool,),
}


def _metadata_problem(record: object) -> str | None:
    """Why `record` is not rewardkit's metadata of a results file (None when it is)."""
    if not isinstance(record, dict) or METADATA_KEY not in record:
        return f"a JSON object with a {METADATA_KEY!r} field was expected"
    problems = _type_problems(record, _METADATA_TYPES, "")
    part = record.get("input")
    if not problems and isinstance(part, dict):
        problems = _type_problems(part, _INPUT_TYPES, "input.")
    return problems


def _type_problems(
    record: dict[str, Any], types: Mapping[str, tuple[type, ...]], prefix: str
) -> str | None:
    """The first field of `record` whose value is none of its `types` (None: all fit)."""
    for key, allowed in types.items():
        if key not in record:
            continue
        value = record[key]
        if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
            names = " or ".join(
                "null" if kind is type(None) else _JSON_NAMES[kind] for kind in allowed
            )
            return f"the field '{prefix}{key}' is {_json_name(value)}, not {names}"
    return None


_JSON_NAMES: Mapping[type, str] = {
    int: "an integer",
    str: "a string",
    dict: "an object",
    bool: "true or false",
}


def _json_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return "an array"
    if isinstance(value, float):
        return "a number"
    return _JSON_NAMES.get(type(value), type(value).__name__)


def _metadata_bytes(where: Path) -> bytes:
    """The bytes of the metadata file `where`, refusing a FIFO, a device or a file over
    `MAX_METADATA_BYTES` without blocking or reading it whole (FileNotFoundError and other
    OSErrors are the caller's)."""
    try:
        return read_regular_file(where, MAX_METADATA_BYTES)
    except NotRegularFileError:
        why = "not a regular file (a FIFO, a device or a directory)"
    except FileTooLargeError:
        why = f"larger than {MAX_METADATA_BYTES >> 20} MiB"
    raise EvalInputError(
        f"not rewardkit's metadata of a results file: {why}; delete it and add "
        f"{option('force_resume')} to continue the results anyway",
        path=str(where),
    )


def _read_metadata(path: Path) -> Mapping[str, Any] | None:
    """The metadata beside `path` (None when there is none); `EvalInputError` when it is
    damaged (a resume cannot tell which run it continues)."""
    where = metadata_path(path)
    try:
        data = _metadata_bytes(where)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise EvalInputError(
            f"cannot read the run's metadata for {option('resume')}: {os_error_reason(exc)}",
            path=str(where),
        ) from None
    try:
        metadata = json.loads(data)
    except (ValueError, RecursionError) as exc:
        problem: str | None = f"{type(exc).__name__}: {str(exc)[:200]}"
    else:
        problem = _metadata_problem(metadata)
    if problem is not None:
        raise EvalInputError(
            f"not rewardkit's metadata of a results file ({problem}); delete it "
            f"and add {option('force_resume')} to continue the results anyway",
            path=str(where),
        )
    return metadata  # type: ignore[no-any-return]


@dataclass(frozen=True)
class ResultsFile:
    """What an existing results file holds: the run's metadata (None if it has none) and its
    results."""

    metadata: Mapping[str, Any] | None
    results: list[CaseResult]
    valid_bytes: int = 0
    """Length of the file's complete lines (a torn last line starts after them)."""
    ends_with_newline: bool = True
    legacy_header_bytes: int = 0
    """Length of a first line holding the metadata (rewardkit 0.1 wrote it there); `repair`
    moves it beside the file."""
    lines: list[int] = field(default_factory=list)
    """The line number of each result (for messages)."""

    @property
    def empty(self) -> bool:
        """No result: a new file, as far as resuming goes (the metadata is written anew)."""
        return not self.results

    def repair(self, path: str | Path) -> None:
        """Truncate a torn last line away and end the file with a newline, so appends start
        clean; move a metadata line of rewardkit 0.1 out of the file."""
        try:
            size = os.stat(path).st_size
        except FileNotFoundError:
            return
        except OSError as error:
            raise EvalOutputError("results file", path, os_error_reason(error)) from None
        clean = size == self.valid_bytes and self.ends_with_newline
        if clean and not self.legacy_header_bytes:
            return
        try:
            with open(path, "r+b") as handle:
                if self.legacy_header_bytes and self.metadata is not None:
                    write_metadata(path, self.metadata)
                    handle.seek(self.legacy_header_bytes)
                    rest = handle.read(self.valid_bytes - self.legacy_header_bytes)
                    handle.seek(0)
                    handle.write(rest)
                    handle.truncate(len(rest))
                    end = len(rest)
                else:
                    handle.truncate(self.valid_bytes)
                    end = self.valid_bytes
                if end and not self.ends_with_newline:
                    handle.seek(end)
                    handle.write(b"\n")
        except OSError as error:
            raise EvalOutputError("results file", path, os_error_reason(error)) from None


def _is_metadata(record: object) -> bool:
    return isinstance(record, dict) and METADATA_KEY in record


def read_results(path: str | Path) -> ResultsFile:
    """Read the metadata and results already in `path` (for `--resume`); a torn last line (a
    kill in the middle of a write) is dropped, and `ResultsFile.repair` truncates it away. A
    malformed line that is not the last one is corruption, reported as `EvalInputError`.
    """
    name = str(path)
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return ResultsFile(None, [])
    except OSError as exc:
        raise EvalInputError(
            f"cannot read results for {option('resume')}: {os_error_reason(exc)}", path=name
        ) from None
    metadata = _read_metadata(Path(path))
    legacy = 0
    results: list[CaseResult] = []
    numbers: list[int] = []
    seen: set[str] = set()
    segments = data.split(b"\n")  # the last segment is b"" when the file ends with a newline
    good_end = 0
    for number, raw in enumerate(segments, start=1):
        unterminated = number == len(segments)
        if raw.strip():
            try:
                record = fast_loads(raw)
                if number == 1 and _is_metadata(record):
                    problem = _metadata_problem(record)
                    if problem is not None:
                        raise EvalInputError(
                            f"not rewardkit's metadata of a results file ({problem})",
                            path=name,
                            line=1,
                        )
                    legacy = len(raw) + (0 if unterminated else 1)
                    metadata = metadata or record
                    good_end += legacy
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
                numbers.append(number)
        good_end += len(raw) + (0 if unterminated else 1)
    return ResultsFile(
        metadata,
        results,
        valid_bytes=good_end,
        ends_with_newline=good_end == 0 or data[good_end - 1 : good_end] == b"\n",
        legacy_header_bytes=legacy,
        lines=numbers,
    )


def _shown(value: object) -> str:
    return quoted(value) if isinstance(value, str) else repr(value)


def _differences(theirs: Mapping[str, Any], ours: Mapping[str, Any]) -> list[str]:
    keys = sorted(set(theirs) | set(ours))
    return [
        f"{key} {_shown(theirs.get(key))} there, {_shown(ours.get(key))} here"
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
    grading options, or it does not say (no metadata, an input that is a pipe, an input that
    changed while it was graded)."""
    if existing.empty:
        return
    metadata = existing.metadata
    problems: list[str] = []
    if metadata is None:
        problems.append(
            f"it has no rewardkit metadata ({metadata_path(path).name} is missing beside it: "
            "written by hand, by an older rewardkit, or copied without it)"
        )
    else:
        problems += _input_differences(dict(metadata.get("input") or {}), fingerprint)
        changed = _differences(dict(metadata.get("grading") or {}), grading)
        if changed:
            problems.append("they were graded with other options (" + "; ".join(changed) + ")")
    if problems:
        raise EvalConfigError(
            f"{path}: {option('resume')} would mix two runs: "
            + "; ".join(problems)
            + f". Add {option('force_resume')} to continue it anyway, or use "
            f"{option('overwrite')} (or another {option('output')}) to start over"
        )


def _input_differences(theirs: Mapping[str, Any], fingerprint: InputFingerprint) -> list[str]:
    ours = fingerprint.to_json()
    if theirs.get("changed_during_run"):
        return [f"the input {theirs.get('name')} changed while they were graded"]
    if ours["sha256"] is None or theirs.get("sha256") is None:
        return [f"the input {ours['name']} cannot be checked (not a regular file, or not hashed)"]
    if theirs.get("sha256") != ours["sha256"]:
        return [
            f"they were graded from another input ({theirs.get('name')}, "
            f"{theirs.get('bytes')} bytes, sha256 {str(theirs.get('sha256'))[:12]}...; "
            f"this one: {ours['name']}, {ours['bytes']} bytes, sha256 {ours['sha256'][:12]}...)"
        ]
    return []


def check_foreign_ids(
    existing: ResultsFile, input_ids: set[str], *, path: str | Path, force: bool
) -> list[CaseResult]:
    """The results of `existing` whose ids are in the input. Results for ids the input does
    not have were never graded from it: `EvalConfigError` naming them, or with `force`,
    left out (not counted, not done) and named in a `ForeignResultsWarning`."""
    foreign = [
        (line, result.id)
        for line, result in zip(existing.lines, existing.results)
        if result.id not in input_ids
    ]
    if not foreign:
        return existing.results
    shown = ", ".join(f"line {line} {quoted(case_id)}" for line, case_id in foreign[:5])
    more = f" and {len(foreign) - 5:,} more" if len(foreign) > 5 else ""
    what = (
        f"{path}: {len(foreign):,} result{'s are' if len(foreign) != 1 else ' is'} for "
        f"ids the input does not have ({shown}{more})"
    )
    if not force:
        raise EvalConfigError(
            f"{what}: they were not graded from this input. Remove them, or use "
            f"{option('overwrite')} (or another {option('output')}) to start over"
        )
    warnings.warn(f"{what}: left out of the report", ForeignResultsWarning, stacklevel=4)
    return [result for result in existing.results if result.id in input_ids]


_held_locks: set[int] = set()


def _close_locks_in_child() -> None:
    """In a forked child (a worker): close the lock descriptors inherited from the run, so the
    lock lives exactly as long as the run's process (a grader pool outliving it cannot hold it)."""
    for descriptor in _held_locks:
        with contextlib.suppress(OSError):
            os.close(descriptor)
    _held_locks.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_close_locks_in_child)


class ResultsLock:
    """An exclusive OS lock (`flock`) on a results file, held for the whole run: a second run
    on the same file (`-o`, `--resume` or `--overwrite`, from any process) is refused at once.
    The OS releases it when the run's process ends, however it ends: never stale after a crash.
    Devices and FIFOs (`-o /dev/null`) are not locked."""

    def __init__(self, path: str | Path) -> None:
        self.path = path
        self.descriptor: int | None = None
        self.created = False

    def acquire(self) -> ResultsLock:
        """Open (creating it if need be) and lock the file; `EvalConfigError` if another run
        holds it, `EvalOutputError` if it cannot be opened."""
        try:
            mode = os.stat(self.path).st_mode
        except FileNotFoundError:
            mode = None
        except OSError as error:
            raise EvalOutputError("results file", self.path, os_error_reason(error)) from None
        if (mode is not None and not stat.S_ISREG(mode)) or fcntl is None:
            return self
        flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NONBLOCK
        try:
            descriptor = os.open(self.path, flags, 0o666)
        except OSError as error:
            raise EvalOutputError("results file", self.path, os_error_reason(error)) from None
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(descriptor)
            raise EvalConfigError(
                f"the results file {self.path} is being written by another run (it holds a "
                f"lock on it): wait for that run to end, or choose another {option('output')}"
            ) from None
        self.descriptor = descriptor
        self.created = mode is None
        _held_locks.add(descriptor)
        return self

    def release(self, *, failed: bool = False) -> None:
        """Unlock. A run that failed before writing a result removes the file it created (and
        the metadata written beside it)."""
        descriptor, self.descriptor = self.descriptor, None
        if descriptor is None:
            return
        with contextlib.suppress(OSError):
            if failed and self.created and os.fstat(descriptor).st_size == 0:
                os.unlink(metadata_path(self.path))
                os.unlink(self.path)
        _held_locks.discard(descriptor)
        os.close(descriptor)


class ResultsWriter:
    """Appends results to a JSONL file, one full line per case, each batch flushed to the OS as
    it is written (a batch is ~0.1 s of work: a few writes a second): the file always holds
    every batch the run has received, and a kill loses none of them (a torn last line at most,
    graded again on resume). `metadata` (a callable, evaluated at the first write or at close)
    is written beside the file first. Write failures raise `EvalOutputError`."""

    def __init__(
        self,
        path: str | Path,
        *,
        append: bool = True,
        metadata: Callable[[], Mapping[str, Any]] | None = None,
        include_response: bool = True,
    ) -> None:
        self.path = Path(path)
        try:
            if self.path.parent and not self.path.parent.exists():
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle: IO[bytes] = open(self.path, "ab" if append else "wb")  # noqa: SIM115
        except OSError as error:
            raise EvalOutputError("results file", path, os_error_reason(error)) from None
        self._metadata = metadata
        self.include_response = include_response
        self.regular = stat.S_ISREG(os.fstat(self._handle.fileno()).st_mode)

    def write(self, result: CaseResult) -> None:
        """Append one case as one full line."""
        self.write_text(result.to_line(include_response=self.include_response))

    def _write_metadata(self) -> None:
        if self._metadata is None:
            return
        metadata, self._metadata = self._metadata(), None
        if self.regular:  # (a device or FIFO has nowhere beside it, and cannot be resumed)
            write_metadata(self.path, metadata)

    def write_text(self, text: str) -> None:
        """Append whole result lines (a chunk's, already serialised) with one write and flush."""
        data = encode_text(text)
        if self._metadata is not None:
            self._write_metadata()
        try:
            self._handle.write(data)
            self._handle.flush()
        except OSError as error:
            raise EvalOutputError("results file", self.path, os_error_reason(error)) from None

    def input_changed(self) -> None:
        """The input changed while it was graded: say so in the metadata, so that `--resume`
        refuses these results unless forced."""
        self._metadata = None
        with contextlib.suppress(EvalInputError):
            metadata = _read_metadata(self.path) if self.regular else None
            if metadata is not None:
                changed = dict(metadata)
                changed["input"] = {
                    **dict(metadata.get("input") or {}),
                    "sha256": None,
                    "changed_during_run": True,
                }
                write_metadata(self.path, changed)

    def close(self) -> None:
        """Write the metadata if nothing was written yet, flush to the OS and close. No fsync:
        resuming is for interrupted runs (Ctrl-C, a killed process), whose written lines the OS
        keeps; a crash of the machine itself may lose the last lines, which `read_results`
        repairs and a resumed run grades again."""
        if self._handle.closed:
            return
        try:
            self._write_metadata()
        finally:
            try:
                self._handle.close()
            except OSError as error:
                raise EvalOutputError("results file", self.path, os_error_reason(error)) from None

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
