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
    from rewardkit.calculate import build_fields as build_fields
    from rewardkit.calculate import calculate_reward as calculate_reward
    from rewardkit.calculate import calculate_rewards as calculate_rewards
    from rewardkit.composition import RewardComponentError as RewardComponentError
    from rewardkit.composition import weighted_sum as weighted_sum
    from rewardkit.context import Context as Context
    from rewardkit.context import ResourceManager as ResourceManager
    from rewardkit.context import ResourceSpec as ResourceSpec
    from rewardkit.errors import FieldCollisionError as FieldCollisionError
    from rewardkit.errors import MissingFieldError as MissingFieldError
    from rewardkit.errors import ResourceTimeoutError as ResourceTimeoutError
    from rewardkit.errors import RewardAbortedError as RewardAbortedError
    from rewardkit.errors import RewardError as RewardError
    from rewardkit.errors import RewardExecutionError as RewardExecutionError
    from rewardkit.errors import RewardLoadError as RewardLoadError
    from rewardkit.errors import RewardRegistryError as RewardRegistryError
    from rewardkit.errors import RewardShapeError as RewardShapeError
    from rewardkit.errors import RewardValueError as RewardValueError
    from rewardkit.errors import SignalInThreadError as SignalInThreadError
    from rewardkit.errors import UnknownRewardError as UnknownRewardError
    from rewardkit.fields import PREDEFINED_FIELDS as PREDEFINED_FIELDS
    from rewardkit.groups import GroupingError as GroupingError
    from rewardkit.groups import GroupReward as GroupReward
    from rewardkit.groups import group_reward as group_reward
    from rewardkit.metrics import Trajectory as Trajectory
    from rewardkit.metrics import compute_data_metrics as compute_data_metrics
    from rewardkit.registry import get_reward as get_reward
    from rewardkit.registry import list_rewards as list_rewards
    from rewardkit.results import NOT_APPLICABLE as NOT_APPLICABLE
    from rewardkit.results import NotApplicable as NotApplicable
    from rewardkit.results import RewardResult as RewardResult
    from rewardkit.reward_threads import (
        RewardThreadsUnavailableError as RewardThreadsUnavailableError,
    )
    from rewardkit.rewards import BaseReward as BaseReward
    from rewardkit.rewards import Reward as Reward
    from rewardkit.rewards import reward as reward

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

__all__ = ["__version__", *_EXPORTS]
"""Every public name: the table's, and the version (read eagerly)."""
