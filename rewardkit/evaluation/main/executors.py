"""Where a run's parsed cases are graded: in this process, in worker processes (`pool`) or on
Ray; and how many worker processes a run may have.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from typing import Protocol

from rewardkit.evaluation.inputs.cases import (
    DecidedCase,
    MathCase,
)
from rewardkit.evaluation.main.pool import ProcessExecutor
from rewardkit.evaluation.option_names import option_with
from rewardkit.evaluation.scoring import CaseResult
from rewardkit.evaluation.worker.batch import ResultBatch, batch_of
from rewardkit.evaluation.worker.grading import (
    GradeOptions,
    Grader,
    LazySymbolicWorkers,
    decided_to_result,
)
from rewardkit.evaluation.worker.process import Chunk, SourceItem


class Executor(Protocol):
    """Grades a stream of cases, yielding results in completion order as they arrive."""

    def results(self, cases: Iterable[SourceItem]) -> Iterator[CaseResult]:
        """Consume `cases` lazily and yield one result per case."""
        ...


class InProcessExecutor:
    """Grade in the calling process, one case after another (`--workers 0`).

    The grader runs with `sandbox=True`: its own killable process enforces the budget of any
    slow symbolic comparison. For debugging and for training loops that must not fork.
    """

    def __init__(self, options: GradeOptions, *, grader: Grader | None = None) -> None:
        self.options = options
        self.grader = grader

    def results(self, cases: Iterable[SourceItem]) -> Iterator[CaseResult]:
        """Yield each case's result in input order (the grader's symbolic workers start with
        the first case that needs them: `LazySymbolicWorkers`)."""
        symbolic = LazySymbolicWorkers(self.grader)
        for case in cases:
            if isinstance(case, DecidedCase):
                yield decided_to_result(case)
                continue
            yield symbolic.grade(case, self.options)


def chunk_cases(cases: Iterable[SourceItem], size: int) -> Iterator[Chunk | DecidedCase]:
    """Group parsed cases into chunks of `size`; decided cases pass through on their own."""
    chunk: list[MathCase] = []
    for case in cases:
        if isinstance(case, DecidedCase):
            yield case
            continue
        chunk.append(case)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def default_workers() -> int:
    """The default `--workers`: the cores this process may use."""
    with contextlib.suppress(AttributeError):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def capped_workers(requested: int | None) -> tuple[int, str | None]:
    """`requested` worker processes, at most one per core this process may use (grading is
    CPU-bound: more only adds processes, memory and start-up time); with the warning to show
    when it was capped. None: the cores."""
    cores = default_workers()
    if requested is None:
        return cores, None
    if requested > cores:
        return cores, (
            f"{option_with('workers', requested)} is more than the {cores} "
            f"core{'s' if cores != 1 else ''} "
            f"this process may use; using {cores}"
        )
    return requested, None


def grade_parsed(
    source: Iterable[MathCase | DecidedCase],
    options: GradeOptions,
    *,
    executor: str,
    workers: int,
    ray_address: str | None,
    grader: Grader | None,
    chunk_size: int | None,
    total: int | None,
    generating: bool,
    include_response: bool,
    worker_memory: int | None,
) -> Iterator[ResultBatch]:
    """Grade already-parsed cases (records, generated responses, Ray, in-process) as batches."""
    if executor == "local" and workers >= 1:
        size = chunk_size or _chunk_size(total, workers, generating=generating)
        pool = ProcessExecutor(
            options,
            workers=workers,
            grader=grader,
            include_response=include_response,
            memory_headroom=worker_memory,
        )
        yield from pool.batches(chunk_cases(source, size))
        return
    results: Iterable[CaseResult]
    if executor == "ray":
        from rewardkit.evaluation.main.ray_executor import RayExecutor

        results = RayExecutor(
            options, address=ray_address, grader=grader, chunk_size=chunk_size or 16
        ).results(source)
    else:
        results = InProcessExecutor(options, grader=grader).results(source)
    for result in results:
        yield batch_of([result], include_response=include_response)


def _chunk_size(total: int | None, workers: int, *, generating: bool) -> int:
    """Cases per worker task: large enough that the ~80 us cost of a pool task and the parent's
    bookkeeping stay small next to ~10-100 us grades, small enough that every worker gets about
    eight chunks (balance at the end of a run). Generated cases go one by one, as they arrive."""
    if generating:
        return 1
    if total is None:
        return 32
    return max(4, min(64, total // (workers * 8)))
