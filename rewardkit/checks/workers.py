"""Work on many files in forked worker processes: the analyses of ``rewardkit check`` and the
fixes of ``--fix``.

Workers are forked (Linux), so the work items are inherited rather than pickled (checked files'
configurations hold read-only mappings that do not pickle); only results travel back. With
little work, one core, or another platform, everything runs in this process, with the same
results. A worker that dies (out of memory?) loses nothing: what it did not return is done here.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

BATCHES_PER_WORKER = 4

_WORK: tuple[Callable[[Any], Any], Sequence[Any]] | None = None
"""What the forked workers run: (function, items)."""


def _run_batch(indices: Sequence[int]) -> list[tuple[int, Any]]:
    assert _WORK is not None
    function, items = _WORK
    return [(index, function(items[index])) for index in indices]


def worker_count(sizes: Sequence[int], minimum_total: int) -> int:
    """How many worker processes to give items of these ``sizes`` (1: this process only)."""
    if len(sizes) < 2 or sum(sizes) < minimum_total:
        return 1
    if not sys.platform.startswith("linux"):  # fork is the cheap start; elsewhere one process
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, len(sizes)))


def batches(sizes: Sequence[int], count: int) -> list[list[int]]:
    """Indices of the items in ``count`` groups of about the same total size."""
    order = sorted(range(len(sizes)), key=lambda i: -sizes[i])
    groups: list[list[int]] = [[] for _ in range(count)]
    totals = [0] * count
    for index in order:  # largest first, each to the lightest group
        lightest = totals.index(min(totals))
        groups[lightest].append(index)
        totals[lightest] += sizes[index]
    return [group for group in groups if group]


def map_in_workers(
    function: Callable[[Item], Result],
    items: Sequence[Item],
    sizes: Sequence[int],
    *,
    minimum_total: int,
    meanwhile: Callable[[], object] | None = None,
) -> list[Result]:
    """``[function(item) for item in items]``, in forked workers when the items' total size
    reaches ``minimum_total``. ``function`` must not raise (return the error instead).
    ``meanwhile`` runs in this process while the workers work (once they are all forked: what
    it imports or starts is not in them); not at all when everything runs here."""
    results: dict[int, Result] = {}
    workers = worker_count(sizes, minimum_total)
    if workers > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        from rewardkit.child_processes import die_with_parent

        global _WORK
        _WORK = (function, items)
        try:
            with ProcessPoolExecutor(
                workers,
                mp_context=multiprocessing.get_context("fork"),
                initializer=die_with_parent,
                initargs=(os.getpid(),),
            ) as pool:
                done = pool.map(_run_batch, batches(sizes, workers * BATCHES_PER_WORKER))
                if meanwhile is not None:  # every batch is submitted: the workers are forked
                    meanwhile()
                for batch in done:
                    results.update(batch)
        except (BrokenProcessPool, OSError):
            pass  # a worker died: what is left is done here
        finally:
            _WORK = None
    return [
        results[index] if index in results else function(item) for index, item in enumerate(items)
    ]
