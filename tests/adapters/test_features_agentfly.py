"""AgentFly: ``to_agentfly`` splits the trajectory into ``prompt`` and ``completion``; a
"not applicable" sample and a group reward under its per-rollout calls."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from rewardkit import NOT_APPLICABLE, group_reward, reward
from rewardkit.adapters import register_in_agentfly, to_agentfly

TRAJECTORY = [
    {"role": "system", "content": "use the calculator"},
    {"role": "user", "content": "what is 6*7?"},
    {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "mul"}}]},
    {"role": "tool", "content": "42"},
    {"role": "assistant", "content": "42"},
]


@reward(name="af_prompt_completion", auto_register=False)
def prompt_completion(prompt: str, completion: list[dict[str, Any]], final_response: str) -> Any:
    if prompt == "skip":
        return NOT_APPLICABLE
    return {"reward": float(final_response == "42"), "prompt": prompt, "turns": len(completion)}


@group_reward(name="af_group", auto_register=False)
def group(final_response: list[str]) -> list[float]:
    return [1.0] * len(final_response)


@group_reward(name="af_batch", over="batch", auto_register=False)
def batch(final_response: list[str]) -> list[float]:
    return [1.0] * len(final_response)


class NoRegistry:
    """A registry that must never be reached: the adapter is refused before registering."""

    @staticmethod
    def register_reward(name: str, function: Any) -> None:
        raise AssertionError(f"{name} registered")


NO_REGISTRY = NoRegistry()


def test_prompt_and_completion_from_the_trajectory() -> None:
    adapter = to_agentfly(prompt_completion)
    result = asyncio.run(
        adapter(final_response="42", trajectory=TRAJECTORY, id="r1", chain_id="c", group_id="g")
    )
    assert result == {"reward": 1.0, "prompt": "what is 6*7?", "turns": 3, "error": ""}
    skipped = asyncio.run(
        adapter(final_response="42", trajectory=[{"role": "user", "content": "skip"}], id="r2")
    )
    assert skipped == {"reward": 0.0, "prompt": None, "turns": None, "error": ""}  # not a failure
    assert adapter.stats.failures == 0


@pytest.mark.parametrize(
    "build", [to_agentfly, lambda r: register_in_agentfly(r, registry=NO_REGISTRY)]
)
def test_a_group_reward_is_refused_when_the_adapter_is_built(build: Any) -> None:
    with pytest.raises(
        TypeError, match=r"group reward.*AgentFly's runner calls the reward once per rollout"
    ):
        build(group)
    with pytest.raises(TypeError, match="scores the samples of a batch together"):
        build(batch)
