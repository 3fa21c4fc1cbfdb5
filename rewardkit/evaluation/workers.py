"""Where grading runs: in this process, or in killable worker processes (pebble).

Worker processes grade with `sandbox=False` (no nested process pool); this module owns the
per-case time budget instead. Cases travel in small chunks (a pebble task costs ~80 us, more
than many grades), and each worker records in shared memory which case of its chunk it is on
and since when, so a case that overruns its budget is pinpointed and its worker killed, not
the whole chunk timed out. A worker that dies loses no case: every case of its chunk is
retried once on its own, then recorded as `HARNESS_ERROR` naming the crash.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import CancelledError
from dataclasses import dataclass, field
from typing import Any, Protocol

from rewardkit.evaluation.cases import DecidedCase, MathCase
from rewardkit.evaluation.grading import (
    GradeOptions,
    Grader,
    crash_result,
    decided_to_result,
    grade_case,
    timeout_result,
    warm_up,
)
from rewardkit.evaluation.scoring import CaseResult
from rewardkit.failures import FailureTag

SourceItem = MathCase | DecidedCase


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
        """Yield each case's result in input order."""
        for case in cases:
            if isinstance(case, DecidedCase):
                yield decided_to_result(case)
            else:
                yield grade_case(case, self.options, sandbox=True, grader=self.grader)


# --- worker side -----------------------------------------------------------------------

_progress: Any = None
"""In a worker: shared doubles, two per slot: (index of the case being graded or -1, start time)."""


def _init_worker(progress: Any, grader: Grader | None, forked: bool) -> None:
    """Pool initializer: keep the shared progress array, ignore Ctrl-C (the parent handles it),
    and load the grader unless it was inherited from the parent by fork."""
    global _progress
    _progress = progress
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if not forked:
        warm_up(grader)


WireResult = tuple[bool, str | None, dict, float, str]
"""What a worker sends back per case: passed, tag, detail, seconds, results-file line. The parent
already holds the case (id, line, response), so the response does not travel back."""


def grade_chunk(
    cases: list[MathCase],
    options: GradeOptions,
    slot: int,
    grader: Grader | None,
    include_response: bool,
) -> list[WireResult]:
    """Worker task: grade a chunk, publishing which case is running so the parent can time it,
    and serialize each result line here, in parallel, rather than in the parent."""
    progress = _progress
    results = []
    for index, case in enumerate(cases):
        if progress is not None:
            progress[2 * slot + 1] = time.monotonic()
            progress[2 * slot] = index
        result = grade_case(case, options, sandbox=False, grader=grader)
        tag = None if result.tag is None else result.tag.value
        results.append(
            (
                result.passed,
                tag,
                dict(result.detail),
                result.seconds,
                result.to_line(include_response=include_response),
            )
        )
    if progress is not None:
        progress[2 * slot] = -1.0
    return results


def _from_wire(case: MathCase, wire: WireResult) -> CaseResult:
    passed, tag, detail, seconds, line = wire
    return CaseResult(
        id=case.id,
        passed=passed,
        tag=None if tag is None else FailureTag(tag),
        detail=detail,
        line=case.line,
        response=case.response,
        seconds=seconds,
        serialized=line,
    )


# --- parent side -----------------------------------------------------------------------


@dataclass
class _Job:
    cases: list[MathCase]
    slot: int
    counts_for_room: bool
    future: Any = None
    abandoned: bool = False


@dataclass
class _Accounting:
    """Per-case crash attempts; a case may be in a crashed worker at most twice."""

    crashes: dict[str, int] = field(default_factory=dict)


def describe_exit(error: BaseException) -> str:
    """Name a worker's death: the signal that killed it or its exit code."""
    code = getattr(error, "exitcode", None)
    if isinstance(code, int) and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"worker process died ({name}, exit code {code})"
    if isinstance(code, int):
        return f"worker process died (exit code {code})"
    return f"worker failed: {type(error).__name__}: {error}"


class ProcessExecutor:
    """Grade in `workers` pebble worker processes with per-case kill deadlines (`--workers N`, N >= 1)."""

    def __init__(
        self,
        options: GradeOptions,
        *,
        workers: int,
        grader: Grader | None = None,
        chunk_size: int = 16,
        kill_grace: float = 1.0,
        max_tasks: int = 1000,
        poll_interval: float = 0.05,
        include_response: bool = True,
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be >= 1 for worker processes, got {workers}")
        self.options = options
        self.workers = workers
        self.grader = grader
        self.chunk_size = max(1, chunk_size)
        self.kill_after = options.timeout + kill_grace
        self.max_tasks = max_tasks
        self.poll_interval = poll_interval
        self.max_inflight = workers * 4
        self.include_response = include_response

    def _context(self) -> Any:
        """fork where it is safe: workers inherit the loaded grader (~2 s to load otherwise).

        Not after Ray (or another gRPC user) started in this process: forking gRPC's threads
        hangs the child, so workers are spawned and load the grader themselves.
        """
        ray = sys.modules.get("ray")
        ray_running = ray is not None and getattr(ray, "is_initialized", lambda: False)()
        if (
            not ray_running
            and sys.platform != "win32"
            and "fork" in multiprocessing.get_all_start_methods()
        ):
            return multiprocessing.get_context("fork")
        return multiprocessing.get_context("spawn")

    def results(self, cases: Iterable[SourceItem]) -> Iterator[CaseResult]:
        """Yield results in completion order while a feeder thread reads `cases` ahead."""
        import pebble

        context = self._context()
        warm_up(self.grader)  # forked workers inherit the loaded grader
        slots = self.max_inflight + 4 * self.workers
        progress = context.Array("d", [-1.0] * (2 * slots), lock=False)
        free_slots = deque(range(slots))
        events: queue.Queue[tuple[str, Any]] = queue.Queue()
        room = threading.Semaphore(self.max_inflight)
        stop = threading.Event()
        backlog: deque[tuple[list[MathCase], bool]] = deque()
        running: dict[int, _Job] = {}
        accounting = _Accounting()
        feeder = threading.Thread(
            target=self._feed,
            args=(cases, events, room, stop),
            name="rewardkit-eval-feeder",
            daemon=True,
        )
        pool = pebble.ProcessPool(
            max_workers=self.workers,
            max_tasks=self.max_tasks,
            initializer=_init_worker,
            initargs=(progress, self.grader, context.get_start_method() == "fork"),
            context=context,
        )
        source_done = False
        finished_cleanly = False
        interrupted = threading.Event()
        restore_sigint = _defer_sigint(interrupted)
        try:
            feeder.start()
            while True:
                if interrupted.is_set():
                    raise KeyboardInterrupt
                while backlog and free_slots:
                    chunk, counts_for_room = backlog.popleft()
                    self._submit(
                        pool,
                        chunk,
                        free_slots.popleft(),
                        progress,
                        running,
                        events,
                        counts_for_room,
                    )
                if source_done and not running and not backlog and events.empty():
                    break
                try:
                    kind, payload = events.get(timeout=self.poll_interval)
                except queue.Empty:
                    kind, payload = "tick", None
                if kind == "chunk":
                    backlog.append((payload, True))
                elif kind == "decided":
                    yield decided_to_result(payload)
                elif kind == "end":
                    source_done = True
                elif kind == "error":
                    raise payload
                elif kind == "done":
                    yield from self._finish(payload, running, free_slots, backlog, accounting, room)
                yield from self._enforce_deadlines(running, progress, backlog)
            finished_cleanly = True
        finally:
            restore_sigint()
            stop.set()
            if finished_cleanly:
                pool.close()
            else:
                pool.stop()
            pool.join()

    def _feed(
        self,
        cases: Iterable[SourceItem],
        events: queue.Queue,
        room: threading.Semaphore,
        stop: threading.Event,
    ) -> None:
        """Feeder thread: read cases (possibly slow, e.g. generation) into chunks, with backpressure."""
        chunk: list[MathCase] = []
        try:
            for case in cases:
                if stop.is_set():
                    return
                if isinstance(case, DecidedCase):
                    events.put(("decided", case))
                    continue
                chunk.append(case)
                if len(chunk) >= self.chunk_size:
                    while not room.acquire(timeout=0.2):
                        if stop.is_set():
                            return
                    events.put(("chunk", chunk))
                    chunk = []
            if chunk:
                room.acquire()
                events.put(("chunk", chunk))
            events.put(("end", None))
        except BaseException as exc:  # surfaced in the consuming thread (e.g. EvalInputError)
            events.put(("error", exc))

    def _submit(
        self,
        pool: Any,
        chunk: list[MathCase],
        slot: int,
        progress: Any,
        running: dict[int, _Job],
        events: queue.Queue,
        counts_for_room: bool,
    ) -> None:
        progress[2 * slot] = -1.0
        job = _Job(cases=chunk, slot=slot, counts_for_room=counts_for_room)
        job.future = pool.schedule(
            grade_chunk, args=(chunk, self.options, slot, self.grader, self.include_response)
        )
        running[slot] = job
        job.future.add_done_callback(lambda _future, job=job: events.put(("done", job)))

    def _finish(
        self,
        job: _Job,
        running: dict[int, _Job],
        free_slots: deque[int],
        backlog: deque,
        accounting: _Accounting,
        room: threading.Semaphore,
    ) -> Iterator[CaseResult]:
        """A chunk's future completed: yield its results, or schedule retries after a crash."""
        if running.get(job.slot) is job:
            del running[job.slot]
            free_slots.append(job.slot)
            if job.counts_for_room:
                room.release()
        if job.abandoned:
            return
        try:
            results = job.future.result()
        except CancelledError:
            return
        except Exception as exc:
            crash = describe_exit(exc)
            for case in job.cases:
                count = accounting.crashes.get(case.id, 0) + 1
                accounting.crashes[case.id] = count
                if count >= 2:
                    yield crash_result(
                        case, f"{crash} while grading this case, twice (retried once)"
                    )
                else:
                    backlog.append(([case], False))
            return
        for case, wire in zip(job.cases, results):
            yield _from_wire(case, wire)

    def _enforce_deadlines(
        self, running: dict[int, _Job], progress: Any, backlog: deque
    ) -> Iterator[CaseResult]:
        """Kill the worker of any case that overran its budget; requeue the rest of its chunk."""
        now = time.monotonic()
        for slot, job in list(running.items()):
            index = int(progress[2 * slot])
            if index < 0 or index >= len(job.cases) or job.abandoned:
                continue
            started = progress[2 * slot + 1]
            waited = now - started
            if waited <= self.kill_after:
                continue
            if not job.future.cancel():  # finished meanwhile: its "done" event will deliver it
                continue
            job.abandoned = True
            stuck = job.cases[index]
            yield timeout_result(stuck, self.options.timeout, waited)
            rest = [case for i, case in enumerate(job.cases) if i != index]
            if rest:
                backlog.append((rest, False))


def _defer_sigint(interrupted: threading.Event) -> Callable[[], None]:
    """Turn Ctrl-C into a flag the grading loop checks, and return the undo.

    A KeyboardInterrupt raised at an arbitrary point can land inside the pool's fork of a new
    worker, where Python swallows it ("Exception ignored in _releaseLock"); a flag cannot be
    lost. Only in the main thread, and only if nobody installed their own handler.
    """
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.default_int_handler:
        return lambda: None
    signal.signal(signal.SIGINT, lambda _signum, _frame: interrupted.set())
    return lambda: signal.signal(signal.SIGINT, previous)


def default_workers() -> int:
    """The default `--workers`: the cores this process may use."""
    with contextlib.suppress(AttributeError):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)
