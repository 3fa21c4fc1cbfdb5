"""Computing rewards: one sample (``calculate_reward``) or a batch (``calculate_rewards``).

Both accept any reward (an ``@reward`` object, a ``BaseReward`` instance or a plain callable)
and return validated ``RewardResult`` objects.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from rewardkit.runtime.batch.groups import calculate_group_rewards
from rewardkit.runtime.batch.pull import add_note, check_samples, complete_results, run_pulling
from rewardkit.runtime.define.errors import FieldCollisionError, RewardAbortedError, describe_error
from rewardkit.runtime.define.fields import PREDEFINED_FIELDS
from rewardkit.runtime.define.options import ExecutionMode, check_execution, check_timeout
from rewardkit.runtime.define.results import RewardResult
from rewardkit.runtime.define.rewards import Reward, as_reward, is_group_reward
from rewardkit.runtime.run.execution import (
    CONFIGURATION_ERRORS,
    SampleFailure,
    SampleRunner,
    torn_down,
)

DEFAULT_CONCURRENCY = 64
"""How many samples ``calculate_rewards`` computes at once unless told otherwise."""


async def calculate_reward(
    reward_fn: Any, /, *, execution: ExecutionMode | None = None, **fields: Any
) -> RewardResult | None:
    """Compute one reward from its fields; ``None`` only when ``reward_fn`` is ``None``.

    A sync reward runs inline (no thread hop: this is the cheap path for one call) unless
    ``execution`` (or the reward's own ``@reward(execution=..., timeout=...)``) says otherwise:
    ``"thread"`` or ``"process"``, under the reward's timeout (see ``rewardkit.runtime.run.execution``).
    The reward's exception is raised as itself, except those that are not ordinary failures
    (``SystemExit``, ``StopIteration``, a ``CancelledError`` it raised itself...), raised as
    ``RewardAbortedError``. A task field named ``execution`` must go through ``calculate_rewards``.
    """
    if reward_fn.__class__ is Reward and execution is None:
        direct = reward_fn.direct  # None: the reward has its own execution mode or timeout
        if direct is not None:
            try:
                if direct:
                    return await reward_fn.invoke(fields)
                return reward_fn.invoke(fields)  # type: ignore[no-any-return]
            except BaseException as exc:
                raise_for_caller(exc, reward_fn.name)
    if reward_fn is None:
        return None
    runner = SampleRunner(
        as_reward(reward_fn),
        execution=check_execution(execution),
        untimed="inline",
        place="the sample",
    )
    try:
        return await runner.run(fields, 0)
    except SampleFailure as failure:
        error = failure.error
    raise error


def raise_for_caller(exc: BaseException, reward_name: str) -> None:
    """Re-raise what a reward called inline raised: itself if it is an ordinary exception (or the
    caller's own cancellation, or ``KeyboardInterrupt``), else ``RewardAbortedError``."""
    if (
        isinstance(exc, KeyboardInterrupt)
        or torn_down(exc)
        or (isinstance(exc, Exception) and not isinstance(exc, (StopIteration, StopAsyncIteration)))
    ):
        raise exc
    raise RewardAbortedError(f"reward {reward_name!r} raised {describe_error(exc)}") from exc


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


async def calculate_rewards(
    reward_fn: Any,
    samples: Sequence[Mapping[str, Any]],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    timeout: float | None = None,
    on_error: Literal["raise", "record"] = "raise",
    group_by: str | None = None,
    execution: ExecutionMode | None = None,
) -> list[RewardResult]:
    """Compute the reward of every sample (each a mapping of fields); results keep ``samples``' order.

    At most ``concurrency`` samples are in flight (a fixed set of workers pulls samples: memory
    stays bounded). Async rewards run on the event loop; sync ones where ``execution`` says
    (``"thread"``, ``"process"`` or ``"inline"``; default: the reward's own, else ``"thread"``),
    each call under ``timeout`` (default: the reward's own): see ``rewardkit.runtime.run.execution``.
    ``on_error="record"`` turns a failing or timed-out sample into
    ``RewardResult(0.0, {"error": "<type>: <message>"})``, whatever it raised (only
    ``KeyboardInterrupt`` propagates); ``"raise"`` cancels the rest and raises the first error.
    Configuration errors raise under either policy, before a silent 0.0 could stand in for every
    sample: a sample that is not a mapping or a required parameter no sample supplies (both
    before any call), a ``FieldCollisionError``, a ``RewardLoadError``. A required field missing
    from only some samples is a per-sample failure. Details: docs/runtime.md.

    A group reward (``rewardkit.runtime.batch.groups``) is computed once per group of samples, grouped by the
    value of the ``group_by`` field (``None``: the whole batch, for a reward declared
    ``over="batch"``); a per-sample reward ignores ``group_by``.
    """
    if on_error not in ("raise", "record"):
        raise ValueError(f"on_error must be 'raise' or 'record', got {on_error!r}")
    if not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be a positive integer, got {concurrency!r}")
    check_timeout(timeout)
    check_execution(execution)
    reward = as_reward(reward_fn)
    total = len(samples)
    if total == 0:
        return []
    if is_group_reward(reward):  # scored a group at a time
        return await calculate_group_rewards(
            reward,
            samples,
            group_by=group_by,
            concurrency=concurrency,
            timeout=timeout,
            on_error=on_error,
            execution=execution,
        )
    check_samples(reward, samples)
    runner = SampleRunner(reward, execution=execution, timeout=timeout)
    results: list[RewardResult | None] = [None] * total
    record = on_error == "record"
    run = runner.run

    async def run_one(item: tuple[int, Mapping[str, Any]]) -> None:
        index, sample = item
        try:
            results[index] = await run(sample, index)
            return
        except SampleFailure as failure:
            if record:
                results[index] = RewardResult(0.0, {"error": failure.text})
                return
            if failure.timed_out:
                raise failure.error from None
            error: BaseException = failure.error
        except CONFIGURATION_ERRORS as exc:
            error = exc
        add_note(error, f"while computing reward {reward.name!r} on samples[{index}]")
        raise error

    await run_pulling(
        enumerate(samples), run_one, workers=min(concurrency, total), name=reward.name
    )
    return complete_results(results, reward.name, record)


__all__ = [
    "DEFAULT_CONCURRENCY",
    "build_fields",
    "calculate_reward",
    "calculate_rewards",
    "raise_for_caller",
]
