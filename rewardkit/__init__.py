"""rewardkit: reward functions for LLM RL that are correct before they cost a training run.

The runtime's public API lives here; graders (``rewardkit.math``, ``rewardkit.qa``) are
imported only when used, so ``import rewardkit`` stays light. The runtime itself is imported
on first use of one of its names (PEP 562): ``rewardkit check`` and ``rewardkit --version``
start without loading asyncio and the runtime.
"""

from __future__ import annotations

from rewardkit._lazy import lazy_exports
from rewardkit._version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rewardkit.calculate import build_fields, calculate_reward, calculate_rewards
    from rewardkit.composition import RewardComponentError, weighted_sum
    from rewardkit.context import Context, ResourceManager, ResourceSpec
    from rewardkit.errors import (
        FieldCollisionError,
        MissingFieldError,
        ResourceTimeoutError,
        RewardAbortedError,
        RewardError,
        RewardExecutionError,
        RewardLoadError,
        RewardRegistryError,
        RewardShapeError,
        RewardValueError,
        SignalInThreadError,
        UnknownRewardError,
    )
    from rewardkit.fields import PREDEFINED_FIELDS
    from rewardkit.groups import GroupingError, GroupReward, group_reward
    from rewardkit.metrics import Trajectory, compute_data_metrics
    from rewardkit.registry import get_reward, list_rewards
    from rewardkit.results import NOT_APPLICABLE, NotApplicable, RewardResult
    from rewardkit.reward_threads import RewardThreadsUnavailableError
    from rewardkit.rewards import BaseReward, Reward, reward

_EXPORTS = {
    "build_fields": "rewardkit.calculate",
    "calculate_reward": "rewardkit.calculate",
    "calculate_rewards": "rewardkit.calculate",
    "Context": "rewardkit.context",
    "ResourceManager": "rewardkit.context",
    "ResourceSpec": "rewardkit.context",
    "FieldCollisionError": "rewardkit.errors",
    "MissingFieldError": "rewardkit.errors",
    "ResourceTimeoutError": "rewardkit.errors",
    "RewardAbortedError": "rewardkit.errors",
    "RewardError": "rewardkit.errors",
    "RewardExecutionError": "rewardkit.errors",
    "RewardLoadError": "rewardkit.errors",
    "SignalInThreadError": "rewardkit.errors",
    "RewardRegistryError": "rewardkit.errors",
    "RewardShapeError": "rewardkit.errors",
    "RewardValueError": "rewardkit.errors",
    "UnknownRewardError": "rewardkit.errors",
    "PREDEFINED_FIELDS": "rewardkit.fields",
    "RewardComponentError": "rewardkit.composition",
    "weighted_sum": "rewardkit.composition",
    "GroupReward": "rewardkit.groups",
    "GroupingError": "rewardkit.groups",
    "group_reward": "rewardkit.groups",
    "NOT_APPLICABLE": "rewardkit.results",
    "NotApplicable": "rewardkit.results",
    "Trajectory": "rewardkit.metrics",
    "compute_data_metrics": "rewardkit.metrics",
    "get_reward": "rewardkit.registry",
    "list_rewards": "rewardkit.registry",
    "RewardResult": "rewardkit.results",
    "RewardThreadsUnavailableError": "rewardkit.reward_threads",
    "BaseReward": "rewardkit.rewards",
    "Reward": "rewardkit.rewards",
    "reward": "rewardkit.rewards",
}
"""Public name -> the module that defines it (imported on first access)."""


__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

__all__ = [
    "NOT_APPLICABLE",
    "PREDEFINED_FIELDS",
    "BaseReward",
    "Context",
    "FieldCollisionError",
    "GroupReward",
    "GroupingError",
    "MissingFieldError",
    "NotApplicable",
    "ResourceManager",
    "ResourceSpec",
    "ResourceTimeoutError",
    "Reward",
    "RewardAbortedError",
    "RewardComponentError",
    "RewardError",
    "RewardExecutionError",
    "RewardLoadError",
    "RewardRegistryError",
    "RewardResult",
    "RewardShapeError",
    "RewardThreadsUnavailableError",
    "RewardValueError",
    "SignalInThreadError",
    "Trajectory",
    "UnknownRewardError",
    "__version__",
    "build_fields",
    "calculate_reward",
    "calculate_rewards",
    "compute_data_metrics",
    "get_reward",
    "group_reward",
    "list_rewards",
    "reward",
    "weighted_sum",
]
