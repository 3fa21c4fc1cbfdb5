"""Property testing for reward functions: hypothesis strategies, the reward contract, hack search.

Needs hypothesis (the ``testing`` extra). Names load on first use, so the
pytest plugin's golden files work without importing hypothesis.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rewardkit.testing.calling import RewardCaller as RewardCaller
    from rewardkit.testing.calling import RewardLookupError as RewardLookupError
    from rewardkit.testing.calling import call_reward as call_reward
    from rewardkit.testing.calling import resolve_reward as resolve_reward
    from rewardkit.testing.contract import RewardContractError as RewardContractError
    from rewardkit.testing.contract import check_reward_contract as check_reward_contract
    from rewardkit.testing.contract import reward_contract as reward_contract
    from rewardkit.testing.hacks import RewardHack as RewardHack
    from rewardkit.testing.hacks import find_reward_hacks as find_reward_hacks
    from rewardkit.testing.strategies import INJECTION_PAYLOADS as INJECTION_PAYLOADS
    from rewardkit.testing.strategies import adversarial_text as adversarial_text
    from rewardkit.testing.strategies import boxed_responses as boxed_responses
    from rewardkit.testing.strategies import equivalent_renderings as equivalent_renderings
    from rewardkit.testing.strategies import gold_responses as gold_responses
    from rewardkit.testing.strategies import hedged_responses as hedged_responses
    from rewardkit.testing.strategies import latex_numbers as latex_numbers
    from rewardkit.testing.strategies import number_values as number_values
    from rewardkit.testing.strategies import renderings as renderings
    from rewardkit.testing.strategies import trajectories as trajectories

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

__all__ = [*_EXPORTS]
"""Every public name: the keys of the one table above."""


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
