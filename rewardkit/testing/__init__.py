"""Property testing for reward functions: hypothesis strategies, the reward contract, hack search.

Needs hypothesis (the ``testing`` extra). Names load on first use, so the
pytest plugin's golden files work without importing hypothesis.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rewardkit.testing.calling import (
        RewardCaller,
        RewardLookupError,
        call_reward,
        resolve_reward,
    )
    from rewardkit.testing.contract import (
        RewardContractError,
        check_reward_contract,
        reward_contract,
    )
    from rewardkit.testing.hacks import RewardHack, find_reward_hacks
    from rewardkit.testing.strategies import (
        INJECTION_PAYLOADS,
        adversarial_text,
        boxed_responses,
        equivalent_renderings,
        gold_responses,
        hedged_responses,
        latex_numbers,
        number_values,
        renderings,
        trajectories,
    )

_EXPORTS = {
    "RewardCaller": "calling",
    "RewardLookupError": "calling",
    "call_reward": "calling",
    "resolve_reward": "calling",
    "RewardContractError": "contract",
    "check_reward_contract": "contract",
    "reward_contract": "contract",
    "RewardHack": "hacks",
    "find_reward_hacks": "hacks",
    "INJECTION_PAYLOADS": "strategies",
    "adversarial_text": "strategies",
    "boxed_responses": "strategies",
    "equivalent_renderings": "strategies",
    "gold_responses": "strategies",
    "hedged_responses": "strategies",
    "latex_numbers": "strategies",
    "number_values": "strategies",
    "renderings": "strategies",
    "trajectories": "strategies",
}

__all__ = [
    "INJECTION_PAYLOADS",
    "RewardCaller",
    "RewardContractError",
    "RewardHack",
    "RewardLookupError",
    "adversarial_text",
    "boxed_responses",
    "call_reward",
    "check_reward_contract",
    "equivalent_renderings",
    "find_reward_hacks",
    "gold_responses",
    "hedged_responses",
    "latex_numbers",
    "number_values",
    "renderings",
    "resolve_reward",
    "reward_contract",
    "trajectories",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rewardkit.testing' has no attribute {name!r}")
    try:
        value = getattr(importlib.import_module(f"rewardkit.testing.{module}"), name)
    except ImportError as exc:
        if exc.name == "hypothesis":
            from rewardkit.install import install_command

            raise ImportError(
                f"rewardkit.testing.{name} needs hypothesis: {install_command('testing')}"
            ) from exc
        raise
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
