"""``rewardkit.reward_threads``: the public face of the bounded pool sync rewards run in (defined
in ``rewardkit.runtime.run.reward_threads``). The module acts as the pool: ``from rewardkit import
reward_threads`` then ``reward_threads.max_threads = 32`` sets the pool's bound."""

from __future__ import annotations

from rewardkit._lazy import module_acting_as
from rewardkit.runtime.run.reward_threads import (
    DEFAULT_MAX_THREADS,
    RewardThreadPool,
    RewardThreadStats,
    RewardThreadsUnavailableError,
    reward_threads,
)

module_acting_as(__name__, reward_threads, ("max_threads", "stats", "describe", "submit"))

__all__ = [
    "DEFAULT_MAX_THREADS",
    "RewardThreadPool",
    "RewardThreadStats",
    "RewardThreadsUnavailableError",
    "reward_threads",
]
