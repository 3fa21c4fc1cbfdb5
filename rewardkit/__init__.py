"""rewardkit: reward functions for LLM RL that are correct before they cost a training run.

The runtime's public API lives here; graders (``rewardkit.math``, ``rewardkit.qa``) are
imported only when used, so ``import rewardkit`` stays light.
"""

from rewardkit._version import __version__
from rewardkit.calculate import build_fields, calculate_reward, calculate_rewards
from rewardkit.context import Context, ResourceManager, ResourceSpec
from rewardkit.errors import (
    FieldCollisionError,
    MissingFieldError,
    ResourceTimeoutError,
    RewardError,
    RewardRegistryError,
    RewardShapeError,
    RewardValueError,
    UnknownRewardError,
)
from rewardkit.fields import PREDEFINED_FIELDS
from rewardkit.metrics import Trajectory, compute_data_metrics
from rewardkit.registry import get_reward, list_rewards
from rewardkit.results import RewardResult
from rewardkit.reward_threads import RewardThreadsUnavailableError
from rewardkit.rewards import BaseReward, Reward, reward

__all__ = [
    "PREDEFINED_FIELDS",
    "BaseReward",
    "Context",
    "FieldCollisionError",
    "MissingFieldError",
    "ResourceManager",
    "ResourceSpec",
    "ResourceTimeoutError",
    "Reward",
    "RewardError",
    "RewardRegistryError",
    "RewardResult",
    "RewardShapeError",
    "RewardThreadsUnavailableError",
    "RewardValueError",
    "Trajectory",
    "UnknownRewardError",
    "__version__",
    "build_fields",
    "calculate_reward",
    "calculate_rewards",
    "compute_data_metrics",
    "get_reward",
    "list_rewards",
    "reward",
]
