"""Batch statistics of rewards and their extras, as training loggers expect them."""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rewardkit.runtime.define.results import RewardResult


@dataclass
class Trajectory:
    """One rollout as the trainer sees it: identifiers, messages, and its reward once computed."""

    rollout_id: str | None = None
    group_id: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    final_response: str | None = None
    reward: float | None = None
    metrics: dict[str, Any] = field(default_factory=dict)

    def record(self, result: RewardResult) -> None:
        """Store a computed ``RewardResult``: its value in ``reward``, its extras in ``metrics``."""
        self.reward = result.reward
        self.metrics.update(result.extras)


def _reward_and_extras(item: object, index: int) -> tuple[float | None, Mapping[str, Any]]:
    if isinstance(item, RewardResult):
        return item.reward, item.extras
    if isinstance(item, Trajectory):
        return item.reward, item.metrics
    if isinstance(item, Mapping):
        value = item.get("reward")
        number = None if value is None else as_number(value)
        if value is not None and number is None:
            raise TypeError(
                f"compute_data_metrics: results[{index}]['reward'] is {value!r}, not a number"
            )
        return number, {k: v for k, v in item.items() if k != "reward"}
    raise TypeError(
        f"compute_data_metrics: results[{index}] is a {type(item).__name__}; expected a "
        "RewardResult, a Trajectory or a dict with 'reward'"
    )


def as_number(value: object) -> float | None:
    """``value`` as a float when it is a real number, a bool (1/0) or a 0-d numpy array or
    tensor holding one (``numpy.bool_`` included), else ``None``: what counts as a numeric extra."""
    if isinstance(value, numbers.Real):  # bool is an int, so True -> 1.0
        return float(value)
    item = getattr(value, "item", None)
    if callable(item) and getattr(value, "ndim", None) == 0:
        return as_number(item())
    return None


def _stats(prefix: str, values: list[float], metrics: dict[str, float]) -> None:
    metrics[f"{prefix}/mean"] = math.fsum(values) / len(values)
    metrics[f"{prefix}/max"] = max(values)
    metrics[f"{prefix}/min"] = min(values)


def compute_data_metrics(
    results: Iterable[RewardResult | Trajectory | Mapping[str, Any]],
) -> dict[str, float]:
    """``reward/mean|max|min`` over the results that have a reward, and
    ``reward_extra/{key}/mean|max|min`` for every extras key with numeric or bool values
    (bools count 0/1), over the results that have the key; ``reward_extra/{key}/count``
    is added when some results lack it. Non-numeric extras are not aggregated.
    """
    rewards: list[float] = []
    extras: dict[str, list[float]] = {}
    total = 0
    for index, item in enumerate(results):
        total += 1
        value, item_extras = _reward_and_extras(item, index)
        if value is not None:
            rewards.append(value)
        for key, extra in item_extras.items():
            number = as_number(extra)
            if number is not None:
                extras.setdefault(key, []).append(number)
    metrics: dict[str, float] = {}
    if rewards:
        _stats("reward", rewards, metrics)
    for key in sorted(extras):
        values = extras[key]
        _stats(f"reward_extra/{key}", values, metrics)
        if len(values) < total:
            metrics[f"reward_extra/{key}/count"] = len(values)
    return metrics
