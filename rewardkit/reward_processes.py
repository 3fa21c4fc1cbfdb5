"""``rewardkit.reward_processes``: the public face of the worker processes of rewards run with
``execution="process"`` (defined in ``rewardkit.runtime.run.reward_processes``). The module acts
as the object: ``from rewardkit import reward_processes`` then ``reward_processes.max_workers = 4``."""

from __future__ import annotations

from rewardkit._lazy import module_acting_as
from rewardkit.runtime.run.reward_processes import (
    RewardProcesses,
    RewardProcessPool,
    RewardProcessStats,
    reward_processes,
)

module_acting_as(__name__, reward_processes, ("max_workers", "stats", "shutdown"))

__all__ = ["RewardProcessPool", "RewardProcessStats", "RewardProcesses", "reward_processes"]
