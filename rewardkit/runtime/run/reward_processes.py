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

* a worker never imports the caller's ``__main__`` (``rewardkit.runtime.run.worker_start``): a reward defined
  there is refused before any call (``RewardLoadError``), saying to move it to a module;
* fields go to the worker, and results come back, pickled inside the call: a result that cannot
  be pickled fails its own sample (naming the value's type), and the worker lives on.

``reward_processes.stats()`` shows every pool; ``reward_processes.shutdown()`` stops them (they
also stop when the interpreter exits). Set ``reward_processes.max_workers`` before a reward's
first call to size its pool (default: the CPUs this process may use). ``reward_processes`` is
both its public face ``rewardkit.reward_processes`` and the object it holds:
``from rewardkit import reward_processes`` and ``from rewardkit.reward_processes import
reward_processes`` work alike.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import io
import os
import pickle
import signal
import threading
import traceback
import types
from dataclasses import dataclass
from typing import Any, NamedTuple

from rewardkit.runtime.define.errors import RewardExecutionError, RewardLoadError, describe_error


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
        return f'\n"""\n{self.text.rstrip()}\n"""'


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

    active = False
    reward: Any = None
    failure: WorkerFailure | None = None
    loop: asyncio.AbstractEventLoop | None = None


def in_worker_process() -> bool:
    """Whether this process is a worker of ``reward_processes`` (where a reward runs on the main
    thread already, and starts no pools of its own)."""
    return _Worker.active


def _init_worker(blob: bytes) -> None:
    """pebble initializer: die with the parent, leave Ctrl-C and hang-ups to the parent, and
    load the reward (outside any call's timeout). Never raises: a load error is kept and
    returned by every call, since a failing initializer would break the whole pool."""
    from rewardkit.child_processes import die_with_parent

    _Worker.active = True
    # The parent is the fork server (or this process's spawner), whose only thread forked us.
    die_with_parent(os.getppid(), death_signal=True)
    for name in ("SIGINT", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
    try:
        from rewardkit.runtime.define.rewards import as_reward

        kind, target = pickle.loads(blob)
        _Worker.reward = as_reward(target.resolve() if kind == "reference" else target)
    except BaseException as exc:
        _Worker.failure = WorkerFailure("load", describe_error(exc), None, traceback.format_exc())


def _run_call(pickled_fields: bytes) -> Any:
    """One call in a worker, on its main thread: the pickled ``RewardResult``, or a ``WorkerFailure``."""
    if _Worker.failure is not None:
        return _Worker.failure
    reward = _Worker.reward
    try:
        fields = pickle.loads(pickled_fields)
    except BaseException as exc:
        error = RewardExecutionError(
            f"reward {reward.name!r}: the sample's fields cannot be loaded in its worker process "
            f"({describe_error(exc)}); a worker does not import __main__, so a value whose class is "
            "defined in the script being run cannot reach it: define that class in a module"
        )
        return WorkerFailure("raised", describe_error(error), _dumps(error), traceback.format_exc())
    try:
        result = reward.invoke(fields)
        if reward.is_async:
            if _Worker.loop is None:
                _Worker.loop = asyncio.new_event_loop()
            result = _Worker.loop.run_until_complete(result)
    except BaseException as exc:
        return WorkerFailure("raised", describe_error(exc), _dumps(exc), traceback.format_exc())
    try:
        return pickle.dumps(result, pickle.HIGHEST_PROTOCOL)
    except BaseException as exc:  # the sample's failure: the worker and its pipe are fine
        error = RewardExecutionError(
            f"reward {reward.name!r} returned a result that cannot be sent back from its worker process "
            f"(execution='process'): {_unpicklable_part(result)} ({describe_error(exc)}); return plain "
            "values (numbers, strings, lists, dicts of them)"
        )
        return WorkerFailure("raised", describe_error(error), _dumps(error), traceback.format_exc())


def _unpicklable_part(result: Any, where: str = "") -> str:
    """What in ``result`` cannot be pickled: the first such extra (of a group's result ``[i]``),
    named with its type."""
    items = (
        result.items()
        if isinstance(result, dict)
        else enumerate(result)
        if isinstance(result, list)
        else ()
    )
    for key, value in items:
        try:
            pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
        except BaseException:
            if isinstance(key, int):
                return _unpicklable_part(value, f"result [{key}]: ")
            kind = type(value)
            return f"{where}extra {key!r} is a {kind.__module__}.{kind.__qualname__}"
    kind = type(result)
    return f"{where}the result is a {kind.__module__}.{kind.__qualname__}"


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


WORKER_PRELOAD = (
    "rewardkit.runtime.run.reward_processes",
    "rewardkit.runtime.define.rewards",
    "rewardkit.child_processes",
    "pebble.pool.process",
)
"""What the workers' fork server imports once, so that each worker starts with it."""


class _ShippingPickler(pickle.Pickler):
    """Pickles what a worker needs to find a reward. Functions and classes of a module loaded
    from a file by path under a name ``import`` cannot find (verl's ``custom_module_<hash>``,
    OpenRLHF's ``reward_func``) travel as that file, which the worker loads the same way (reward
    objects do so themselves); what is defined in ``__main__``, which a worker never imports,
    is noted in ``in_main``."""

    def __init__(self, file: Any) -> None:
        super().__init__(file, pickle.HIGHEST_PROTOCOL)
        self.in_main: list[str] = []
        self._files: dict[str, str | None] = {}

    def reducer_override(self, obj: Any) -> Any:
        from rewardkit.runtime.define.rewards import file_loaded_by_path, find_in_file, source_file

        if "__wrapped__" in getattr(obj, "__dict__", ()):  # a reward object: it reduces itself
            if obj.__module__ == "__main__":
                self.in_main.append(_definition(obj))
            return NotImplemented
        if not isinstance(obj, (types.FunctionType, type)):
            return NotImplemented  # an instance: its class comes here next
        module = getattr(obj, "__module__", None)
        if module == "__main__":
            self.in_main.append(_definition(obj))
            return NotImplemented
        if not isinstance(module, str):
            return NotImplemented
        if module not in self._files:
            self._files[module] = file_loaded_by_path(module, source_file(obj))
        path = self._files[module]
        if path is None:
            return NotImplemented
        return (find_in_file, (module, path, obj.__qualname__))


def _definition(obj: Any) -> str:
    """``name (file:line)`` of a reward, function or class, for messages."""
    name = getattr(obj, "name", None) if not isinstance(obj, type) else None
    name = name if isinstance(name, str) else getattr(obj, "__qualname__", repr(obj))
    binding = getattr(obj, "binding", None)
    location = getattr(binding, "location", None)
    if location is None:
        code = getattr(obj, "__code__", None)
        location = f"{code.co_filename}:{code.co_firstlineno}" if code is not None else None
    return f"{name!r} ({location})" if location else repr(name)


def _scan(obj: Any) -> _ShippingPickler:
    """Pickle ``obj`` with a ``_ShippingPickler`` (its bytes in ``.bytes``); raises as pickle does."""
    buffer = io.BytesIO()
    pickler = _ShippingPickler(buffer)
    pickler.dump(obj)
    pickler.bytes = buffer.getvalue()  # type: ignore[attr-defined]
    return pickler


def main_refusal(name: str, found: list[str]) -> str:
    """The message for a reward run with ``execution="process"`` whose code lives in ``__main__``."""
    listed = ", ".join(dict.fromkeys(found))
    return (
        f"reward {name!r} cannot run with execution='process': {listed} is defined in __main__ (the "
        "script or notebook being run), and a worker process never imports it (that would run the "
        "script's top level again in every worker: model loading, trainer.train()). Move the reward "
        "to a module next to the script (e.g. my_rewards.py) and import it from there "
        "(from my_rewards import ...), or run it with execution='thread' or 'inline'"
    )


class RewardProcessPool:
    """The worker processes of one reward (a pebble ``ProcessPool``, started on first use)."""

    def __init__(
        self, blob: bytes, name: str, workers: int, owner: RewardProcesses | None = None
    ) -> None:
        self.blob = blob
        self.name = name
        self.workers = workers
        self.owner = owner
        self.calls = self.timeouts = self.crashes = self.restarts = 0
        self._lock = threading.Lock()
        self._pool: Any = None

    def submit(
        self, fields: dict[str, Any], timeout: float | None
    ) -> concurrent.futures.Future[Any]:
        """Schedule one call; the future holds the pickled ``RewardResult`` or a ``WorkerFailure``,
        or raises pebble's ``TimeoutError`` (the worker was killed), ``ProcessExpired`` (it died)...
        Fields that cannot be pickled raise here."""
        payload = pickle.dumps(fields, pickle.HIGHEST_PROTOCOL)
        with self._lock:
            self.calls += 1
            if self._pool is None or not self._pool.active:
                if self._pool is not None:
                    self.restarts += 1
                    self._pool.stop()
                elif (
                    self.owner is not None
                ):  # listed again after a shutdown (a runner kept this pool)
                    self.owner.adopt(self)
                self._pool = self._start()
            pool = self._pool
        return pool.schedule(_run_call, args=(payload,), timeout=timeout)  # type: ignore[no-any-return]

    def _start(self) -> Any:
        import pebble

        from rewardkit.runtime.run.worker_start import worker_context

        _stop_at_exit()
        return pebble.ProcessPool(
            max_workers=self.workers,
            initializer=_init_worker,
            initargs=(self.blob,),
            context=worker_context(preload=WORKER_PRELOAD),
        )

    def count(self, counter: str) -> None:
        """Add one to ``timeouts``, ``crashes`` or ``restarts``."""
        with self._lock:
            setattr(self, counter, getattr(self, counter) + 1)

    def stats(self) -> RewardProcessStats:
        return RewardProcessStats(
            self.name, self.workers, self.calls, self.timeouts, self.crashes, self.restarts
        )

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
        self._max_workers = available_cpus()
        self._pools: dict[bytes, RewardProcessPool] = {}
        self._lock = threading.Lock()

    @property
    def max_workers(self) -> int:
        """Processes in each new pool (default: the CPUs this process may use); a pool already
        started keeps its size until ``shutdown()``."""
        return self._max_workers

    @max_workers.setter
    def max_workers(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(
                f"reward_processes.max_workers must be a positive integer, got {value!r}"
            )
        self._max_workers = value

    def pool_for(self, reward: Any, name: str, *, reference: Any = None) -> RewardProcessPool:
        """The pool that runs ``reward`` (found in workers through ``reference.resolve()`` when
        given, else by pickling the reward: by module and qualified name, or by the file of a
        module loaded by path). A reward that cannot be pickled, or that is defined in
        ``__main__``, is a ``RewardLoadError`` now, before any call."""
        shipped = ("reward", reward) if reference is None else ("reference", reference)
        try:
            scanned = _scan(shipped)
        except Exception as exc:
            raise RewardLoadError(
                f"reward {name!r} cannot be sent to a worker process (execution='process'): "
                f"{describe_error(exc)}"
            ) from exc
        in_main = list(scanned.in_main)
        if reference is not None:  # a reference by name or module:qualname hides where it lives
            with contextlib.suppress(Exception):  # not picklable by itself: the reference finds it
                in_main += _scan(reward).in_main
        if in_main:
            raise RewardLoadError(main_refusal(name, in_main))
        blob: bytes = scanned.bytes  # type: ignore[attr-defined]
        with self._lock:
            pool = self._pools.get(blob)
            if pool is None:
                pool = self._pools[blob] = RewardProcessPool(blob, name, self.max_workers, self)
            return pool

    def adopt(self, pool: RewardProcessPool) -> None:
        """List ``pool`` (starting again after ``shutdown()``) unless one for its reward is listed."""
        with self._lock:
            self._pools.setdefault(pool.blob, pool)

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


def pool_error(
    exc: BaseException, name: str, where: str, pool: RewardProcessPool | None
) -> BaseException:
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
    if isinstance(exc, (BrokenProcessPool, RuntimeError)) and not isinstance(
        exc, RewardExecutionError
    ):
        return RewardExecutionError(
            f"the worker processes of reward {name!r} failed on {where} ({describe_error(exc)}); "
            "they are started again for the next call"
        )
    if isinstance(exc, (pickle.PicklingError, TypeError, AttributeError)):
        return RewardExecutionError(
            f"reward {name!r} on {where}: the sample's fields cannot be pickled to send them to a worker "
            f"process (execution='process'): {describe_error(exc)}"
        )
    if isinstance(exc, concurrent.futures.CancelledError):
        return RewardExecutionError(
            f"the call of reward {name!r} on {where} was cancelled in its worker pool"
        )
    return RewardExecutionError(
        f"reward {name!r} on {where} could not run in a worker process: {describe_error(exc)}"
    )


__all__ = [
    "RewardProcessPool",
    "RewardProcessStats",
    "RewardProcesses",
    "WorkerFailure",
    "WorkerTraceback",
    "available_cpus",
    "in_worker_process",
    "main_refusal",
    "pool_error",
    "reward_processes",
]
