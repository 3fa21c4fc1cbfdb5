"""Worker processes for rewards run with ``execution="process"`` (pebble pools, one per reward).

Some graders cannot run in a thread: math_verify's default timeouts call ``signal.alarm``, which
Python allows only on a process's main thread. And Python cannot kill a thread, so a sync reward
that hangs holds its thread forever. A reward run with ``execution="process"`` instead runs in a
worker process, on that process's main thread:

* each reward gets its own pool of ``max_workers`` processes (started on its first call); a worker
  loads the reward once, when it starts (its module's import is never counted against a call's
  timeout), then runs calls one at a time;
* a call past its timeout (counted from when a worker takes it) is killed with its worker, which
  is replaced; a worker that dies (a crash, ``os._exit``, the OOM killer) fails only the call it
  was running, and is replaced too;
* workers start from a fork server where the platform has one (a clean, single-threaded parent:
  forking a process that runs threads can deadlock), else by spawning; they die with this process;
* a failed call comes back as a :class:`WorkerFailure` (the exception, its description built in
  the worker under the call's timeout, and the worker's traceback), never as a lost worker.

``reward_processes.stats()`` shows every pool; ``reward_processes.shutdown()`` stops them (they
also stop when the interpreter exits). Set ``reward_processes.max_workers`` before a reward's
first call to size its pool (default: the CPUs this process may use).
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import multiprocessing
import os
import pickle
import signal
import threading
import traceback
from dataclasses import dataclass
from typing import Any, NamedTuple

from rewardkit.errors import RewardExecutionError, RewardLoadError, describe_error


def available_cpus() -> int:
    """CPUs this process may run on (its affinity where the platform reports it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class WorkerTraceback(Exception):
    """The traceback of an exception as it was raised in a worker process (set as the cause of
    the exception it came back as, as ``concurrent.futures`` does)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return f"\n\"\"\"\n{self.text.rstrip()}\n\"\"\""


class WorkerFailure(NamedTuple):
    """A call that failed in a worker: ``kind`` is ``"raised"`` (the reward raised) or ``"load"``
    (the worker could not load the reward); ``text`` the description, ``payload`` the pickled
    exception (``None`` if it could not be pickled), ``trace`` the worker's traceback."""

    kind: str
    text: str
    payload: bytes | None
    trace: str

    def exception(self, reward_name: str) -> BaseException:
        """The exception this failure stands for, in this process."""
        if self.kind == "load":
            error: BaseException = RewardLoadError(
                f"reward {reward_name!r} cannot be loaded in a worker process (execution='process'): "
                f"{self.text}. A worker finds the reward by importing its module: define it at the top "
                "level of a module the worker can import (not inside a function, not in a notebook)"
            )
        else:
            error = _loads(self.payload) or RewardExecutionError(
                f"reward {reward_name!r} raised {self.text} in its worker process (the exception "
                "itself could not be sent back)"
            )
        with contextlib.suppress(AttributeError, TypeError):  # a class that refuses a cause
            error.__cause__ = WorkerTraceback(self.trace)
        return error


def _loads(payload: bytes | None) -> BaseException | None:
    if payload is None:
        return None
    try:
        value = pickle.loads(payload)
    except Exception:
        return None
    return value if isinstance(value, BaseException) else None


# -- in the worker --------------------------------------------------------------------------------


class _Worker:
    """What a worker process holds: its reward (or why it could not load it) and its event loop."""

    reward: Any = None
    failure: WorkerFailure | None = None
    loop: asyncio.AbstractEventLoop | None = None


def _init_worker(blob: bytes) -> None:
    """pebble initializer: die with the parent, leave Ctrl-C and hang-ups to the parent, and
    load the reward (outside any call's timeout). Never raises: a load error is kept and
    returned by every call, since a failing initializer would break the whole pool."""
    from rewardkit.child_processes import die_with_parent

    # The parent is the fork server (or this process's spawner), whose only thread forked us.
    die_with_parent(os.getppid(), death_signal=True)
    for name in ("SIGINT", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
    try:
        from rewardkit.rewards import as_reward

        preload, shipped = pickle.loads(blob)
        for module, path in preload:
            _load_by_path(module, path)
        kind, target = pickle.loads(shipped)
        _Worker.reward = as_reward(target.resolve() if kind == "reference" else target)
    except BaseException as exc:
        _Worker.failure = WorkerFailure("load", describe_error(exc), None, traceback.format_exc())


def _load_by_path(module: str, path: str) -> None:
    """Load ``module`` from ``path`` under that name, as the parent did (verl and OpenRLHF load
    reward files by path, under names ``import`` cannot find), unless ``import`` finds it here."""
    import importlib.machinery

    from rewardkit.rewards import load_module_from_file

    if importlib.machinery.PathFinder.find_spec(module) is None:
        load_module_from_file(module, path)


def _loaded_by_path(reward: Any) -> list[tuple[str, str]]:
    """``[(module, file)]`` for the module defining ``reward`` when it was loaded from a file by
    path, under a name that ``import`` cannot find on ``sys.path`` (a worker loads it the same way)."""
    import importlib.machinery
    import sys

    target = getattr(reward, "__wrapped__", None) or type(reward)  # a function, or a BaseReward class
    name = getattr(target, "__module__", None)
    module = sys.modules.get(name) if isinstance(name, str) else None
    path = getattr(module, "__file__", None)
    if not name or "." in name or not isinstance(path, str) or not os.path.isfile(path):
        return []
    try:
        found = importlib.machinery.PathFinder.find_spec(name)
    except (ImportError, ValueError):
        found = None
    return [] if found is not None else [(name, path)]


def _run_call(fields: dict[str, Any]) -> Any:
    """One call in a worker, on its main thread: the ``RewardResult``, or a ``WorkerFailure``."""
    if _Worker.failure is not None:
        return _Worker.failure
    reward = _Worker.reward
    try:
        result = reward.invoke(fields)
        if reward.is_async:
            if _Worker.loop is None:
                _Worker.loop = asyncio.new_event_loop()
            result = _Worker.loop.run_until_complete(result)
        return result
    except BaseException as exc:
        return WorkerFailure("raised", describe_error(exc), _dumps(exc), traceback.format_exc())


def _dumps(exc: BaseException) -> bytes | None:
    try:
        return pickle.dumps(exc)
    except Exception:
        return None


# -- in this process ------------------------------------------------------------------------------


@dataclass(frozen=True)
class RewardProcessStats:
    """One reward's pool: ``workers`` it keeps running, ``calls`` submitted, ``timeouts`` (calls
    killed with their worker), ``crashes`` (workers that died while running a call) and
    ``restarts`` (pools started again after breaking)."""

    reward: str
    workers: int
    calls: int
    timeouts: int
    crashes: int
    restarts: int


def _context() -> Any:
    """A fork server where there is one (workers fork from a clean single-threaded process), else spawn."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("forkserver")
    return multiprocessing.get_context("spawn")


class RewardProcessPool:
    """The worker processes of one reward (a pebble ``ProcessPool``, started on first use)."""

    def __init__(self, blob: bytes, name: str, workers: int) -> None:
        self.blob = blob
        self.name = name
        self.workers = workers
        self.calls = self.timeouts = self.crashes = self.restarts = 0
        self._lock = threading.Lock()
        self._pool: Any = None

    def submit(self, fields: dict[str, Any], timeout: float | None) -> concurrent.futures.Future[Any]:
        """Schedule one call; the future holds the ``RewardResult`` or a ``WorkerFailure``, or
        raises pebble's ``TimeoutError`` (the worker was killed), ``ProcessExpired`` (it died)..."""
        with self._lock:
            self.calls += 1
            if self._pool is None or not self._pool.active:
                if self._pool is not None:
                    self.restarts += 1
                    self._pool.stop()
                self._pool = self._start()
            pool = self._pool
        return pool.schedule(_run_call, args=(fields,), timeout=timeout)  # type: ignore[no-any-return]

    def _start(self) -> Any:
        import pebble

        _stop_at_exit()
        return pebble.ProcessPool(
            max_workers=self.workers, initializer=_init_worker, initargs=(self.blob,), context=_context()
        )

    def count(self, counter: str) -> None:
        """Add one to ``timeouts``, ``crashes`` or ``restarts``."""
        with self._lock:
            setattr(self, counter, getattr(self, counter) + 1)

    def stats(self) -> RewardProcessStats:
        return RewardProcessStats(self.name, self.workers, self.calls, self.timeouts, self.crashes, self.restarts)

    def stop(self) -> None:
        """Stop the workers (calls still running are killed with them)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.stop()
            pool.join()


class RewardProcesses:
    """The process-wide pools of ``execution="process"`` rewards, one per reward."""

    def __init__(self) -> None:
        self.max_workers = available_cpus()
        self._pools: dict[bytes, RewardProcessPool] = {}
        self._lock = threading.Lock()

    def pool_for(self, reward: Any, name: str, *, reference: Any = None) -> RewardProcessPool:
        """The pool that runs ``reward`` (found in workers through ``reference.resolve()`` when
        given, else by pickling the reward: by module and qualified name). A reward that cannot be
        pickled is a ``RewardLoadError`` now, before any call."""
        shipped = ("reward", reward) if reference is None else ("reference", reference)
        try:
            blob = pickle.dumps((_loaded_by_path(reward), pickle.dumps(shipped)))
        except Exception as exc:
            raise RewardLoadError(
                f"reward {name!r} cannot be sent to a worker process (execution='process'): "
                f"{describe_error(exc)}"
            ) from exc
        with self._lock:
            pool = self._pools.get(blob)
            if pool is None:
                pool = self._pools[blob] = RewardProcessPool(blob, name, self.max_workers)
            return pool

    def stats(self) -> list[RewardProcessStats]:
        """A snapshot of every pool."""
        with self._lock:
            return [pool.stats() for pool in self._pools.values()]

    def shutdown(self) -> None:
        """Stop every pool's workers; a later call starts its reward's pool again."""
        with self._lock:
            pools = list(self._pools.values())
            self._pools.clear()
        for pool in pools:
            pool.stop()

    def _forget_after_fork(self) -> None:
        """A forked child owns none of its parent's workers (nor pebble's threads)."""
        self._pools = {}
        self._lock = threading.Lock()


reward_processes = RewardProcesses()
"""The process-wide pools of ``execution="process"`` rewards."""

if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=reward_processes._forget_after_fork)

_registered: list[bool] = []


def _stop_at_exit() -> None:
    """Stop the pools when the interpreter exits (registered after pebble's own handler, so it
    runs first), killing calls still running rather than waiting for them."""
    if not _registered:
        _registered.append(True)
        atexit.register(reward_processes.shutdown)


def _exit_text(code: int | None) -> str:
    if code is None:
        return "without an exit code"
    if code < 0:
        try:
            return f"on signal {signal.Signals(-code).name}"
        except ValueError:
            return f"on signal {-code}"
    return f"with status {code}"


def pool_error(exc: BaseException, name: str, where: str, pool: RewardProcessPool | None) -> BaseException:
    """The error a call gets when its worker or pool failed (not the reward: that comes back as a
    ``WorkerFailure``), counting it in the pool's stats."""
    from concurrent.futures.process import BrokenProcessPool

    from pebble import ProcessExpired

    if isinstance(exc, ProcessExpired):
        if pool is not None:
            pool.count("crashes")
        return RewardExecutionError(
            f"the worker process running reward {name!r} on {where} died {_exit_text(exc.exitcode)} "
            "(a crash, os._exit(), or the system's out-of-memory killer); it is replaced for the next call"
        )
    if isinstance(exc, (BrokenProcessPool, RuntimeError)) and not isinstance(exc, RewardExecutionError):
        return RewardExecutionError(
            f"the worker processes of reward {name!r} failed on {where} ({describe_error(exc)}); "
            "they are started again for the next call"
        )
    if isinstance(exc, (pickle.PicklingError, TypeError, AttributeError)):
        return RewardExecutionError(
            f"reward {name!r} on {where}: the sample's fields or the reward's result cannot be pickled "
            f"between processes (execution='process'): {describe_error(exc)}"
        )
    if isinstance(exc, concurrent.futures.CancelledError):
        return RewardExecutionError(f"the call of reward {name!r} on {where} was cancelled in its worker pool")
    return RewardExecutionError(f"reward {name!r} on {where} could not run in a worker process: {describe_error(exc)}")


__all__ = [
    "RewardProcessPool",
    "RewardProcessStats",
    "RewardProcesses",
    "WorkerFailure",
    "WorkerTraceback",
    "available_cpus",
    "pool_error",
    "reward_processes",
]
