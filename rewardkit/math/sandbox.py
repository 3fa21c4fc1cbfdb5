"""A killable, memory-capped worker pool for symbolic work (no signals, works in any thread).

SIGALRM-based timeouts fail off the main thread and cancel the host's own alarms, so symbolic
comparisons run in pebble ``ProcessPool`` workers instead: started lazily on the first symbolic
need, capped with ``RLIMIT_AS``, killed and replaced when a task overruns, closed at exit.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import sys
import threading
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from pebble import ProcessExpired, ProcessPool

from rewardkit.math.comparison import Outcome

#: How long the first symbolic call may wait for the workers to start (paid once per process).
STARTUP_TIMEOUT = 60.0
#: Extra address space each worker may use on top of what it inherits at start.
DEFAULT_MEMORY_HEADROOM = 2 * 1024**3
#: Part of the budget kept for the hop back (cancelling, returning): the call ends within its budget.
_RETURN_MARGIN = 0.04
_MINIMUM_TASK_TIME = 0.005


def _limit_memory(headroom: int) -> None:
    """Worker initializer: cap the address space at its current size plus ``headroom`` bytes."""
    try:
        import resource

        with open("/proc/self/statm") as statm:
            current = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        limit = current + headroom
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (OSError, ValueError, ImportError):
        pass  # not Linux: the time budget still bounds the work
    import rewardkit.math.symbolic  # noqa: F401  (warm: parse tables and sympy are ready)


def _ping() -> int:
    return os.getpid()


class SymbolicSandbox:
    """Runs ``function(*args)`` in a pre-started worker within a time budget; never raises for the task."""

    def __init__(self, workers: int = 2, memory_headroom: int = DEFAULT_MEMORY_HEADROOM) -> None:
        self._workers = workers
        self._memory_headroom = memory_headroom
        self._pool: ProcessPool | None = None
        self._lock = threading.Lock()

    def _context(self) -> Any:
        if sys.platform.startswith("linux"):
            return multiprocessing.get_context("fork")  # workers inherit the imported sympy: fast replacement
        return multiprocessing.get_context()

    def pool(self) -> ProcessPool:
        """The running pool, started (and warmed) on first use or after it broke."""
        with self._lock:
            if self._pool is not None and self._pool.active:
                return self._pool
            from rewardkit.math.symbolic import warm_symbolic

            warm_symbolic()  # before forking, so every worker (and every replacement) starts warm

            pool = ProcessPool(
                max_workers=self._workers,
                initializer=_limit_memory,
                initargs=(self._memory_headroom,),
                context=self._context(),
            )
            pool.schedule(_ping).result(timeout=STARTUP_TIMEOUT)
            self._pool = pool
            return pool

    def run(self, function: Any, args: tuple[Any, ...], timeout: float) -> Outcome:
        """The task's ``Outcome``; ``timeout`` (kill and replace the worker), ``guard`` (worker died) otherwise."""
        try:
            pool = self.pool()
            task_time = max(timeout - _RETURN_MARGIN, _MINIMUM_TASK_TIME)
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
        """Stop the workers (called at interpreter exit)."""
        with self._lock:
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
    """Start the symbolic workers now rather than on the first symbolic comparison."""
    _SANDBOX.pool()
