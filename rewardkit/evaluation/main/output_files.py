"""The run's output files: checked before grading starts, and written whole or not at all.

The input, the results file, the JSON report and the HTML report must be four different files
(an output written over the input destroys it); an existing results file is only continued
(`--resume`) or replaced (`--overwrite`) when asked; an output that cannot be written is found
before an hour of grading, not after it. Reports are written to a temporary file in the same
directory, synced, then renamed over the target: a full disk leaves the previous report (or
none), never a truncated one. Text leaving the process is valid UTF-8 even when model output
carried a lone surrogate (a `\\udc80` JSON escape): it is written back as that escape.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path

from rewardkit.evaluation.errors import EvalConfigError, EvalOutputError, os_error_reason

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def escape_lone_surrogates(text: str) -> str:
    """`text` with each surrogate code point written as its JSON escape (`\\udc80`).

    Lone surrogates come from JSON escapes in the input (`"\\udc80"`) and cannot be encoded as
    UTF-8. Inside a JSON string the escape reads back as the same code point, so a results
    line stays exact; elsewhere it shows what the input held."""
    return _LONE_SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def encode_text(text: str) -> bytes:
    """UTF-8 bytes of `text`; lone surrogates (rare) become JSON escapes rather than an error."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return escape_lone_surrogates(text).encode("utf-8")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomically(path: str | Path, data: bytes, *, what: str) -> None:
    """Write `data` to `path` whole or not at all (temporary file, fsync, rename).

    A symlink is followed (its target is replaced); a device, FIFO or pipe such as
    `/dev/stdout` is written in place, through the path as given, as it cannot be renamed
    over. Raises `EvalOutputError` naming `what`."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as error:
        raise EvalOutputError(what, path, os_error_reason(error)) from None
    try:
        if mode is not None and stat.S_ISDIR(mode):
            raise IsADirectoryError(21, "it is a directory")
        if mode is not None and not stat.S_ISREG(mode):
            with open(path, "wb") as handle:
                handle.write(data)
            return
        _replace(Path(os.path.realpath(path)), data, mode)
    except OSError as error:
        raise EvalOutputError(what, path, os_error_reason(error)) from None


def _replace(target: Path, data: bytes, mode: int | None) -> None:
    """Write `data` to a temporary file beside `target`, sync it, and rename it over `target`."""
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor, staging = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=".partial", dir=target.parent
    )
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())  # a full disk shows here, before the rename
        os.chmod(staging, stat.S_IMODE(mode) if mode is not None else 0o666 & ~_umask())
        os.replace(staging, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(staging)
        raise


def check_writable(path: str | Path, *, what: str) -> None:
    """Fail before the run if `path` cannot be written: a directory, a symlink loop, a parent
    that cannot be created, or a directory without write permission. Creates missing parent
    directories."""
    try:
        try:
            mode: int | None = os.stat(path).st_mode  # (ELOOP for a symlink loop)
        except (FileNotFoundError, NotADirectoryError):  # (a file in the way: said below)
            mode = None
        if mode is not None and stat.S_ISDIR(mode):
            raise IsADirectoryError(21, "it is a directory")
        if mode is not None:
            if not os.access(path, os.W_OK):
                raise PermissionError(13, "Permission denied")
            return
        parent = Path(os.path.realpath(path)).parent  # (a dangling symlink: its target's)
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise NotADirectoryError(
                20, f"a file is in the way of its directory {parent}"
            ) from None
        if not os.access(parent, os.W_OK | os.X_OK):
            raise PermissionError(13, f"Permission denied (directory {parent})")
    except OSError as error:
        raise EvalOutputError(what, path, os_error_reason(error)) from None


def _identity(path: str | Path) -> tuple[object, ...]:
    """What makes two paths the same file: device and inode when it exists (symlinks and hard
    links included), else the resolved path."""
    try:
        status = os.stat(path)
    except OSError:
        return ("path", os.path.realpath(path))
    return ("inode", status.st_dev, status.st_ino)


def check_distinct_files(files: Mapping[str, str | Path | None]) -> None:
    """Raise `EvalConfigError` when two of the named files (input, results, report, HTML) are
    the same file, whatever the path that names it."""
    seen: dict[tuple[object, ...], tuple[str, str | Path]] = {}
    for role, path in files.items():
        if path is None:
            continue
        key = _identity(path)
        if key in seen:
            other_role, other_path = seen[key]
            same = "" if str(other_path) == str(path) else f" ({other_path} and {path})"
            raise EvalConfigError(
                f"the {other_role} and the {role} are the same file{same}: "
                f"writing the {role} would destroy the {other_role}"
            )
        seen[key] = (role, path)


def has_content(path: str | Path) -> bool:
    """True for a regular file that is not empty (an existing results file worth keeping)."""
    try:
        status = os.stat(path)
    except OSError:
        return False
    return stat.S_ISREG(status.st_mode) and status.st_size > 0
