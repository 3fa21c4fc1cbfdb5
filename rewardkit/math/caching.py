"""Memoization bounded by bytes: the grader's caches stay small whatever answers stream through.

``functools.lru_cache(maxsize=65_536)`` bounds entries, not memory: 20,000 unique 19 KB answers
grew a process by 730 MB, and the projected ceiling was several GB. ``bounded_cache`` keeps an LRU
of string-keyed results whose estimated size (key + result) stays under ``max_bytes``, and does
not cache keys longer than ``max_key_length`` (a long answer is almost never graded twice; caching
it would evict hundreds of short, often repeated ones). Hits take no lock.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from functools import update_wrapper
from typing import Any, Generic, NamedTuple, TypeVar

R = TypeVar("R")
KB = 1024
MB = 1024 * KB

#: What one entry costs besides its key and result: the ordered dict's node and the stored tuple.
ENTRY_OVERHEAD = 200


def text_size(key: Hashable, result: Any) -> int:
    """Size of an entry whose key and result are strings (or tuples of strings): their own size."""
    return _strings_size(key) + _strings_size(result) + ENTRY_OVERHEAD


def _strings_size(value: Any) -> int:
    if isinstance(value, tuple):
        return sys.getsizeof(value) + sum(_strings_size(item) for item in value)
    return sys.getsizeof(value)


def per_character(bytes_per_character: int, base: int) -> Callable[[Hashable, Any], int]:
    """An estimate for results that are trees built from the key (parsed values, sympy expressions):
    ``base + bytes_per_character * len(key)`` plus the key, measured worst cases included."""

    def size(key: Hashable, result: Any) -> int:
        length = len(key) if isinstance(key, str) else sum(len(part) for part in key if isinstance(part, str))  # type: ignore[attr-defined]
        return _strings_size(key) + base + bytes_per_character * length + ENTRY_OVERHEAD

    return size


class CacheInfo(NamedTuple):
    """Like ``functools._CacheInfo``, with the estimated bytes held and the byte bound."""

    hits: int
    misses: int
    entries: int
    bytes: int
    max_bytes: int


_MISSING = object()


class BoundedCache(Generic[R]):
    """A thread-safe LRU map from hashable keys to results, bounded by the estimated bytes it holds."""

    def __init__(self, max_bytes: int, size: Callable[[Hashable, Any], int] = text_size) -> None:
        self.max_bytes = max_bytes
        self._size = size
        self._entries: OrderedDict[Hashable, tuple[R, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()  # inserts and evictions; lookups are single atomic dict operations
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable, default: Any = None) -> R | Any:
        """The cached result (marked most recently used), or ``default``."""
        entry = self._entries.get(key, _MISSING)
        if entry is _MISSING:
            self.misses += 1
            return default
        self.hits += 1
        with contextlib.suppress(KeyError):  # evicted by another thread in between: still a valid result
            self._entries.move_to_end(key)
        return entry[0]  # type: ignore[index]

    def put(self, key: Hashable, result: R) -> None:
        """Store ``result``; evict the least recently used entries beyond ``max_bytes``.
        An entry bigger than an eighth of the bound is not stored."""
        weight = self._size(key, result)
        if weight > self.max_bytes // 8:
            return
        with self._lock:
            previous = self._entries.pop(key, None)
            if previous is not None:
                self._bytes -= previous[1]
            self._entries[key] = (result, weight)
            self._bytes += weight
            while self._bytes > self.max_bytes:
                _, (_, evicted) = self._entries.popitem(last=False)
                self._bytes -= evicted

    def pop(self, key: Hashable) -> None:
        """Forget ``key`` (no-op when absent)."""
        with self._lock:
            previous = self._entries.pop(key, None)
            if previous is not None:
                self._bytes -= previous[1]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0
            self.hits = self.misses = 0

    def info(self) -> CacheInfo:
        return CacheInfo(self.hits, self.misses, len(self._entries), self._bytes, self.max_bytes)

    def __len__(self) -> int:
        return len(self._entries)


def bounded_cache(
    max_bytes: int,
    *,
    max_key_length: int = 4096,
    size: Callable[[Hashable, Any], int] = text_size,
) -> Callable[[Callable[[str], R]], Callable[[str], R]]:
    """Memoize a one-string-argument function within ``max_bytes`` (estimated by ``size``).

    Keys longer than ``max_key_length`` characters are computed every time. Exceptions are not
    cached. The wrapper has ``cache_clear()`` and ``cache_info()`` like ``functools.lru_cache``.
    """

    def decorate(function: Callable[[str], R]) -> Callable[[str], R]:
        cache: BoundedCache[R] = BoundedCache(max_bytes, size)

        def cached(text: str) -> R:
            if len(text) > max_key_length:
                return function(text)
            result = cache.get(text, _MISSING)
            if result is _MISSING:
                result = function(text)
                cache.put(text, result)
            return result  # type: ignore[return-value]

        update_wrapper(cached, function)
        cached.cache_clear = cache.clear  # type: ignore[attr-defined]
        cached.cache_info = cache.info  # type: ignore[attr-defined]
        cached.cache = cache  # type: ignore[attr-defined]
        return cached

    return decorate
