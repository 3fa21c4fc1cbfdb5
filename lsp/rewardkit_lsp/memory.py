"""Garbage collection off the edit path, and memory back to the system once documents close.

CPython's full collections scan every tracked object; with the engine's caches and lsprotocol's
classes that took ~100 ms in the middle of an edit. Freezing moves what is alive now out of the
collector's sight (``gc.freeze``), so automatic collections only look at recent objects; the
full collection runs when nobody waits (:func:`collect_now`).

Python's allocator returns memory in whole 1 MiB arenas, so one long-lived object made during a
burst of documents keeps a whole arena after they close. The idle collection first lets go of
what the interpreter itself kept from the burst (:func:`recycle_await_iterators`,
:func:`drop_interpreter_caches`), then trims (:func:`release_to_system`).
"""

from __future__ import annotations

import asyncio
import functools
import gc
import os
import sys
import urllib.parse
from collections.abc import Callable
from typing import Any

YOUNG_THRESHOLD = 10_000
"""Allocations between two young collections once start-up state is frozen (CPython's default,
700, collects several times within one edit of a 2,000-line module; what an edit leaves behind
is freed by :func:`settle` after its reply instead)."""

AWAIT_FREE_LIST = 255
"""How many spent ``await`` iterators CPython's ``_asyncio`` keeps for reuse (its
``FI_FREELIST_MAXLEN``)."""

_reserve_future: asyncio.Future[None] | None = None
"""What the reserved iterators await (pending for good; :func:`reserve_await_iterators`)."""
_await_reserve: list[Any] = []
"""``await`` iterators made at start-up, kept out of asyncio's free list until a recycle."""


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
    recycle_await_iterators()
    drop_interpreter_caches()
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    release_to_system()


def reserve_await_iterators() -> None:
    """At start-up: make and keep :data:`AWAIT_FREE_LIST` ``await`` iterators, in start-up
    memory, for :func:`recycle_await_iterators` (call it with the event loop running)."""
    global _reserve_future
    _reserve_future = asyncio.get_running_loop().create_future()
    _await_reserve[:] = [_reserve_future.__await__() for _ in range(AWAIT_FREE_LIST)]


def recycle_await_iterators() -> None:
    """Refill asyncio's free list of ``await`` iterators with the start-up ones.

    Each ``await`` of a future takes an iterator from that list and gives it back after. A
    burst of documents (hundreds of checks awaiting at once) leaves the list holding iterators
    made during the burst, alive for good, one in each of the burst's allocator arenas, which
    then never go back to the system (on a busy machine: 45 -> 68 MB with 800 documents open,
    56 MB after they close). Take every iterator out of the list, put the reserve in (the list
    is full again), and drop the ones taken out: freed for real. Then take the reserve back
    out, for the next time."""
    future = _reserve_future
    if future is None:
        return
    taken = [future.__await__() for _ in range(AWAIT_FREE_LIST)]
    _await_reserve.clear()
    del taken
    _await_reserve[:] = [future.__await__() for _ in range(AWAIT_FREE_LIST)]


def drop_interpreter_caches() -> None:
    """Empty the interpreter's caches that keep small objects of past requests alive: the type
    attribute cache (CPython 3.11 holds each attribute name looked up, such as a name a
    ``getattr`` built from a message) and ``urllib.parse``'s cache of the last URIs split.

    A few hundred small objects, but made during a burst of opened documents they sit in that
    burst's 1 MiB allocator arenas and keep them from going back to the system once the
    documents close (``benchmarks/lsp_memory.py``, 1,500 documents: 50 MB before, 92 MB open,
    88 MB after closing; 79 MB with these caches dropped; 58 MB with the converters also made
    at start-up, ``RewardkitLanguageServer.prepare_converters``). They refill on the next request.
    """
    clear_type_cache = getattr(sys, "_clear_internal_caches", None) or sys._clear_type_cache
    clear_type_cache()
    clear_parse_cache = getattr(urllib.parse, "clear_cache", None)
    if clear_parse_cache is not None:
        clear_parse_cache()


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
    returns only the large blocks: its 1 MiB arenas go back only when wholly empty, which is
    why nothing long-lived may be made during a burst of documents
    (:func:`drop_interpreter_caches`; docs/lsp.md, "Memory")."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
