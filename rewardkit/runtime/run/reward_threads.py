"""The bounded pool of threads that sync rewards run in (``calculate_rewards`` and the adapters).

Python cannot kill a thread: a sync reward that hangs past its timeout keeps its thread until it
returns. Starting a new thread for each such call (to keep later samples from queueing behind
it) grows the process without bound when a reward hangs on every sample. So every sync call goes
through one process-wide pool of at most ``max_threads`` daemon threads:

* a call that outlives its deadline still holds its thread, and is counted as ``hung`` in
  :meth:`RewardThreadPool.stats` until it returns;
* a thread is started for new work while fewer than ``max_threads`` exist, so a few hung calls
  never hold up the rest; once every thread is held, new calls wait for a free one (under a
  timeout they then fail as timed out, "did not start", naming the hung calls);
* when the system refuses to start a thread and the pool has none to run a call, the call fails
  with :class:`RewardThreadsUnavailableError` (recorded like any failing sample), never with an
  error that escapes ``calculate_rewards(..., on_error="record")``;
* idle threads end after ``idle_seconds``; all are daemon threads, so a hung call never blocks
  the interpreter's exit;
* a call raising ``StopIteration`` fails with a ``RuntimeError`` caused by it: asyncio cannot set
  a ``StopIteration`` on a future, and its waiter would hang.
"""

from __future__ import annotations

import concurrent.futures
import os
import queue
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rewardkit.runtime.define.errors import RewardError

DEFAULT_MAX_THREADS = 128
"""Threads the process-wide pool may hold (the default ``calculate_rewards`` concurrency is 64)."""


class RewardThreadsUnavailableError(RewardError, RuntimeError):
    """No thread could run a sync reward call: the system refused to start one and the pool has none."""


@dataclass(frozen=True)
class RewardThreadStats:
    """A snapshot of the pool: ``threads`` alive (at most ``max_threads``), ``busy`` running a call,
    ``hung`` running a call past its deadline (it holds its thread until it returns), ``queued``
    calls waiting for a thread, and ``start_failures`` (threads the system refused to start)."""

    max_threads: int
    threads: int
    busy: int
    hung: int
    queued: int
    start_failures: int


@dataclass(eq=False)
class _Job:
    future: concurrent.futures.Future[Any]
    function: Callable[[Any], Any]
    argument: Any
    deadline: float | None


class RewardThreadPool:
    """At most ``max_threads`` daemon threads running sync reward calls; see the module docstring."""

    def __init__(
        self,
        max_threads: int = DEFAULT_MAX_THREADS,
        *,
        idle_seconds: float = 10.0,
        name: str = "rewardkit-reward",
    ) -> None:
        self.max_threads = max_threads
        self.idle_seconds = idle_seconds
        self.name = name
        self._start_failures = 0
        self._start_error = ""
        self._reset()
        _pools.add(self)

    @property
    def max_threads(self) -> int:
        """Threads the pool may hold (a positive integer)."""
        return self._max_threads

    @max_threads.setter
    def max_threads(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"max_threads must be a positive integer, got {value!r}")
        self._max_threads = value

    def _reset(self) -> None:
        """Start empty: at creation, and in a forked child, which inherits none of the parent's
        threads (verl's prime manager forks its scoring workers) and maybe a lock held at the fork."""
        # guards the counters and ``_running``, never held while a call runs
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._running: set[_Job] = set()
        self._threads = 0
        self._idle = 0  # threads not running a call (waiting for a job, or about to)
        self._pending = 0  # jobs put in the queue and not yet taken out (counted under the lock)

    def submit(
        self, function: Callable[[Any], Any], argument: Any, *, timeout: float | None = None
    ) -> concurrent.futures.Future[Any]:
        """Run ``function(argument)`` in a pool thread; cancelling the future drops the call if it
        has not started. ``timeout`` (seconds from now) is the call's deadline, after which a
        still-running call counts as hung in :meth:`stats` (the caller stops waiting for it)."""
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        job = _Job(
            future, function, argument, None if timeout is None else time.monotonic() + timeout
        )
        with self._lock:
            needs_thread = self._idle <= self._pending and self._threads < self.max_threads
            if needs_thread and not self._start_thread() and self._threads == 0:
                future.set_exception(
                    RewardThreadsUnavailableError(
                        f"no thread could run the sync reward call: starting one failed ({self._start_error}) "
                        f"and the pool has none ({self.describe()})"
                    )
                )
                return future
            self._pending += 1
            self._jobs.put(job)
        return future

    def _start_thread(self) -> bool:
        """Start one more thread (called holding the lock); False if the system refused."""
        thread = threading.Thread(
            target=self._serve, name=f"{self.name}-{self._threads}", daemon=True
        )
        try:
            thread.start()
        except RuntimeError as exc:  # "can't start new thread": out of threads or memory
            self._start_failures += 1
            self._start_error = str(exc)
            return False
        self._threads += 1
        self._idle += 1
        return True

    def _serve(self) -> None:
        jobs, lock, running = self._jobs, self._lock, self._running
        while True:
            try:
                job = jobs.get(timeout=self.idle_seconds)
            except queue.Empty:
                with lock:
                    if self._pending == 0:
                        self._idle -= 1
                        self._threads -= 1
                        return
                continue
            started = job.future.set_running_or_notify_cancel()  # False: cancelled while it waited
            with lock:
                self._pending -= 1
                if started:
                    self._idle -= 1
                    running.add(job)
            if not started:
                continue
            try:
                job.future.set_result(job.function(job.argument))
            except (StopIteration, StopAsyncIteration) as exc:
                # asyncio refuses these on a future (the waiter would hang): carry a RuntimeError
                error = RuntimeError(f"the call raised {type(exc).__name__}")
                error.__cause__ = exc
                job.future.set_exception(error)
            except BaseException as exc:
                job.future.set_exception(exc)
            finally:
                with lock:
                    running.discard(job)
                    self._idle += 1

    def stats(self) -> RewardThreadStats:
        """What the pool holds now; ``hung`` calls keep their threads until they return."""
        now = time.monotonic()
        with self._lock:
            hung = sum(job.deadline is not None and job.deadline < now for job in self._running)
            return RewardThreadStats(
                max_threads=self.max_threads,
                threads=self._threads,
                busy=len(self._running),
                hung=hung,
                queued=self._pending,
                start_failures=self._start_failures,
            )

    def describe(self) -> str:
        """One line for error messages: threads, how many are held by hung calls, the queue."""
        now = time.monotonic()
        hung = sum(job.deadline is not None and job.deadline < now for job in self._running)
        return (
            f"{self._threads} of at most {self.max_threads} reward threads, {hung} held by calls past "
            f"their timeout, {self._pending} calls queued"
        )


_pools: weakref.WeakSet[RewardThreadPool] = weakref.WeakSet()


def _reset_after_fork() -> None:
    for pool in list(_pools):
        pool._reset()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


reward_threads = RewardThreadPool()
"""The process-wide pool every sync reward call runs in (``reward_threads.stats()`` to look;
set ``reward_threads.max_threads`` to change the bound)."""


__all__ = [
    "DEFAULT_MAX_THREADS",
    "RewardThreadPool",
    "RewardThreadStats",
    "RewardThreadsUnavailableError",
    "reward_threads",
]
