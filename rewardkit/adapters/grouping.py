"""Group rewards inside the adapters: each group of a framework batch scored in one call.

The frameworks hand an adapter a batch; which samples form a group is what the framework knows
(TRL: the consecutive completions of one prompt; verl: ``uid``; OpenRLHF: the call). The
adapter scores each group with the reward's ``invoke_group`` under its execution mode, timeout
(one budget per group call) and error policy (``rewardkit.runtime.run.group_calls.group_runner``): a failing
group call fails each of its samples, and a sample whose input could not be mapped fails alone
(the rest of its group is scored without it). Below ``rewardkit.adapters.base``, which scores.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from rewardkit.adapters.messages import AdapterInputError
from rewardkit.runtime.run.execution import SampleFailure
from rewardkit.runtime.run.group_calls import describe_group

GroupCall = Callable[[Mapping[str, Any], str], Awaitable[Any]]
"""Runs one group's call: the group's results in order, or the ``SampleFailure`` of the call."""


def is_group(reward: Any) -> bool:
    """Whether ``reward`` (an ``as_reward`` object) scores groups of samples."""
    return getattr(type(reward), "is_group", False) is True


def group_error(adapter_name: str, reward: Any, what: str) -> TypeError:
    """The configuration error for a group reward called where the framework gives no group."""
    return TypeError(
        f"reward {adapter_name!r} is a group reward (it scores the samples of a "
        f"{'prompt' if reward.over == 'group' else 'batch'} together), but {what}"
    )


async def group_outcomes(
    run: GroupCall, samples: Sequence[Any], members: list[int]
) -> dict[int, Any]:
    """One group's outcomes by sample index: a ``RewardResult``, the group call's
    ``SampleFailure``, or the sample's own ``AdapterInputError`` (it is left out of the call)."""
    outcomes: dict[int, Any] = {
        index: samples[index] for index in members if isinstance(samples[index], AdapterInputError)
    }
    valid = [index for index in members if index not in outcomes]
    if not valid:
        return outcomes
    results = await run({"samples": [samples[index] for index in valid]}, describe_group(valid))
    if isinstance(results, SampleFailure):
        outcomes.update({index: results for index in valid})
    else:
        outcomes.update(zip(valid, results))
    return outcomes
