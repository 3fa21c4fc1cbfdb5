"""Where a run's parsed cases are graded: in this process, in worker processes (`pool`) or on
Ray; and how many worker processes a run may have.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from typing import Protocol

from rewardkit.evaluation.inputs.cases import (
    Case,
    DecidedCase,
)
from rewardkit.evaluation.option_names import option_with
from rewardkit.evaluation.scoring import CaseResult
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
        symbolic = LazySymbolicWorkers(self.grader, self.options.task)
        for case in cases:
            if isinstance(case, DecidedCase):
                yield decided_to_result(case)
                continue
            yield symbolic.grade(case, self.options)


def chunk_cases(cases: Iterable[SourceItem], size: int) -> Iterator[Chunk | DecidedCase]:
    """Group parsed cases into chunks of `size`; decided cases pass through on their own."""
    chunk: list[Case] = []
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
