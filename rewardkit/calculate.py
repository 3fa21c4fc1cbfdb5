"""Computing rewards: one sample (``calculate_reward``) or a batch (``calculate_rewards``).

Both accept any reward (an ``@reward`` object, a ``BaseReward`` instance or a plain callable)
and return validated ``RewardResult`` objects.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
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


def call_in_daemon_thread(function: Callable[[Any], Any], argument: Any) -> concurrent.futures.Future[Any]:
    """Run ``function(argument)`` in a new daemon thread; its result arrives in the future.

    For sync calls under a timeout: a timed-out call cannot be killed, so it must not hold a
    pool thread that later samples wait for (their timeouts would expire in the queue), nor
    block the interpreter's exit (pool threads are joined at exit; daemon threads are not).
    """
    future: concurrent.futures.Future[Any] = concurrent.futures.Future()

    def run() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(function(argument))
        except BaseException as exc:
            future.set_exception(exc)

    threading.Thread(target=run, name="rewardkit-timed-call", daemon=True).start()
    return future


def check_fields_supplied(reward: Reward | BaseReward, samples: Sequence[Any]) -> None:
    """Raise ``MissingFieldError`` if a required parameter of ``reward`` is in none of ``samples``.

    Such a reward fails on every sample whatever the data: a configuration error (a typo in a
    parameter name, a field the caller never builds), not a per-sample failure to record.
    Stops at the first sample holding each parameter, so a well-formed batch costs next to nothing.
    """
    binding = reward.binding
    first = next((sample for sample in samples if isinstance(sample, Mapping)), None)
    if binding is None or first is None:
        return
    unsupplied = [
        name
        for name in binding.required
        if not any(isinstance(sample, Mapping) and name in sample for sample in samples)
    ]
    if unsupplied:
        raise binding.missing_field_error(first, unsupplied=unsupplied, batch_size=len(samples))


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
    sync rewards run in a thread pool so they never block it. ``timeout`` (seconds) applies to
    each call (a timed-out sync call's thread finishes in the background; Python cannot kill it).
    ``on_error="record"`` turns a failing or timed-out sample into
    ``RewardResult(0.0, {"error": "<type>: <message>"})``; ``"raise"`` cancels the rest and
    raises the first error. Configuration errors raise under either policy, before a silent 0.0
    could stand in for every sample: a required parameter that no sample supplies
    (``MissingFieldError``, raised before any call) and a ``FieldCollisionError``. A required
    field missing from only some samples is a per-sample failure, recorded like any other.
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
    check_fields_supplied(reward, samples)
    results: list[RewardResult | None] = [None] * total
    workers = min(concurrency, total)
    record = on_error == "record"
    # Sync rewards: a pool of `workers` threads, or one daemon thread per call under a timeout
    # (see call_in_daemon_thread: a timed-out call must not hold a pool thread).
    executor = (
        None
        if reward.is_async or timeout is not None
        else concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="rewardkit")
    )
    loop = asyncio.get_running_loop()
    invoke = reward.invoke

    def compute(index: int, sample: Mapping[str, Any]) -> Any:
        if not isinstance(sample, Mapping):
            raise TypeError(
                f"samples[{index}] is a {type(sample).__name__}, expected a mapping of field names to values"
            )
        if reward.is_async:
            return invoke(sample)
        if executor is None:
            return asyncio.wrap_future(call_in_daemon_thread(invoke, sample))
        return loop.run_in_executor(executor, invoke, sample)

    async def run_one(index: int, sample: Mapping[str, Any]) -> RewardResult:
        try:
            pending = compute(index, sample)
            if timeout is None:
                return await pending  # type: ignore[no-any-return]
            return await asyncio.wait_for(pending, timeout)
        except asyncio.TimeoutError:
            exc: BaseException = TimeoutError(
                f"reward {reward.name!r} on samples[{index}] took longer than {timeout} s"
            )
            if record:
                return RewardResult(0.0, {"error": describe_error(exc)})
            raise exc from None
        except CONFIGURATION_ERRORS:
            raise
        except Exception as exc:
            if record:
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
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)
    return results  # type: ignore[return-value]


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
    "check_fields_supplied",
]
