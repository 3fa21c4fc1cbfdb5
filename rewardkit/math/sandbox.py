"""A killable, memory-capped worker pool for symbolic work (no signals, works in any thread).

SIGALRM-based timeouts fail off the main thread and cancel the host's own alarms, so symbolic
comparisons run in pebble ``ProcessPool`` workers instead: started in a background thread on
the grader's first use (or synchronously by ``warm_up()``), capped with ``RLIMIT_AS``, killed and
replaced when a task overruns, closed at exit. A call never waits for the start longer than its
own budget: a comparison that finds the workers still starting is a ``timeout``.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import sys
import threading
import time
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from pebble import ProcessExpired, ProcessPool

from rewardkit.child_processes import cap_address_space
from rewardkit.math.comparison import Outcome

#: How long ``warm_up()`` (or a test) may wait for the workers to answer their first ping.
STARTUP_TIMEOUT = 60.0
#: Extra address space each worker may use on top of what it inherits at start.
DEFAULT_MEMORY_HEADROOM = 2 * 1024**3
#: Part of the budget kept for the hop back (cancelling, returning): the call ends within its budget.
_RETURN_MARGIN = 0.04
_MINIMUM_TASK_TIME = 0.005
STILL_STARTING = "the symbolic workers were still starting (cold start); call warm_up() at start-up"


def _limit_memory(headroom: int) -> None:
    """Worker initializer: cap the address space at its current size plus ``headroom`` bytes."""
    cap_address_space(headroom)
    import rewardkit.math.symbolic  # noqa: F401  (warm: parse tables and sympy are ready)


def _ping() -> int:
    return os.getpid()


def symbolic_task(answer: str, gold: str, policy: str, tolerance: float) -> Outcome:
    """The worker's task: ``symbolic.symbolic_compare``, referenced from this sympy-free module so
    that scheduling it never makes the calling thread import sympy (pebble pickles by name)."""
    from rewardkit.math.symbolic import symbolic_compare

    return symbolic_compare(answer, gold, policy, tolerance)


class SandboxClosed(RuntimeError):
    """The sandbox was closed (interpreter exit): no new workers are started."""


class SymbolicSandbox:
    """Runs ``function(*args)`` in a pre-started worker within a time budget; never raises for the task.

    Two ways to start: ``pool()`` (synchronous: imports sympy and the LaTeX parser, warms their
    caches, then forks, so every worker starts warm) and ``start_in_background()`` (the grader's
    first use: imports, forks at once, then warms the parent so that replacements start warm).
    """

    def __init__(self, workers: int = 2, memory_headroom: int = DEFAULT_MEMORY_HEADROOM) -> None:
        self._workers = workers
        self._memory_headroom = memory_headroom
        self._pool: ProcessPool | None = None
        self._lock = threading.Lock()  # guards creating, replacing and closing the pool
        self._ready = threading.Event()  # set once a start ended: with a pool, or with _start_error
        self._starter: threading.Thread | None = None
        self._start_error: BaseException | None = None
        self._closed = False

    @property
    def ready(self) -> bool:
        """True when a running pool can take a task now (no start to wait for)."""
        pool = self._pool
        return pool is not None and pool.active

    def _context(self) -> Any:
        if sys.platform.startswith("linux"):
            return multiprocessing.get_context("fork")  # workers inherit the imported sympy: fast replacement
        return multiprocessing.get_context()

    def _start(self, *, warm_first: bool) -> ProcessPool:
        # sympy and the LaTeX parser are imported here, in the parent: forked workers inherit them.
        from rewardkit.math.symbolic import warm_symbolic

        if warm_first:
            warm_symbolic()
        with self._lock:
            if self._closed:
                raise SandboxClosed("the symbolic sandbox is closed")
            pool = self._pool
            if pool is None or not pool.active:
                pool = ProcessPool(
                    max_workers=self._workers,
                    initializer=_limit_memory,
                    initargs=(self._memory_headroom,),
                    context=self._context(),
                )
                pool.schedule(_ping).result(timeout=STARTUP_TIMEOUT)
                self._pool = pool
            self._start_error = None
            self._ready.set()
        if not warm_first:
            warm_symbolic()  # in the parent, after the fork: workers forked from now on start warm
        return pool

    def pool(self) -> ProcessPool:
        """The running pool, started (warm, synchronously) on first use or after it broke."""
        pool = self._pool
        if pool is not None and pool.active:
            return pool
        return self._start(warm_first=True)

    def start_in_background(self) -> None:
        """Start the workers in a daemon thread unless they run or are starting; returns at once."""
        if self._starter is not None or self._closed:
            return  # the common case, one attribute read: the fast path never waits here
        with self._lock:
            if self._starter is not None or self._closed:
                return
            self._starter = threading.Thread(
                target=self._background_start, name="rewardkit-math-sandbox-start", daemon=True
            )
            self._starter.start()

    def _background_start(self) -> None:
        try:
            self._start(warm_first=False)
        except BaseException as error:  # reported to the calls waiting for it, retried by the next one
            self._start_error = error
            self._ready.set()

    def _wait_for_pool(self, deadline: float) -> ProcessPool | Outcome:
        """The running pool, or the verdict for a call whose budget ended before the pool was up."""
        pool = self._pool
        if pool is not None and pool.active:
            return pool
        if self._closed:
            return Outcome(False, "crash", "sandbox unavailable: it was closed")
        with self._lock:
            if self._pool is not None and not self._pool.active:  # broken (or stopped): start anew
                self._pool, self._starter = None, None
                self._ready.clear()
        self.start_in_background()
        if not self._ready.wait(max(deadline - time.monotonic(), 0.0)):
            return Outcome(False, "timeout", STILL_STARTING)
        error = self._start_error
        if error is not None:
            with self._lock:  # let the next call try again
                self._starter, self._start_error = None, None
                self._ready.clear()
            return Outcome(False, "crash", f"sandbox unavailable: {type(error).__name__}: {error}")
        pool = self._pool
        if pool is None or not pool.active:
            return Outcome(False, "crash", "sandbox unavailable: the worker pool stopped")
        return pool

    def run(self, function: Any, args: tuple[Any, ...], timeout: float) -> Outcome:
        """The task's ``Outcome`` within ``timeout`` seconds, waiting for a starting pool included:
        ``timeout`` (the worker is killed and replaced), ``guard`` (worker died), ``crash`` (no pool)."""
        deadline = time.monotonic() + timeout - _RETURN_MARGIN
        try:
            pool = self._wait_for_pool(deadline)
            if isinstance(pool, Outcome):
                return pool
            task_time = max(deadline - time.monotonic(), _MINIMUM_TASK_TIME)
            future = pool.schedule(function, args=args, timeout=task_time)
        except Exception as error:  # the pool itself failed: our side's problem
            return Outcome(False, "crash", f"sandbox unavailable: {type(error).__name__}: {error}")
        try:
            return future.result(timeout=task_time)
        except FutureTimeout:
            future.cancel()  # pebble terminates the running worker and starts a fresh one
            return Outcome(False, "timeout")
        except MemoryError:
            return Outcome(False, "guard", "the worker's memory limit was reached")
        except ProcessExpired as error:
            return Outcome(False, "guard", f"worker died ({error}): memory limit or crash")
        except Exception as error:
            return Outcome(False, "crash", f"{type(error).__name__}: {error}")

    def close(self) -> None:
        """Stop the workers and refuse to start new ones (called at interpreter exit)."""
        with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.stop()
            pool.join(timeout=5)


_SANDBOX = SymbolicSandbox()
atexit.register(_SANDBOX.close)


def default_sandbox() -> SymbolicSandbox:
    """The process-wide sandbox ``grade`` uses."""
    return _SANDBOX


def warm_up() -> None:
    """Start the symbolic workers now, warm, and wait for them (instead of the background start
    on first use, whose first symbolic calls may find them still starting)."""
    _SANDBOX.pool()
