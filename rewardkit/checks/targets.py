"""Which files ``rewardkit check PATHS`` checks: explicit files, and ``*.py``/``*.pyi`` under directories.

Imports only :mod:`os` and :mod:`stat`: the cached fast path of ``rewardkit check`` lists its
targets with it before deciding whether anything else needs importing.
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:  # no runtime import: the cached fast path stays light
    from collections.abc import Iterator, Sequence

SKIPPED_DIRECTORIES = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        "__pycache__",
        "node_modules",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".rewardkit_cache",
        "build",
        "dist",
        "site-packages",
    }
)
"""Directories never walked into when a directory is given (explicit files are still checked)."""

PYTHON_SUFFIXES = (".py", ".pyi")

_KINDS = (
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def walk(directory: str, problems: list[tuple[str, str]] | None = None) -> Iterator[str]:
    """The Python files under ``directory``, in a stable order (regular files only: no dangling
    symlinks, pipes or devices, which could not be read or would block).

    Iterative (a tree thousands of directories deep is walked like any other), depth first as
    ``os.walk``, symlinked directories not followed. A directory that cannot be listed is added
    to ``problems`` as (path, why) instead of being skipped silently."""
    pending = [directory]
    while pending:
        current = pending.pop()
        try:
            with os.scandir(current) as scanned:
                entries = list(scanned)
        except OSError as error:
            if problems is not None:
                problems.append((display(current), f"cannot read the directory ({error.strerror or error})"))
            continue
        subdirectories = []
        for entry in sorted(entries, key=lambda e: e.name):
            name = entry.name
            try:
                is_directory = entry.is_dir()
            except OSError:
                is_directory = False
            if is_directory:
                if name in SKIPPED_DIRECTORIES or name.endswith(".egg-info"):
                    continue
                if not entry.is_symlink():
                    subdirectories.append(entry.path)
            elif name.endswith(PYTHON_SUFFIXES) and os.path.isfile(entry.path):
                yield entry.path
        pending.extend(reversed(subdirectories))


def display(path: str) -> str:
    """How a path is shown in the output: as found, ``/``-separated, without a leading ``./``."""
    text = path.replace(os.sep, "/") if os.sep != "/" else path
    while text.startswith("./"):
        text = text[2:]
    return text


def irregular_kind(path: str) -> str | None:
    """What an existing path that is neither a directory nor a regular file is ("a named pipe"),
    ``None`` for a regular file or directory; raises ``OSError`` when it does not exist."""
    mode = os.stat(path).st_mode
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return next((kind for test, kind in _KINDS if test(mode)), "an unknown kind of file")


def find_targets(paths: Sequence[str]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(display, path) of every file to consider, unique and sorted by display; and (raw path,
    problem) for each given path that cannot be checked (missing, a pipe, a device...) and each
    directory under them that cannot be read.

    ``-`` (stdin) is the caller's business and is left out."""
    found: dict[str, str] = {}
    problems: list[tuple[str, str]] = []
    for raw in paths:
        if raw == "-":
            continue
        if os.path.isdir(raw):
            for path in walk(raw, problems):
                found.setdefault(display(path), path)
            continue
        try:
            kind = irregular_kind(raw)
        except OSError:
            problems.append((raw, "path does not exist"))
            continue
        if kind is not None:
            problems.append((raw, f"not a regular file ({kind})"))
        else:
            found.setdefault(display(raw), raw)
    return sorted(found.items()), problems
