"""The main side of the pool of killable worker processes (pebble) that grades a run's tasks.

Worker processes grade with `sandbox=False` (no nested process pool); this module owns the
per-case time budget instead. A task is a chunk of cases: for a file, a block of raw lines
given by position, which the worker reads, parses and grades (see `worker.lines`), so the main
process does almost nothing per case. Each worker records in shared memory which case of its
task it is on and since when, so a case that overruns its budget is pinpointed and its worker
killed, not the whole task timed out. A worker that dies loses no case: the case it was grading
is retried once on its own, then recorded as `HARNESS_ERROR` naming the crash; the rest of its
task is graded again. Workers die with the process that started them, however it dies, and
their memory is capped."""

from __future__ import annotations

import contextlib
import gc
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
from typing import Any

from rewardkit.evaluation.errors import Interrupted, raise_interrupted
from rewardkit.evaluation.inputs.blocks import (
    FileSpan,
    RawBlock,
    TaskSizer,
    block_lines,
    resolve_block,
)
from rewardkit.evaluation.inputs.cases import (
    Case,
    CodeCase,
    DecidedCase,
    EvalInputError,
    FieldNames,
    MathCase,
    parse_case_line,
)
from rewardkit.evaluation.scoring import CaseResult
from rewardkit.evaluation.worker.batch import ResultBatch, batch_of
from rewardkit.evaluation.worker.grading import (
    SYMBOLIC_MODULE,
    GradeOptions,
    Grader,
    crash_result,
    decided_to_result,
    default_grader,
    harness_seconds,
    hung_grader_result,
    timeout_result,
    warm_up,
)
from rewardkit.evaluation.worker.lines import LineSettings
from rewardkit.evaluation.worker.process import Chunk, grade_chunk, init_worker

DEFAULT_WORKER_MEMORY = 2 << 30
"""Address space each worker may add to what it starts with (`--worker-memory`), as the
grader's own sandbox allows its workers: a runaway case fails with `MemoryError` (a
`HARNESS_ERROR`) or kills its worker, not the machine."""


@dataclass
class _Job:
    chunk: Chunk
    slot: int
    counts_for_room: bool
    future: Any = None
    abandoned: bool = False


@dataclass
class _Accounting:
    """Per-case crash attempts (a case may be in a crashed worker at most twice), the chunks
    whose worker died between cases, and the earliest malformed line reported, which stops the
    run once running chunks are done."""

    crashes: dict[int | str, int] = field(default_factory=dict)
    caseless_deaths: dict[tuple[Any, ...], int] = field(default_factory=dict)
    malformed: tuple[int, str] | None = None


class _InterruptFlag:
    """The signals that asked a run to stop: the first drains it, a second abandons it."""

    def __init__(self) -> None:
        self.signals: list[int] = []

    def set(self, signum: int) -> None:
        self.signals.append(signum)

    def is_set(self) -> bool:
        return bool(self.signals)

    @property
    def hurry(self) -> bool:
        """A second signal: stop without waiting for running tasks."""
        return len(self.signals) > 1


@dataclass
class _RunState:
    """The parent's side of one `ProcessExecutor.batches` run."""

    progress: Any
    """Shared doubles, two per slot: (offset of the case being graded or -1, its start time)."""
    free_slots: deque[int]
    events: queue.Queue[tuple[str, Any]]
    """What the feeder thread and the tasks' callbacks report to the loop."""
    room: threading.Semaphore
    """Chunks the feeder may read ahead."""
    stop: threading.Event
    feeder: threading.Thread
    interrupted: _InterruptFlag
    pools: _Pools
    forking: bool
    restore_signals: Callable[[], None]
    restore_polling: Callable[[], None]
    backlog: deque[tuple[Chunk, bool]] = field(default_factory=deque)
    running: dict[int, _Job] = field(default_factory=dict)
    accounting: _Accounting = field(default_factory=_Accounting)
    source_done: bool = False
    drain_until: float | None = None

    @property
    def finished(self) -> bool:
        """Nothing runs or waits: the input is done, or a malformed line stopped the run."""
        if self.running:
            return False
        if self.accounting.malformed is not None:
            return True
        return (
            self.source_done and not self.backlog and not self.pools.waiting and self.events.empty()
        )


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
    """Grade in `workers` pebble worker processes with per-case kill deadlines (`--workers N`, N >= 1).

    With `line_settings`, chunks hold raw input lines that workers parse (the fast path for
    files); otherwise they hold parsed cases. `done_ids` (a resumed run) are skipped by workers.
    No worker starts before the first chunk (an empty input, a finished resume start none).
    Workers die with this process, however it dies, and their address space is capped at what
    they start with plus `memory_headroom` bytes (None: no cap). `sizer`, when given, learns
    from each finished task how big the next ones should be.
    """

    DRAIN_SECONDS = 2.0
    """On a first SIGINT/SIGTERM/SIGHUP, how long the running tasks (~0.1 s of work each) may
    take to finish and be written before the run stops; a second signal stops it at once."""

    def __init__(
        self,
        options: GradeOptions,
        *,
        workers: int,
        grader: Grader | None = None,
        kill_grace: float = 1.0,
        max_tasks: int = 1000,
        poll_interval: float = 0.05,
        include_response: bool = True,
        line_settings: LineSettings | None = None,
        done_ids: frozenset[str] = frozenset(),
        memory_headroom: int | None = DEFAULT_WORKER_MEMORY,
        sizer: TaskSizer | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be >= 1 for worker processes, got {workers}")
        self.options = options
        self.workers = workers
        self.grader = grader
        self.kill_after = options.timeout + kill_grace + harness_seconds(grader)
        self.max_tasks = max_tasks
        self.poll_interval = poll_interval
        self.max_inflight = workers * 4
        self.include_response = include_response
        self.line_settings = line_settings
        self.done_ids = done_ids
        self.memory_headroom = memory_headroom
        self.sizer = sizer
        self._pools: _Pools

    def _context(self) -> Any:
        """fork where it is safe: workers share the parent's imported grader copy-on-write.

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

    def batches(self, chunks: Iterable[Chunk | DecidedCase]) -> Iterator[ResultBatch]:
        """Yield result batches in completion order while a feeder thread reads `chunks` ahead.

        A malformed line reported by a worker stops the run: no new chunk is started, the
        running ones finish and are yielded, then `EvalInputError` names the earliest such line.
        A first SIGINT, SIGTERM or SIGHUP (when nobody else handles them) does the same, then
        raises `Interrupted`; a second one stops at once.
        """
        state = self._start(chunks)
        try:
            state.feeder.start()
            yield from self._loop(state)
        finally:
            state.restore_signals()
            state.stop.set()
            # Every task is done or abandoned here: stop, rather than close, which waits for
            # the pool's queue with a 0.1 s sleep (a third of a 16,000-case run's wall time).
            state.pools.stop()
            state.restore_polling()
            if state.forking:
                gc.unfreeze()
            # The feeder ends at `stop` within its 0.2 s wait for room; joined, it does not read
            # the input (or close its generator) while the caller closes the file or exits.
            if state.feeder.is_alive():
                state.feeder.join(timeout=1.0)
        if state.accounting.malformed is not None:
            line, reason = state.accounting.malformed
            path = self.line_settings.path if self.line_settings is not None else "<input>"
            raise EvalInputError(reason, path=path, line=line)

    def _start(self, chunks: Iterable[Chunk | DecidedCase]) -> _RunState:
        """Set up a run: shared progress slots, the feeder thread (not started), the pools (no
        worker forked yet), deferred signals, and the parent's objects frozen before forking."""
        context = self._context()
        if self.grader is None:
            default_grader(
                self.options.task
            )  # imported once here, shared by forked workers (~0.3 s each otherwise)
        slots = self.max_inflight + 4 * self.workers
        progress = context.Array("d", [-1.0] * (2 * slots), lock=False)
        events: queue.Queue[tuple[str, Any]] = queue.Queue()
        room = threading.Semaphore(self.max_inflight)
        stop = threading.Event()
        interrupted = _InterruptFlag()
        # (not when the caller froze objects already: unfreezing afterwards would undo theirs)
        forking = context.get_start_method() == "fork" and gc.get_freeze_count() == 0
        state = _RunState(
            progress=progress,
            free_slots=deque(range(slots)),
            events=events,
            room=room,
            stop=stop,
            feeder=threading.Thread(
                target=self._feed,
                args=(chunks, events, room, stop),
                name="rewardkit-eval-feeder",
                daemon=True,
            ),
            interrupted=interrupted,
            pools=_Pools(self, context, progress, freeze=forking),
            forking=forking,
            restore_signals=_defer_interrupts(interrupted),
            restore_polling=_poll_pebble_often(),
        )
        self._pools = state.pools
        if forking:
            # Forked workers share the parent's memory copy-on-write; a garbage collection in
            # a worker would touch (and so copy) every object it inherited. Frozen objects are
            # left out of collections (the `gc.freeze` docs recommend this before forking).
            gc.freeze()
        return state

    def _loop(self, state: _RunState) -> Iterator[ResultBatch]:
        """Submit chunks while slots are free, and yield each batch as its task completes,
        until the input is done (or a malformed line or a signal stops the run)."""
        while True:
            self._check_interrupt(state)
            stopping = state.accounting.malformed is not None or state.drain_until is not None
            backlog = state.backlog
            backlog.extend((chunk, False) for chunk in state.pools.ready())
            while backlog and state.free_slots and not stopping:
                chunk, counts_for_room = backlog.popleft()
                self._submit(state.pools.get(), chunk, counts_for_room, state)
            if state.finished:
                return
            try:
                kind, payload = state.events.get(timeout=self.poll_interval)
            except queue.Empty:
                kind, payload = "tick", None
            batch = self._on_event(kind, payload, state)
            if batch is not None:
                yield batch
            timed_out = self._enforce_deadlines(state)
            if timed_out is not None:
                yield timed_out

    def _check_interrupt(self, state: _RunState) -> None:
        """After a first signal, stop feeding and let running tasks finish for a while; raise
        `Interrupted` once they did, when the time is up, or at a second signal."""
        interrupted = state.interrupted
        if not interrupted.is_set():
            return
        if state.drain_until is None:
            state.drain_until = time.monotonic() + self.DRAIN_SECONDS
            state.stop.set()
        if interrupted.hurry or not state.running or time.monotonic() > state.drain_until:
            raise Interrupted(interrupted.signals[0])

    def _on_event(self, kind: str, payload: Any, state: _RunState) -> ResultBatch | None:
        """Handle one event of the feeder or of a task; return a batch to yield, if any."""
        if kind == "chunk":
            state.backlog.append((payload, True))
        elif kind == "decided":
            return batch_of([decided_to_result(payload)], include_response=self.include_response)
        elif kind == "end":
            state.source_done = True
        elif kind == "error":
            raise payload
        elif kind == "done":
            batch = self._finish(payload, state)
            if state.accounting.malformed is not None:
                state.stop.set()
            if batch is not None and (len(batch) or batch.skipped):
                return batch
        return None

    def _feed(
        self,
        chunks: Iterable[Chunk | DecidedCase],
        events: queue.Queue,
        room: threading.Semaphore,
        stop: threading.Event,
    ) -> None:
        """Feeder thread: read chunks (possibly slow, e.g. generation), with backpressure."""
        try:
            for chunk in chunks:
                if stop.is_set():
                    return
                if isinstance(chunk, DecidedCase):
                    events.put(("decided", chunk))
                    continue
                while not room.acquire(timeout=0.2):
                    if stop.is_set():
                        return
                events.put(("chunk", chunk))
            events.put(("end", None))
        except BaseException as exc:  # surfaced in the consuming thread (e.g. EvalInputError)
            events.put(("error", exc))

    def _submit(self, pool: Any, chunk: Chunk, counts_for_room: bool, state: _RunState) -> None:
        slot = state.free_slots.popleft()
        state.progress[2 * slot] = -1.0
        job = _Job(chunk=chunk, slot=slot, counts_for_room=counts_for_room)
        job.future = pool.schedule(
            grade_chunk,
            args=(
                chunk,
                self.options,
                slot,
                self.grader,
                self.include_response,
                self.line_settings,
            ),
        )
        state.running[slot] = job
        events = state.events
        job.future.add_done_callback(lambda _future, job=job: events.put(("done", job)))

    def _singles(self, chunk: Chunk) -> list[tuple[int | str, Chunk]]:
        """A chunk's cases one by one, each as a chunk of its own with a key naming it."""
        if isinstance(chunk, list):
            return [(case.id, [case]) for case in chunk]
        return [(number, (number, raw)) for number, raw in block_lines(self._resolve(chunk))]

    def _split_at(self, chunk: Chunk, index: int) -> tuple[int | str, Chunk, list[Chunk]]:
        """Split a chunk at the case at progress `index` (an offset in a block's lines): that
        case's key and one-case chunk, and the chunks of the cases before and after it."""
        if isinstance(chunk, list):
            case = chunk[index]
            return case.id, [case], [part for part in (chunk[:index], chunk[index + 1 :]) if part]
        first, data = self._resolve(chunk)
        lines = data.split(b"\n")
        number = first + index
        stuck: RawBlock = (number, lines[index] if index < len(lines) else b"")
        rest: list[Chunk] = []
        before, after = lines[:index], lines[index + 1 :]
        if any(line.strip() for line in before):
            rest.append((first, b"\n".join(before) + b"\n"))
        if any(line.strip() for line in after):
            rest.append((number + 1, b"\n".join(after)))
        return number, stuck, rest

    def _rest_from(self, chunk: Chunk, index: int) -> Chunk:
        """The cases of a chunk from progress `index` on."""
        if isinstance(chunk, list):
            return chunk[index:]
        first, data = self._resolve(chunk)
        return first + index, b"\n".join(data.split(b"\n")[index:])

    def _resolve(self, chunk: RawBlock | FileSpan) -> RawBlock:
        source = self.line_settings.source if self.line_settings is not None else None
        return resolve_block(chunk, source)

    def _case_of(self, item: Chunk) -> Case:
        """The parsed case behind a one-case chunk, for results made in the parent (crash, timeout)."""
        if isinstance(item, list):
            return item[0]
        number, raw = self._resolve(item)
        settings = self.line_settings
        try:
            case = parse_case_line(
                raw.decode("utf-8", errors="replace"),
                path=settings.path if settings else "<input>",
                line=number,
                fields=settings.fields if settings else FieldNames(),
            )
        except EvalInputError:
            case = None
        if isinstance(case, MathCase):
            return case
        return MathCase(id=f"line:{number}", response="", gold="", line=number)

    def _finish(self, job: _Job, state: _RunState) -> ResultBatch | None:
        """A chunk's future completed: return its batch, or schedule retries after a crash."""
        index = int(state.progress[2 * job.slot])  # the case a dead worker was on (-1: between)
        running, accounting = state.running, state.accounting
        if running.get(job.slot) is job:
            del running[job.slot]
            state.free_slots.append(job.slot)
            if job.counts_for_room:
                state.room.release()
        if job.abandoned:
            return None
        try:
            batch: ResultBatch = job.future.result()
        except CancelledError:
            return None
        except Exception as exc:
            return self._after_crash(job.chunk, index, describe_exit(exc), state)
        if batch.resume_at is not None:  # a cold worker met a case that needs a warm one
            self._pools.needs_warm(self._rest_from(job.chunk, batch.resume_at))
        elif self.sizer is not None:
            self.sizer.record(_chunk_bytes(job.chunk), batch.busy_seconds)
        if batch.error is not None and (
            accounting.malformed is None or batch.error[0] < accounting.malformed[0]
        ):
            accounting.malformed = batch.error
        return batch

    def _after_crash(
        self, chunk: Chunk, index: int, crash: str, state: _RunState
    ) -> ResultBatch | None:
        """A worker died on `chunk`. Only the case it was grading gets a strike: retried once
        on its own, a `HARNESS_ERROR` naming the crash if its worker dies again; the cases
        before and after it go back as they were. A worker that died between cases gets its
        chunk again once, then each of its cases is retried on its own with a strike."""
        crashed: list[CaseResult] = []
        backlog, accounting = state.backlog, state.accounting
        if index >= 0:
            key, single, rest = self._split_at(chunk, index)
            backlog.extend((part, False) for part in rest)
            suspects = [(key, single)]
        else:
            chunk_key = _chunk_key(chunk)
            deaths = accounting.caseless_deaths[chunk_key] = (
                accounting.caseless_deaths.get(chunk_key, 0) + 1
            )
            if deaths == 1:
                backlog.append((chunk, False))
                return None
            suspects = self._singles(chunk)
        for key, single in suspects:
            count = accounting.crashes[key] = accounting.crashes.get(key, 0) + 1
            if count >= 2:
                crashed.append(
                    crash_result(
                        self._case_of(single),
                        f"{crash} while grading this case, twice (retried once)",
                    )
                )
            else:
                backlog.append((single, False))
        return batch_of(crashed, include_response=self.include_response) if crashed else None

    def _code_budget(self, chunk: Chunk, index: int) -> float:
        """A code case's deadline: its tests' budgets (the sandbox enforces each; past this the
        grader hung: `HARNESS_ERROR`, reason `grader_hung`)."""
        case = chunk[index] if isinstance(chunk, list) and index < len(chunk) else None
        if not isinstance(case, CodeCase):
            return self.kill_after
        from rewardkit.evaluation.worker.code_grading import case_budget  # (code tasks only)

        return case_budget(case, self.options, self.kill_after - self.options.timeout)

    def _enforce_deadlines(self, state: _RunState) -> ResultBatch | None:
        """Kill the worker of any case that overran its budget; requeue the rest of its chunk."""
        running, progress, backlog = state.running, state.progress, state.backlog
        now = time.monotonic()
        timed_out: list[CaseResult] = []
        for slot, job in list(running.items()):
            index = int(progress[2 * slot])
            if index < 0 or job.abandoned:
                continue
            started = progress[2 * slot + 1]
            waited = now - started
            deadline = self.kill_after
            if self.options.task != "math":
                deadline = self._code_budget(job.chunk, index)
            if waited <= deadline:
                continue
            if not job.future.cancel():  # finished meanwhile: its "done" event will deliver it
                continue
            job.abandoned = True
            _key, single, rest = self._split_at(job.chunk, index)
            case = self._case_of(single)
            timed_out.append(
                hung_grader_result(case, self.grader, waited)
                if harness_seconds(self.grader) or self.options.task != "math"
                else timeout_result(case, self.options.timeout, waited)
            )
            backlog.extend((chunk, False) for chunk in rest)
        if not timed_out:
            return None
        return batch_of(timed_out, include_response=self.include_response)


class _Pools:
    """The worker pools of one run. The first is forked as soon as there is a task: before the
    grader's symbolic part is loaded, if it is not yet (cold workers grade most cases without
    it). The first case that needs it sends the rest of its task here (`needs_warm`); the parent
    then loads it once, in a background thread, and the next pool is forked from the warm
    parent; the cold one takes no new task."""

    def __init__(
        self, executor: ProcessExecutor, context: Any, progress: Any, *, freeze: bool
    ) -> None:
        self.executor = executor
        self.freeze = freeze
        self.context = context
        self.progress = progress
        self.started: list[Any] = []
        self.current: Any = None
        self.current_is_cold = False
        self.bounced: deque[Chunk] = deque()
        self.warm = threading.Event()
        self.warming: threading.Thread | None = None

    @property
    def waiting(self) -> bool:
        """Chunks wait for the warm pool."""
        return bool(self.bounced)

    def get(self) -> Any:
        """The pool new tasks go to (started on first use)."""
        if self.current is None:
            self.current = self._start()
        return self.current

    def _start(self) -> Any:
        import pebble

        executor = self.executor
        forked = self.context.get_start_method() == "fork"
        # (after a warm-up, never cold again: if the part failed to load here, workers try)
        cold = (
            forked
            and executor.options.task == "math"
            and SYMBOLIC_MODULE not in sys.modules
            and not self.warm.is_set()
        )
        if self.freeze and self.started:
            gc.freeze()  # what the warm-up loaded, shared with the new workers too
        pool = pebble.ProcessPool(
            max_workers=executor.workers,
            max_tasks=executor.max_tasks,
            initializer=init_worker,
            initargs=(
                self.progress,
                os.getpid(),
                executor.memory_headroom,
                frozenset(executor.done_ids),
                cold,
                False if forked else executor.grader,
                executor.options.task,
            ),
            context=self.context,
        )
        self.started.append(pool)
        self.current_is_cold = cold
        return pool

    def needs_warm(self, chunk: Chunk) -> None:
        """A cold worker stopped at a case that needs the symbolic part: keep the rest of its
        task for a warm worker, and load the part here (once, in the background)."""
        self.bounced.append(chunk)
        if self.warming is None:
            self.warming = threading.Thread(
                target=self._warm_up, name="rewardkit-eval-warm-up", daemon=True
            )
            self.warming.start()

    def _warm_up(self) -> None:
        try:
            with _forks_held():  # no fork mid-import (pebble replaces workers from its thread)
                warm_up(self.executor.grader, self.executor.options.task)
        finally:
            self.warm.set()

    def ready(self) -> list[Chunk]:
        """The chunks a warm pool can take now: once the parent is warm, the cold pool takes
        no new task and the next `get` forks a warm one."""
        if not self.bounced or not self.warm.is_set():
            return []
        if self.current is not None and self.current_is_cold:
            self.current.close()  # its running tasks finish; it starts no new one
            self.current = None
        chunks = list(self.bounced)
        self.bounced.clear()
        return chunks

    def stop(self) -> None:
        """Stop every pool (every task is done or abandoned)."""
        for pool in self.started:
            pool.stop()
            pool.join()


def _chunk_bytes(chunk: Chunk) -> int:
    """Input bytes of a raw chunk (0 for parsed cases)."""
    if isinstance(chunk, list):
        return 0
    if len(chunk) == 3:
        return chunk[2]  # type: ignore[misc]
    return len(chunk[1])  # type: ignore[arg-type]


def _chunk_key(chunk: Chunk) -> tuple[Any, ...]:
    if isinstance(chunk, list):
        return tuple(case.id for case in chunk)
    return (chunk[0], _chunk_bytes(chunk))


_fork_gate = threading.RLock()
_fork_gate_installed: list[bool] = []


@contextlib.contextmanager
def _forks_held() -> Iterator[None]:
    """Keep other threads of this process from forking while this one imports: a child
    forked in the middle of an import inherits that module's lock held by a thread it does not
    have, and hangs the first time it imports the module (pebble forks replacement workers
    from its own thread)."""
    if not _fork_gate_installed and hasattr(os, "register_at_fork"):
        os.register_at_fork(
            before=_fork_gate.acquire,
            after_in_parent=_fork_gate.release,
            after_in_child=_fork_gate.release,
        )
        _fork_gate_installed.append(True)
    with _fork_gate:
        yield


_polling_lock = threading.Lock()
_polling = {"users": 0, "saved": 0.1}
PEBBLE_POLL_SECONDS = 0.002
"""pebble's pool threads poll every 0.1 s by default, so joining a pool waits up to 0.1 s; a
16,000-case run takes ~0.3 s. While one of our pools runs they poll every 2 ms instead: the
main process's CPU time was the same as with 10 ms (measured), and the join waits less."""


def _poll_pebble_often() -> Callable[[], None]:
    """Lower pebble's polling period while a pool of ours runs (it is a module-wide setting,
    read on every cycle); return the undo, which restores it when the last such pool ends."""
    from pebble.common import CONSTS

    with _polling_lock:
        if _polling["users"] == 0:
            _polling["saved"] = CONSTS.sleep_unit
            CONSTS.sleep_unit = min(CONSTS.sleep_unit, PEBBLE_POLL_SECONDS)
        _polling["users"] += 1

    def restore() -> None:
        with _polling_lock:
            _polling["users"] -= 1
            if _polling["users"] == 0:
                CONSTS.sleep_unit = _polling["saved"]

    return restore


GRACEFUL_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)


def _defer_interrupts(flag: _InterruptFlag) -> Callable[[], None]:
    """Turn SIGINT, SIGTERM and SIGHUP into a flag the grading loop checks, and return the undo.

    A KeyboardInterrupt raised at an arbitrary point can land inside the pool's fork of a new
    worker, where Python swallows it ("Exception ignored in _releaseLock"); a flag cannot be
    lost, and lets the loop write what running tasks graded before it stops. Only in the main
    thread, and only for signals whose handler raises `KeyboardInterrupt` (Python's default for
    SIGINT; the CLI's `raise_interrupted` for all three): a caller's own handlers are kept.
    """
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    saved: dict[int, Any] = {}
    for signum in GRACEFUL_SIGNALS:
        previous = signal.getsignal(signum)
        if previous is signal.default_int_handler or previous is raise_interrupted:
            saved[signum] = previous
            signal.signal(signum, lambda received, _frame: flag.set(received))

    def restore() -> None:
        for signum, previous in saved.items():
            signal.signal(signum, previous)

    return restore
