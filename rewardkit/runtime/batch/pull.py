"""The loop every batch shares (``calculate_rewards`` and group rewards): a fixed set of workers
pulling items from one iterator, the batch's checks before any call, its results completed."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from rewardkit.runtime.define.results import RewardResult
from rewardkit.runtime.define.rewards import BaseReward, Reward
from rewardkit.runtime.run.execution import Detachable, settle

Item = TypeVar("Item")


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
    unsupplied = [
        name for name in binding.required if not any(name in sample for sample in samples)
    ]
    if unsupplied:
        raise binding.missing_field_error(
            samples[0], unsupplied=unsupplied, batch_size=len(samples)
        )


async def run_pulling(
    items: Iterable[Item], run_one: Callable[[Item], Awaitable[None]], *, workers: int, name: str
) -> None:
    """``run_one`` on every item, ``workers`` at a time: a fixed set of workers pulls items from
    one iterator (memory stays bounded whatever the number of items). The first error cancels
    the rest and propagates; a reward that swallows the cancellation is let go of after
    ``CANCEL_GRACE_SECONDS`` (``settle``), so the event loop can still close."""
    pending = iter(items)
    stopping = False

    async def worker() -> None:
        for item in pending:  # shared iterator: each item is taken once
            await run_one(item)
            if stopping:  # a reward that swallowed the cancellation returned: take no more
                return

    running = [Detachable(worker(), name) for _ in range(workers)]
    try:
        done, _ = await asyncio.wait(
            [item.task for item in running], return_when=asyncio.FIRST_EXCEPTION
        )
        for task in done:
            if not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
    finally:
        stopping = True
        await settle(running)


def complete_results(
    results: list[RewardResult | None], reward_name: str, record: bool
) -> list[RewardResult]:
    """``results``, checked: a sample whose worker was cancelled from outside (only possible where
    a reward's own cancellation cannot be told from the caller's: Python 3.10) is a failure, never
    a ``None``."""
    if None not in results:
        return results  # type: ignore[return-value]
    missing = [index for index, result in enumerate(results) if result is None]
    text = (
        "CancelledError: the task computing this sample was cancelled (by the reward, or by code "
        "outside calculate_rewards)"
    )
    if not record:
        raise RuntimeError(f"reward {reward_name!r}: samples {missing[:10]} got no result: {text}")
    for index in missing:
        results[index] = RewardResult(0.0, {"error": text})
    return results  # type: ignore[return-value]


def add_note(exc: BaseException, note: str) -> None:
    """``exc.add_note(note)`` where Python has it (3.11+)."""
    with contextlib.suppress(AttributeError):  # add_note is Python 3.11+
        exc.add_note(note)


__all__ = ["add_note", "check_samples", "complete_results", "run_pulling"]
