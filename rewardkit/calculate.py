"""Computing rewards: one sample (``calculate_reward``) or a batch (``calculate_rewards``).

Both accept any reward (an ``@reward`` object, a ``BaseReward`` instance or a plain callable)
and return validated ``RewardResult`` objects.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import queue
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal

from rewardkit.errors import FieldCollisionError, describe_error
from rewardkit.fields import PREDEFINED_FIELDS
from rewardkit.results import RewardResult
from rewardkit.rewards import BaseReward, Reward, as_reward

DEFAULT_CONCURRENCY = 64
"""How many samples ``calculate_rewards`` computes at once unless told otherwise."""


async def calculate_reward(reward_fn: Any, /, **fields: Any) -> RewardResult | None:
    """Compute one reward from its fields; ``None`` only when ``reward_fn`` is ``None``.

    Sync rewards run inline (no thread hop: this is the cheap path for one call);
    ``calculate_rewards`` runs sync rewards off the event loop.
    """
    if reward_fn.__class__ is Reward:
        if reward_fn.is_async:
            return await reward_fn.invoke(fields)
        return reward_fn.invoke(fields)  # type: ignore[no-any-return]
    if reward_fn is None:
        return None
    normalized = as_reward(reward_fn)
    result = normalized.invoke(fields)
    if normalized.is_async:
        return await result  # type: ignore[no-any-return]
    return result  # type: ignore[no-any-return]


def build_fields(
    task: Mapping[str, Any],
    *,
    where: str | None = None,
    **predefined: Any,
) -> dict[str, Any]:
    """Merge a rollout's predefined fields (``final_response=``, ``trajectory=``, ``context=``,
    ``id=``) with the task input's fields into one mapping for ``calculate_reward(s)``.

    A task field named like a predefined field raises ``FieldCollisionError`` (naming the
    field and ``where`` the task came from, e.g. ``"data.jsonl:12"``) instead of silently
    shadowing it or failing with "got multiple values for keyword argument".
    """
    unknown = sorted(set(predefined) - set(PREDEFINED_FIELDS))
    if unknown:
        raise TypeError(
            f"build_fields: {', '.join(unknown)} {'is not a' if len(unknown) == 1 else 'are not'} "
            f"predefined field{'s' if len(unknown) > 1 else ''} (predefined: {', '.join(PREDEFINED_FIELDS)}); "
            "put task fields in `task`"
        )
    place = f" at {where}" if where else ""
    for name in task:
        if name in PREDEFINED_FIELDS:
            raise FieldCollisionError(
                f"task field {name!r}{place} has the name of a predefined field "
                f"({PREDEFINED_FIELDS[name]}); rename it in the task data (e.g. 'task_{name}')",
                field=name,
            )
    return {**task, **predefined}


CONFIGURATION_ERRORS: tuple[type[BaseException], ...] = (FieldCollisionError,)
"""Errors that mean the reward or its data mapping is wrong, not one sample: never recorded."""


def _run_into(future: concurrent.futures.Future[Any], function: Callable[[Any], Any], argument: Any) -> None:
    """Call ``function(argument)`` and settle ``future`` with the outcome (unless it was cancelled)."""
    if not future.set_running_or_notify_cancel():
        return
    try:
        future.set_result(function(argument))
    except BaseException as exc:
        future.set_exception(exc)


def call_in_daemon_thread(function: Callable[[Any], Any], argument: Any) -> concurrent.futures.Future[Any]:
    """Run ``function(argument)`` in a new daemon thread; its result arrives in the future.

    For one sync call under a timeout: a timed-out call cannot be killed, and in a daemon thread
    it at least never blocks the interpreter's exit (pool threads are joined at exit).
    """
    future: concurrent.futures.Future[Any] = concurrent.futures.Future()
    threading.Thread(target=_run_into, args=(future, function, argument), name="rewardkit-call", daemon=True).start()
    return future


class _DaemonThreads:
    """The threads a batch runs a sync reward in: daemon threads, so a hung call never blocks the
    interpreter's exit, and one more is started for each call that timed out, so the samples after
    it never queue behind its thread (their own timeouts would run out in the queue)."""

    def __init__(self, count: int) -> None:
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._count = 0
        for _ in range(count):
            self.add_thread()

    def add_thread(self) -> None:
        """Start one more thread (to stand in for one stuck in a timed-out call)."""
        threading.Thread(target=self._serve, name="rewardkit-reward", daemon=True).start()
        self._count += 1

    def _serve(self) -> None:
        while (job := self._queue.get()) is not None:
            _run_into(*job)

    def submit(self, function: Callable[[Any], Any], argument: Any) -> asyncio.Future[Any]:
        """Queue ``function(argument)``; cancelling the returned future drops it if not started."""
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._queue.put((future, function, argument))
        return asyncio.wrap_future(future)

    def shutdown(self) -> None:
        """Let every thread end once it is idle (threads stuck in a call end after it)."""
        for _ in range(self._count):
            self._queue.put(None)


def check_samples(reward: Reward | BaseReward, samples: Sequence[Any]) -> None:
    """Raise, before any call, what would fail every sample whatever its data: a sample that is
    not a mapping of fields (``TypeError``), or a required parameter of ``reward`` that no sample
    supplies (``MissingFieldError``: a typo in a parameter name, a field the caller never builds).
    Recording these would give every sample a silent 0.0."""
    for index, sample in enumerate(samples):
        if sample.__class__ is not dict and not isinstance(sample, Mapping):
            raise TypeError(
                f"samples[{index}] is a {type(sample).__name__}, expected a mapping of field names to values"
            )
    binding = reward.binding
    if binding is None or not samples:
        return
    # any() stops at the first sample holding the name: a well-formed batch costs next to nothing.
    unsupplied = [name for name in binding.required if not any(name in sample for sample in samples)]
    if unsupplied:
        raise binding.missing_field_error(samples[0], unsupplied=unsupplied, batch_size=len(samples))


async def calculate_rewards(
    reward_fn: Any,
    samples: Sequence[Mapping[str, Any]],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    timeout: float | None = None,
    on_error: Literal["raise", "record"] = "raise",
) -> list[RewardResult]:
    """Compute the reward of every sample (each a mapping of fields); results keep ``samples``' order.

    At most ``concurrency`` samples are in flight: a fixed set of workers pulls samples, so
    memory stays bounded however long ``samples`` is. Async rewards run on the event loop;
    sync rewards run in daemon threads so they never block it. ``timeout`` (seconds) applies to
    each call (Python cannot kill a thread: a timed-out sync call finishes in the background and
    a new thread takes its place, so later samples do not wait for it).
    ``on_error="record"`` turns a failing or timed-out sample into
    ``RewardResult(0.0, {"error": "<type>: <message>"})``; ``"raise"`` cancels the rest and
    raises the first error. Configuration errors raise under either policy, before a silent 0.0
    could stand in for every sample: a sample that is not a mapping and a required parameter that
    no sample supplies (``TypeError`` and ``MissingFieldError``, both raised before any call), and
    a ``FieldCollisionError``. A required field missing from only some samples is a per-sample
    failure, recorded like any other.
    """
    if on_error not in ("raise", "record"):
        raise ValueError(f"on_error must be 'raise' or 'record', got {on_error!r}")
    if not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be a positive integer, got {concurrency!r}")
    if timeout is not None and timeout <= 0:
        raise ValueError(f"timeout must be positive seconds or None, got {timeout!r}")
    reward = as_reward(reward_fn)
    total = len(samples)
    if total == 0:
        return []
    check_samples(reward, samples)
    results: list[RewardResult | None] = [None] * total
    workers = min(concurrency, total)
    record = on_error == "record"
    threads = None if reward.is_async else _DaemonThreads(workers)
    invoke = reward.invoke

    def compute(sample: Mapping[str, Any]) -> Any:
        if threads is None:
            return invoke(sample)
        return threads.submit(invoke, sample)

    async def run_one(index: int, sample: Mapping[str, Any]) -> RewardResult:
        try:
            pending = compute(sample)
            if timeout is None:
                return await pending  # type: ignore[no-any-return]
            return await asyncio.wait_for(pending, timeout)
        except Exception as exc:
            if timeout is not None and is_wait_for_timeout(exc):
                if threads is not None:
                    threads.add_thread()  # the timed-out call still holds its thread
                timed_out = TimeoutError(f"reward {reward.name!r} on samples[{index}] took longer than {timeout} s")
                if record:
                    return RewardResult(0.0, {"error": describe_error(timed_out)})
                raise timed_out from None
            if record and not isinstance(exc, CONFIGURATION_ERRORS):
                return RewardResult(0.0, {"error": describe_error(exc)})
            _add_note(exc, f"while computing reward {reward.name!r} on samples[{index}]")
            raise

    pending_samples: Iterator[tuple[int, Mapping[str, Any]]] = iter(enumerate(samples))

    async def worker() -> None:
        for index, sample in pending_samples:  # shared iterator: each sample is taken once
            results[index] = await run_one(index, sample)

    tasks = [asyncio.ensure_future(worker()) for _ in range(workers)]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for task in done:
            if not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if threads is not None:
            threads.shutdown()
    return results  # type: ignore[return-value]


def is_wait_for_timeout(exc: BaseException) -> bool:
    """Whether ``exc`` is ``asyncio.wait_for``'s own timeout (raised from the cancellation of the
    call it timed out), not a ``TimeoutError`` the reward raised itself (e.g. from an API client)."""
    return isinstance(exc, asyncio.TimeoutError) and isinstance(exc.__cause__, asyncio.CancelledError)


def _add_note(exc: BaseException, note: str) -> None:
    with contextlib.suppress(AttributeError):  # add_note is Python 3.11+
        exc.add_note(note)


__all__ = [
    "CONFIGURATION_ERRORS",
    "DEFAULT_CONCURRENCY",
    "build_fields",
    "calculate_reward",
    "calculate_rewards",
    "call_in_daemon_thread",
    "check_samples",
    "is_wait_for_timeout",
]
