"""Group rewards over a batch: which samples form a group (``group_by``, consecutive runs),
and ``calculate_rewards`` for a group reward, one runner call per group (see
``rewardkit.runtime.define.group_rewards`` for what a group reward is)."""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Literal

from rewardkit.runtime.batch.pull import add_note, check_samples, complete_results, run_pulling
from rewardkit.runtime.define.group_rewards import GroupingError, Over
from rewardkit.runtime.define.options import ExecutionMode
from rewardkit.runtime.define.results import RewardResult
from rewardkit.runtime.run.execution import CONFIGURATION_ERRORS, SampleFailure
from rewardkit.runtime.run.group_calls import describe_group, group_runner


def _group_key(value: Any, index: int, group_by: str) -> Hashable:
    if isinstance(value, float) and math.isnan(value):
        raise GroupingError(f"samples[{index}][{group_by!r}] is NaN, which cannot identify a group")
    try:
        hash(value)
    except TypeError:
        raise GroupingError(
            f"samples[{index}][{group_by!r}] is a {type(value).__name__}, which cannot identify a group "
            "(group by a hashable field: a prompt id, a uid, the prompt text)"
        ) from None
    return value  # type: ignore[no-any-return]


def group_indices(
    samples: Sequence[Mapping[str, Any]], group_by: str | None, *, reward_name: str, over: Over
) -> list[list[int]]:
    """The samples' indices by group, groups in order of first appearance.

    ``group_by=None``: one group of every sample for a reward declared ``over="batch"``, a
    ``GroupingError`` for one declared ``over="group"`` (scoring a batch as one group would
    silently give wrong group-relative rewards).
    """
    if group_by is None:
        if over == "group":
            raise GroupingError(
                f"group reward {reward_name!r} scores the samples of one prompt together: pass "
                "group_by='<field>' naming the field that identifies the group (a prompt id, the "
                "prompt), or declare it @group_reward(over='batch') to score a whole batch at once"
            )
        return [list(range(len(samples)))] if samples else []
    groups: dict[Hashable, list[int]] = {}
    for index, sample in enumerate(samples):
        if group_by not in sample:
            raise GroupingError(
                f"samples[{index}] has no field {group_by!r} to group by (reward {reward_name!r}); "
                f"its fields: {', '.join(sorted(sample)) or '(none)'}"
            )
        groups.setdefault(_group_key(sample[group_by], index, group_by), []).append(index)
    return list(groups.values())


def consecutive_groups(total: int, size: int) -> list[list[int]]:
    """Indices in runs of ``size`` (TRL's ``num_generations`` completions of one prompt are
    consecutive); a remainder that does not fill a run is a group of its own."""
    if size < 1:
        raise ValueError(f"a group size must be positive, got {size!r}")
    return [list(range(start, min(start + size, total))) for start in range(0, total, size)]


async def calculate_group_rewards(
    reward: Any,
    samples: Sequence[Mapping[str, Any]],
    *,
    group_by: str | None,
    concurrency: int,
    timeout: float | None,
    on_error: Literal["raise", "record"],
    execution: ExecutionMode | None = None,
) -> list[RewardResult]:
    """``calculate_rewards`` for a group reward: samples grouped by ``group_by`` (see
    :func:`group_indices`), each group scored in one call (under ``execution`` and ``timeout``,
    as a sample is: :func:`group_runner`), at most ``concurrency`` groups at once; results keep
    the samples' order. A failing group fails each of its samples (``on_error="record"``:
    ``RewardResult(0.0, {"error": ...})``)."""
    check_samples(reward, samples)
    groups = group_indices(samples, group_by, reward_name=reward.name, over=reward.over)
    if not groups:
        return []
    runner = group_runner(reward, execution=execution, timeout=timeout)
    results: list[RewardResult | None] = [None] * len(samples)
    record = on_error == "record"

    async def run_group(indices: list[int]) -> None:
        where = describe_group(indices)
        try:
            scored = await runner.run({"samples": [samples[index] for index in indices]}, where)  # type: ignore[arg-type]
        except SampleFailure as failure:
            if not record:
                add_note(
                    failure.error,
                    f"while computing group reward {reward.name!r} on the group of {where}",
                )
                raise failure.error from None
            failed = RewardResult(0.0, {"error": failure.text})
            scored = [failed] * len(indices)
        except CONFIGURATION_ERRORS as exc:
            add_note(exc, f"while computing group reward {reward.name!r} on the group of {where}")
            raise
        for index, result in zip(indices, scored):
            results[index] = result

    await run_pulling(groups, run_group, workers=min(concurrency, len(groups)), name=reward.name)
    return complete_results(results, reward.name, record)


__all__ = ["calculate_group_rewards", "consecutive_groups", "group_indices"]
