"""Garbage collection off the edit path: collect when idle, freeze what survives.

CPython's full collections scan every tracked object; with the engine's caches and lsprotocol's
classes that took ~100 ms in the middle of an edit. Freezing moves what is alive now out of the
collector's sight (``gc.freeze``), so automatic collections only look at recent objects; the
full collection runs when nobody waits (:func:`collect_now`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os
import sys
from pathlib import Path

YOUNG_THRESHOLD = 10_000
"""Allocations between two young collections once start-up state is frozen (CPython's default,
700, collects several times within one edit of a 2,000-line module; what an edit leaves behind
is freed by :func:`settle` after its reply instead)."""


def freeze() -> None:
    """Keep the collector from scanning what is alive now (start-up state, analysed documents)."""
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)


def settle() -> None:
    """After a request is answered: free its cyclic garbage (a collection of the young
    generations only: what the request allocated), then freeze what stays."""
    gc.collect(1)
    gc.freeze()


def collect_now() -> None:
    """A full collection of everything (frozen objects too), then freeze the survivors, and
    hand the freed pages back to the system (:func:`release_to_system`)."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    release_to_system()


def _load_trim() -> object | None:
    """glibc's ``malloc_trim``, or None (another libc, another system)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc.malloc_trim
    except (OSError, AttributeError):  # musl and others have no malloc_trim
        return None


_MALLOC_TRIM = _load_trim()


def release_to_system() -> None:
    """Return free heap pages to the system: glibc keeps what a process freed (the analyses of
    documents since closed) in its arenas, so without a trim the server's resident memory
    never falls after documents close."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)  # type: ignore[operator]


def _launched_as_the_server() -> bool:
    """Whether this process is ``python -m rewardkit_lsp`` or ``rewardkit lsp`` (not a test or
    a program that calls :func:`rewardkit_lsp.cli.main` itself)."""
    argv = sys.orig_argv
    if "-m" in argv[1:-1] and argv[argv.index("-m") + 1] == "rewardkit_lsp":
        return True
    return Path(sys.argv[0]).name == "rewardkit" and "lsp" in sys.argv[1:2]


def restart_with_the_system_allocator() -> None:
    """Run the server on glibc's malloc (``PYTHONMALLOC=malloc``): re-execute this process as it
    was started (same pid, same pipes), before anything is read.

    Why: Python's small-object allocator hands memory back only in whole 1 MiB arenas, and a few
    long-lived objects allocated while documents were open keep most of them; the server held
    all it ever used (49 -> 90 MB with 1,500 documents open, still 87 MB after closing them).
    glibc's free pages go back with :func:`release_to_system` (59 MB after closing). Skipped
    when ``PYTHONMALLOC`` is set (set ``PYTHONMALLOC=pymalloc`` to opt out) or there is no
    glibc."""
    if _MALLOC_TRIM is None or "PYTHONMALLOC" in os.environ or not _launched_as_the_server():
        return
    os.execve(sys.executable, sys.orig_argv, {**os.environ, "PYTHONMALLOC": "malloc"})
