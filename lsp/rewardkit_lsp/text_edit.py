"""The difference between two versions of a document as one replaced span.

The protocol process sends the analysis process only what changed since the version it last
sent (editors send whole documents: 60 KB for a 2,000-line module, at every keystroke).
"""

from __future__ import annotations

from typing import NamedTuple


class Replacement(NamedTuple):
    """``new == old[:prefix] + middle + old[len(old) - suffix:]``."""

    prefix: int
    suffix: int
    middle: str

    def apply(self, old: str) -> str:
        return old[: self.prefix] + self.middle + old[len(old) - self.suffix :]


def _shared(old: str, new: str, limit: int, from_end: bool) -> int:
    """Length of the longest shared prefix (or suffix) of at most ``limit`` characters."""
    low, high = 0, limit
    while low < high:  # binary search over slice comparisons (each runs at C speed)
        size = (low + high + 1) // 2
        same = (
            old[len(old) - size :] == new[len(new) - size :]
            if from_end
            else old[:size] == new[:size]
        )
        low, high = (size, high) if same else (low, size - 1)
    return low


def replacement(old: str, new: str) -> Replacement:
    """The one span of ``old`` that ``new`` replaces."""
    prefix = _shared(old, new, min(len(old), len(new)), from_end=False)
    suffix = _shared(old, new, min(len(old), len(new)) - prefix, from_end=True)
    return Replacement(prefix, suffix, new[prefix : len(new) - suffix])
