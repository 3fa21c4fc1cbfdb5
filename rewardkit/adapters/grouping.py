"""Group rewards inside the adapters: each group of a framework batch scored in one call.

The frameworks hand an adapter a batch; which samples form a group is what the framework knows
(TRL: the consecutive completions of one prompt; verl: ``uid``; OpenRLHF: the call). The
adapter scores each group with the reward's ``invoke_group`` under its execution mode, timeout
(one budget per group call) and error policy (``rewardkit.groups.group_runner``): a failing
group call fails each of its samples, and a sample whose input could not be mapped fails alone
(the rest of its group is scored without it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from rewardkit.adapters.messages import AdapterInputError
from rewardkit.errors import MissingFieldError
from rewardkit.execution import SampleFailure, SampleRunner
from rewardkit.groups import describe_group
from rewardkit.results import RewardResult


class GroupScoring:
    """What ``RewardAdapter`` adds for group rewards (``score_groups``, ``score_groups_async``)."""

    reward: Any
    runner: SampleRunner
    """For a group reward, ``rewardkit.groups.group_runner``'s: one call per group."""
    timeout: float | None
    concurrency: int
    framework: str
    __name__: str

    @property
    def is_group(self) -> bool:
        """Whether the adapted reward scores groups of samples."""
        return getattr(type(self.reward), "is_group", False) is True

    def group_error(self, what: str) -> TypeError:
        """The configuration error for a group reward called where the framework gives no group."""
        return TypeError(
            f"reward {self.__name__!r} is a group reward (it scores the samples of a "
            f"{'prompt' if self.reward.over == 'group' else 'batch'} together), but {what}"
        )

    async def _score_group(self, samples: Sequence[Any], members: list[int]) -> dict[int, Any]:
        """One group's outcomes by sample index: ``RewardResult`` or the failure to report."""
        outcomes: dict[int, Any] = {}
        valid = []
        for index in members:
            if isinstance(samples[index], AdapterInputError):
                outcomes[index] = samples[index]
            else:
                valid.append(index)
        if not valid:
            return outcomes
        group = {"samples": [samples[index] for index in valid]}
        try:
            results = await self.runner.run(group, describe_group(valid))  # type: ignore[arg-type]
        except SampleFailure as failure:  # (configuration errors propagate as themselves)
            outcomes.update({index: failure for index in valid})
        except MissingFieldError as error:
            raise self.explain_missing(error) from None  # type: ignore[attr-defined]
        else:
            outcomes.update(zip(valid, results))
        return outcomes

    async def score_groups_async(
        self, samples: Sequence[Any], groups: Sequence[list[int]]
    ) -> list[Any]:
        """Score each group (lists of indices into ``samples``) at most ``concurrency`` at once;
        one ``Scored`` per sample, in the samples' order."""
        semaphore = asyncio.Semaphore(self.concurrency)

        async def one(members: list[int]) -> dict[int, Any]:
            async with semaphore:
                return await self._score_group(samples, members)

        outcomes: dict[int, Any] = {}
        for part in await asyncio.gather(*(one(members) for members in groups)):
            outcomes.update(part)
        return [self._scored_outcome(index, outcomes[index]) for index in range(len(samples))]

    def score_groups(self, samples: Sequence[Any], groups: Sequence[list[int]]) -> list[Any]:
        """``score_groups_async`` from sync code."""
        from rewardkit.adapters.base import run_coroutine

        return run_coroutine(self.score_groups_async(samples, groups))  # type: ignore[no-any-return]

    def _scored_outcome(self, index: int, outcome: Any) -> Any:
        self.stats.count(calls=1)  # type: ignore[attr-defined]
        if isinstance(outcome, RewardResult):
            return self.scored(outcome)  # type: ignore[attr-defined]
        if isinstance(outcome, SampleFailure):  # the group's call failed or timed out
            return self._failed(
                index, outcome.error, timed_out=outcome.timed_out, text=outcome.text
            )  # type: ignore[attr-defined]
        return self._failed(index, outcome)  # type: ignore[attr-defined]  # its input could not be mapped
