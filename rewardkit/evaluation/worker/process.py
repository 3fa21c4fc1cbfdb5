"""Worker side of the process pool: a worker's start (die with the parent, cap memory, ignore
Ctrl-C) and its task, a chunk of parsed cases or raw lines graded with the running case
published in shared memory for the parent's deadline watch.
"""

from __future__ import annotations

import signal
import sys
import time
from typing import Any

from rewardkit.child_processes import cap_address_space, die_with_parent
from rewardkit.evaluation.inputs.blocks import (
    FileSpan,
    RawBlock,
)
from rewardkit.evaluation.inputs.cases import (
    Case,
    DecidedCase,
)
from rewardkit.evaluation.scoring import CaseResult
from rewardkit.evaluation.worker.batch import ResultBatch, batch_of
from rewardkit.evaluation.worker.grading import (
    COLD_GUARD,
    ColdWorker,
    GradeOptions,
    Grader,
    grade_case,
    warm_up,
)
from rewardkit.evaluation.worker.lines import LineGrader, LineSettings

SourceItem = Case | DecidedCase


_progress: Any = None
"""In a worker: shared doubles, two per slot: (index of the case being graded or -1, start time)."""

_done_ids: frozenset[str] = frozenset()
"""In a worker: ids already in the results file of a resumed run (skipped, not graded)."""

_line_graders: dict[LineSettings, LineGrader] = {}


def init_worker(
    progress: Any,
    parent_pid: int,
    memory_headroom: int | None,
    done_ids: frozenset[str],
    cold: bool,
    spawned_grader: Grader | bool | None,
    task: str = "math",
) -> None:
    """Pool initializer: die with the parent, cap memory, ignore Ctrl-C and hang-ups (the
    parent handles them and stops its workers), keep the shared progress array and the done
    ids.

    A `cold` worker was forked before the parent loaded the grader's symbolic part (sympy, the
    LaTeX parser: ~1-2 s): most cases need none of it, so such workers grade from the first
    second of a run, and a case that needs it stops the task (`ColdWorker`) instead of loading
    it here; the parent loads it once and forks warm workers for the rest. A spawned worker
    (`spawned_grader` is not False) shares nothing with the parent and loads it itself."""
    global _progress, _done_ids
    # The forking thread outlives the pool (pebble's calling and manager threads), so the
    # kernel's parent-death signal is safe here; the watchdog thread covers the rest.
    die_with_parent(parent_pid, death_signal=True)
    if memory_headroom:
        cap_address_space(memory_headroom)
    _progress = progress
    _done_ids = done_ids
    _line_graders.clear()  # a forked worker must not reuse its parent's (none expected)
    for name in ("SIGINT", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
    if cold:
        sys.meta_path.insert(0, COLD_GUARD)  # type: ignore[arg-type]
    elif spawned_grader is not False:
        warm_up(spawned_grader, task)  # type: ignore[arg-type]


Chunk = list[Case] | RawBlock | FileSpan
"""A worker task's cases: parsed cases (records, generation), or raw lines of a file (by value
or by position)."""


def grade_chunk(
    chunk: Chunk,
    options: GradeOptions,
    slot: int,
    grader: Grader | None,
    include_response: bool,
    line_settings: LineSettings | None,
) -> ResultBatch:
    """Worker task: grade a chunk, publishing which case is running so the parent can time it.

    Raw lines are parsed, validated, graded and serialised here, in parallel, so the parent
    only appends the returned lines and counts outcomes."""
    progress = _progress
    started = time.perf_counter()
    COLD_GUARD.fired = False  # (it stopped the previous chunk, if it fired)

    def on_case(index: int) -> None:
        progress[2 * slot + 1] = time.monotonic()
        progress[2 * slot] = index

    watch = on_case if progress is not None else None
    try:
        if line_settings is not None:
            line_grader = _line_graders.get(line_settings)
            if line_grader is None:
                line_grader = _line_graders[line_settings] = LineGrader(line_settings, _done_ids)
            batch = line_grader.grade_block(chunk, watch)  # type: ignore[arg-type]
        else:
            results: list[CaseResult] = []
            stopped_at = None
            for index, case in enumerate(chunk):
                if watch is not None:
                    watch(index)
                try:
                    results.append(grade_case(case, options, sandbox=False, grader=grader))  # type: ignore[arg-type]
                except ColdWorker:
                    stopped_at = index
                    break
            batch = batch_of(results, include_response=include_response)
            batch.resume_at = stopped_at
        batch.busy_seconds = time.perf_counter() - started
        return batch
    finally:
        if progress is not None:
            progress[2 * slot] = -1.0
