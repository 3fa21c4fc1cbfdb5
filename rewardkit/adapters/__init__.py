"""One reward definition under verl, TRL, OpenRLHF and AgentFly.

Each ``to_*`` function wraps a rewardkit reward (a ``@reward`` object, a ``BaseReward``
instance, a plain function or a registry name) as the callable that framework expects:
a top-level, picklable object with a stable ``__name__``, explicit field mapping, the
framework's result shape, and a per-call timeout and error policy the frameworks lack. Their options
are one ``AdapterOptions`` (an object, keyword arguments, or both). See docs/adapters.md.
"""

from rewardkit.adapters.agentfly import AgentFlyReward, register_in_agentfly, to_agentfly
from rewardkit.adapters.base import AdapterStats, RewardAdapter
from rewardkit.adapters.messages import COMMON_STOP_STRINGS, AdapterInputError
from rewardkit.adapters.openrlhf import OPENRLHF_RESERVED_EXTRAS, OpenRLHFReward, to_openrlhf
from rewardkit.adapters.options import (
    DEFAULT_CONCURRENCY,
    FRAMEWORK_DEFAULT,
    AdapterOptions,
    AdapterOptionsDict,
    OnError,
)
from rewardkit.adapters.reference import RewardNotShippableError, RewardReference
from rewardkit.adapters.trl import AsyncTrlReward, TrlReward, to_trl
from rewardkit.adapters.verl import (
    VERL_RESERVED_EXTRAS,
    AsyncVerlReward,
    VerlReward,
    VerlScore,
    to_verl,
)

__all__ = [
    "COMMON_STOP_STRINGS",
    "DEFAULT_CONCURRENCY",
    "FRAMEWORK_DEFAULT",
    "OPENRLHF_RESERVED_EXTRAS",
    "VERL_RESERVED_EXTRAS",
    "AdapterInputError",
    "AdapterOptions",
    "AdapterOptionsDict",
    "AdapterStats",
    "AgentFlyReward",
    "AsyncTrlReward",
    "AsyncVerlReward",
    "OnError",
    "OpenRLHFReward",
    "RewardAdapter",
    "RewardNotShippableError",
    "RewardReference",
    "TrlReward",
    "VerlReward",
    "VerlScore",
    "register_in_agentfly",
    "to_agentfly",
    "to_openrlhf",
    "to_trl",
    "to_verl",
]
