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
    from rewardkit.builtin_rewards import get_reward as get_reward
    from rewardkit.builtin_rewards import list_rewards as list_rewards
    from rewardkit.composition import RewardComponentError as RewardComponentError
    from rewardkit.composition import weighted_sum as weighted_sum
    from rewardkit.runtime.batch.calculate import build_fields as build_fields
    from rewardkit.runtime.batch.calculate import calculate_reward as calculate_reward
    from rewardkit.runtime.batch.calculate import calculate_rewards as calculate_rewards
    from rewardkit.runtime.batch.metrics import Trajectory as Trajectory
    from rewardkit.runtime.batch.metrics import compute_data_metrics as compute_data_metrics
    from rewardkit.runtime.define.errors import FieldCollisionError as FieldCollisionError
    from rewardkit.runtime.define.errors import MissingFieldError as MissingFieldError
    from rewardkit.runtime.define.errors import ResourceTimeoutError as ResourceTimeoutError
    from rewardkit.runtime.define.errors import RewardAbortedError as RewardAbortedError
    from rewardkit.runtime.define.errors import RewardError as RewardError
    from rewardkit.runtime.define.errors import RewardExecutionError as RewardExecutionError
    from rewardkit.runtime.define.errors import RewardLoadError as RewardLoadError
    from rewardkit.runtime.define.errors import RewardRegistryError as RewardRegistryError
    from rewardkit.runtime.define.errors import RewardShapeError as RewardShapeError
    from rewardkit.runtime.define.errors import RewardValueError as RewardValueError
    from rewardkit.runtime.define.errors import SignalInThreadError as SignalInThreadError
    from rewardkit.runtime.define.errors import UnknownRewardError as UnknownRewardError
    from rewardkit.runtime.define.fields import PREDEFINED_FIELDS as PREDEFINED_FIELDS
    from rewardkit.runtime.define.group_rewards import GroupingError as GroupingError
    from rewardkit.runtime.define.group_rewards import GroupReward as GroupReward
    from rewardkit.runtime.define.group_rewards import group_reward as group_reward
    from rewardkit.runtime.define.results import NOT_APPLICABLE as NOT_APPLICABLE
    from rewardkit.runtime.define.results import NotApplicable as NotApplicable
    from rewardkit.runtime.define.results import RewardResult as RewardResult
    from rewardkit.runtime.define.rewards import BaseReward as BaseReward
    from rewardkit.runtime.define.rewards import Reward as Reward
    from rewardkit.runtime.define.rewards import reward as reward
    from rewardkit.runtime.run.context import Context as Context
    from rewardkit.runtime.run.context import ResourceManager as ResourceManager
    from rewardkit.runtime.run.context import ResourceSpec as ResourceSpec
    from rewardkit.runtime.run.reward_threads import (
        RewardThreadsUnavailableError as RewardThreadsUnavailableError,
    )

_EXPORTS = {
    "build_fields": "rewardkit.runtime.batch.calculate",
    "calculate_reward": "rewardkit.runtime.batch.calculate",
    "calculate_rewards": "rewardkit.runtime.batch.calculate",
    "Context": "rewardkit.runtime.run.context",
    "ResourceManager": "rewardkit.runtime.run.context",
    "ResourceSpec": "rewardkit.runtime.run.context",
    "FieldCollisionError": "rewardkit.runtime.define.errors",
    "MissingFieldError": "rewardkit.runtime.define.errors",
    "ResourceTimeoutError": "rewardkit.runtime.define.errors",
    "RewardAbortedError": "rewardkit.runtime.define.errors",
    "RewardError": "rewardkit.runtime.define.errors",
    "RewardExecutionError": "rewardkit.runtime.define.errors",
    "RewardLoadError": "rewardkit.runtime.define.errors",
    "SignalInThreadError": "rewardkit.runtime.define.errors",
    "RewardRegistryError": "rewardkit.runtime.define.errors",
    "RewardShapeError": "rewardkit.runtime.define.errors",
    "RewardValueError": "rewardkit.runtime.define.errors",
    "UnknownRewardError": "rewardkit.runtime.define.errors",
    "PREDEFINED_FIELDS": "rewardkit.runtime.define.fields",
    "RewardComponentError": "rewardkit.composition",
    "weighted_sum": "rewardkit.composition",
    "GroupReward": "rewardkit.runtime.define.group_rewards",
    "GroupingError": "rewardkit.runtime.define.group_rewards",
    "group_reward": "rewardkit.runtime.define.group_rewards",
    "NOT_APPLICABLE": "rewardkit.runtime.define.results",
    "NotApplicable": "rewardkit.runtime.define.results",
    "Trajectory": "rewardkit.runtime.batch.metrics",
    "compute_data_metrics": "rewardkit.runtime.batch.metrics",
    "get_reward": "rewardkit.builtin_rewards",
    "list_rewards": "rewardkit.builtin_rewards",
    "RewardResult": "rewardkit.runtime.define.results",
    "RewardThreadsUnavailableError": "rewardkit.runtime.run.reward_threads",
    "BaseReward": "rewardkit.runtime.define.rewards",
    "Reward": "rewardkit.runtime.define.rewards",
    "reward": "rewardkit.runtime.define.rewards",
}
"""Public name -> the module that defines it (imported on first access)."""


__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)

__all__ = ["__version__", *_EXPORTS]
"""Every public name: the table's, and the version (read eagerly)."""
