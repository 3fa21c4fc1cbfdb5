"""Where a run's batches of results come from, given its `EvalOptions`: raw lines of the input
file graded by the worker code (in this process or in worker processes that read their spans
themselves), or parsed cases (records, generated responses, Ray) through an executor."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator

from rewardkit.evaluation.inputs.blocks import TaskSizer
from rewardkit.evaluation.inputs.cases import Case, DecidedCase
from rewardkit.evaluation.inputs.file import InputFile
from rewardkit.evaluation.inputs.records import input_blocks, max_block_bytes
from rewardkit.evaluation.main.executors import InProcessExecutor, chunk_cases
from rewardkit.evaluation.main.pool import ProcessExecutor
from rewardkit.evaluation.options import EvalOptions
from rewardkit.evaluation.scoring import CaseResult
from rewardkit.evaluation.worker.batch import ResultBatch, batch_of
from rewardkit.evaluation.worker.lines import LineSettings, grade_blocks_in_process


def grade_raw_lines(
    source: InputFile, options: EvalOptions, *, workers: int, done_ids: set[str]
) -> Iterable[ResultBatch]:
    """Raw lines of the input file, parsed and graded by the worker code: in this process
    (`workers=0`) or in worker processes that read their spans of the file themselves."""
    settings = LineSettings(
        path=str(source.path),
        fields=options.fields,
        options=options.grading,
        skip_bad=options.skip_bad,
        keep_responses=options.keep_responses,
        sandbox=workers == 0,
        grader=options.grader,
        source=source.ref,
        max_line_bytes=options.max_line_bytes,
    )
    sizer = TaskSizer(max_block_bytes(source.size, max(1, workers)))
    blocks = input_blocks(source, workers, options.chunk_size, options.limit, sizer)
    if workers == 0:
        return grade_blocks_in_process(blocks, settings, done_ids, sizer)
    plain = options.chunk_size is None and options.limit is None
    return ProcessExecutor(
        options.grading,
        workers=workers,
        grader=options.grader,
        include_response=False,
        line_settings=settings,
        done_ids=frozenset(done_ids),
        memory_headroom=options.worker_memory or None,
        sizer=sizer if plain else None,
    ).batches(blocks)


def grade_parsed(
    source: Iterable[Case | DecidedCase],
    options: EvalOptions,
    *,
    workers: int,
    total: int | None,
    task: str = "math",
) -> Iterator[ResultBatch]:
    """Grade already-parsed cases of `task` (records, generated responses, Ray, in-process, and
    every code case) as batches."""
    grading = dataclasses.replace(options.grading, task=task)
    grader, include_response = options.grader, options.include_response
    if options.executor == "local" and workers >= 1:
        one_by_one = options.generation is not None or task != "math"  # (code: ~0.1-10 s a case)
        size = options.chunk_size or _chunk_size(total, workers, generating=one_by_one)
        pool = ProcessExecutor(
            grading,
            workers=workers,
            grader=grader,
            include_response=include_response,
            memory_headroom=options.worker_memory or None,
        )
        yield from pool.batches(chunk_cases(source, size))
        return
    results: Iterable[CaseResult]
    if options.executor == "ray":
        from rewardkit.evaluation.main.ray_executor import RayExecutor

        results = RayExecutor(
            grading, address=options.ray_address, grader=grader, chunk_size=options.chunk_size or 16
        ).results(source)
    else:
        results = InProcessExecutor(grading, grader=grader).results(source)
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
