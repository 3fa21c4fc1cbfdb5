"""Garbage collection off the edit path: collect when idle, freeze what survives.

CPython's full collections scan every tracked object; with the engine's caches and lsprotocol's
classes that took ~100 ms in the middle of an edit. Freezing moves what is alive now out of the
collector's sight (``gc.freeze``), so automatic collections only look at recent objects; the
full collection runs when nobody waits (:func:`collect_now`).
"""

from __future__ import annotations

import functools
import gc
import os
from collections.abc import Callable

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


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None (another libc, another system)."""
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return None
    except (AttributeError, ValueError, OSError):
        return None
    import ctypes

    try:
        return ctypes.CDLL("libc.so.6").malloc_trim  # type: ignore[no-any-return]
    except (OSError, AttributeError):
        return None


def release_to_system() -> None:
    """Return free heap pages to the system: glibc keeps what a process freed (the analyses of
    documents since closed) in its arenas, so without a trim the server's resident memory
    would not fall after documents close. Under Python's own allocator (the default) this
    returns only the large blocks: its 1 MiB arenas go back only when wholly empty, which a few
    long-lived objects prevent; run the server with ``PYTHONMALLOC=malloc`` to have it all
    back (docs/lsp.md, "Memory")."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
