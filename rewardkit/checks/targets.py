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


def walk(directory: str) -> Iterator[str]:
    """The Python files under ``directory``, in a stable order (regular files only: no dangling
    symlinks, pipes or devices, which could not be read or would block)."""
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(
            d for d in dirs if d not in SKIPPED_DIRECTORIES and not d.endswith(".egg-info")
        )
        for name in sorted(files):
            if name.endswith(PYTHON_SUFFIXES):
                path = os.path.join(root, name)
                if os.path.isfile(path):
                    yield path


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
    problem) for each given path that cannot be checked (missing, a pipe, a device...).

    ``-`` (stdin) is the caller's business and is left out."""
    found: dict[str, str] = {}
    problems: list[tuple[str, str]] = []
    for raw in paths:
        if raw == "-":
            continue
        if os.path.isdir(raw):
            for path in walk(raw):
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
