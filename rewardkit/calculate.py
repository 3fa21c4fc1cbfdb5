"""Computing rewards: one sample (``calculate_reward``) or a batch (``calculate_rewards``).

Both accept any reward (an ``@reward`` object, a ``BaseReward`` instance or a plain callable)
and return validated ``RewardResult`` objects.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
from collections.abc import Awaitable, Iterator, Mapping, Sequence
from typing import Any, Literal

from rewardkit.errors import FieldCollisionError, describe_error
from rewardkit.fields import PREDEFINED_FIELDS
from rewardkit.results import RewardResult
from rewardkit.reward_threads import reward_threads
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


CANCEL_GRACE_SECONDS = 1.0
"""How long a timed-out async reward, once cancelled, may take to finish its cleanup before it is
left to finish in the background (the timeout is reported either way)."""


class CallTimedOut(TimeoutError):
    """A reward call outlived its timeout (``started=False``: a sync call never got a thread),
    as opposed to a ``TimeoutError`` the reward raised itself (e.g. from an API client)."""

    def __init__(self, started: bool) -> None:
        super().__init__("started" if started else "not started")
        self.started = started


_left_running: set[asyncio.Future[Any]] = set()
"""Timed-out async calls that ignored their cancellation: kept referenced until they end."""


def _forget(task: asyncio.Future[Any]) -> None:
    _left_running.discard(task)
    if not task.cancelled():
        task.exception()  # retrieved: no "exception was never retrieved" warning


async def await_within(
    pending: Awaitable[Any], timeout: float | None, *, job: concurrent.futures.Future[Any] | None = None
) -> Any:
    """Await ``pending`` (an async reward's coroutine, or ``job`` wrapped for asyncio) for at most
    ``timeout`` seconds, then raise ``CallTimedOut``.

    Unlike ``asyncio.wait_for``, what a cancelled coroutine does next cannot turn the timeout into
    a success: one that swallows ``CancelledError`` and returns a value is still timed out, and
    one that keeps running gets ``CANCEL_GRACE_SECONDS`` to finish, then is left to finish in the
    background. ``job`` (a sync call in ``reward_threads``) is dropped if it never started.
    """
    if timeout is None:
        return await pending
    if job is not None:  # a thread's future: cancelling it is immediate, wait_for is exact
        try:
            return await asyncio.wait_for(pending, timeout)
        except asyncio.TimeoutError as exc:
            if not isinstance(exc.__cause__, asyncio.CancelledError):
                raise  # the reward's own TimeoutError (e.g. from an API client)
            raise CallTimedOut(started=not job.cancel()) from None
    future = asyncio.ensure_future(pending)
    try:
        done, _ = await asyncio.wait({future}, timeout=timeout)
    except asyncio.CancelledError:
        _let_go(future)
        raise
    if done:
        return future.result()
    future.cancel()  # then let it run its cleanup, within the grace
    await asyncio.wait({future}, timeout=CANCEL_GRACE_SECONDS)
    _let_go(future, cancel=False)
    raise CallTimedOut(started=True)


def _let_go(future: asyncio.Future[Any], *, cancel: bool = True) -> None:
    """Cancel a call nobody waits for any more (once: one that ignores it is left to finish,
    referenced until it ends)."""
    if cancel:
        future.cancel()
    if future.done():
        _forget(future)
    else:
        _left_running.add(future)
        future.add_done_callback(_forget)


def timeout_error(reward_name: str, where: str, timeout: float, exc: CallTimedOut) -> TimeoutError:
    """The ``TimeoutError`` reported for a call of ``reward_name`` on ``where`` that timed out."""
    if exc.started:
        return TimeoutError(f"reward {reward_name!r} on {where} took longer than {timeout} s")
    return TimeoutError(
        f"reward {reward_name!r} on {where} did not start within {timeout} s: no reward thread was "
        f"free ({reward_threads.describe()})"
    )


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
    group_by: str | None = None,
) -> list[RewardResult]:
    """Compute the reward of every sample (each a mapping of fields); results keep ``samples``' order.

    At most ``concurrency`` samples are in flight: a fixed set of workers pulls samples, so
    memory stays bounded however long ``samples`` is. Async rewards run on the event loop;
    sync rewards run in ``reward_threads``, the process's bounded pool of daemon threads, so they
    never block it. ``timeout`` (seconds) applies to each call; a timed-out call is a failure even
    if it swallows its cancellation (async) or keeps running (sync: Python cannot kill a thread,
    so it holds its pool thread until it returns, counted as hung in ``reward_threads.stats()``).
    ``on_error="record"`` turns a failing or timed-out sample into
    ``RewardResult(0.0, {"error": "<type>: <message>"})``; ``"raise"`` cancels the rest and
    raises the first error. Configuration errors raise under either policy, before a silent 0.0
    could stand in for every sample: a sample that is not a mapping and a required parameter that
    no sample supplies (``TypeError`` and ``MissingFieldError``, both raised before any call), and
    a ``FieldCollisionError``. A required field missing from only some samples is a per-sample
    failure, recorded like any other.

    A group reward (``rewardkit.groups``) is computed once per group of samples, grouped by the
    value of the ``group_by`` field (``None``: the whole batch, for a reward declared
    ``over="batch"``); a per-sample reward ignores ``group_by``.
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
    if getattr(type(reward), "is_group", False):  # scored a group at a time: rewardkit.groups
        from rewardkit.groups import calculate_group_rewards

        return await calculate_group_rewards(
            reward, samples, group_by=group_by, concurrency=concurrency, timeout=timeout, on_error=on_error
        )
    check_samples(reward, samples)
    results: list[RewardResult | None] = [None] * total
    workers = min(concurrency, total)
    record = on_error == "record"
    invoke = reward.invoke
    threads = None if reward.is_async else reward_threads

    async def run_one(index: int, sample: Mapping[str, Any]) -> RewardResult:
        try:
            if threads is None:
                return await await_within(invoke(sample), timeout)  # type: ignore[no-any-return]
            job = threads.submit(invoke, sample, timeout=timeout)
            return await await_within(asyncio.wrap_future(job), timeout, job=job)  # type: ignore[no-any-return]
        except CallTimedOut as exc:
            timed_out = timeout_error(reward.name, f"samples[{index}]", timeout, exc)  # type: ignore[arg-type]
            if record:
                return RewardResult(0.0, {"error": describe_error(timed_out)})
            raise timed_out from None
        except Exception as exc:
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
    return results  # type: ignore[return-value]


def _add_note(exc: BaseException, note: str) -> None:
    with contextlib.suppress(AttributeError):  # add_note is Python 3.11+
        exc.add_note(note)


__all__ = [
    "CANCEL_GRACE_SECONDS",
    "CONFIGURATION_ERRORS",
    "DEFAULT_CONCURRENCY",
    "CallTimedOut",
    "await_within",
    "build_fields",
    "calculate_reward",
    "calculate_rewards",
    "check_samples",
    "timeout_error",
]
