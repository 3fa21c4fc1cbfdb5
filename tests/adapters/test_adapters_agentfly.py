"""AgentFly's call convention: the reward object as is, and ``to_agentfly`` for timeout and fallback."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from adapter_rewards import exact, exact_async

from rewardkit.adapters import to_agentfly
from rewardkit.runtime.define.fields import AGENTFLY_INJECTED_FIELDS
from rewardkit.runtime.define.results import RewardResult

TRAJECTORY = [{"role": "user", "content": "6*7?"}, {"role": "assistant", "content": "42"}]


def agentfly_call_fields() -> dict[str, Any]:
    """What AgentFly's runner passes: predefined fields, its injected fields, the task's fields."""
    injected = {name: f"{name}-value" for name in AGENTFLY_INJECTED_FIELDS}
    return {
        "final_response": "42",
        "trajectory": TRAJECTORY,
        "id": "rollout-1",
        **injected,
        "answer": "42",
        "task_id": "t-9",
    }


async def agentfly_runner(reward_fn: Any) -> float:
    """AgentFly awaits the reward with keyword fields and reads ``["reward"]`` from a dict."""
    result = await reward_fn(**agentfly_call_fields())
    return float(result["reward"])


def test_reward_object_takes_agentflys_call_and_ignores_undeclared_fields() -> None:
    result = exact(**agentfly_call_fields())
    assert result == RewardResult(1.0, {"matched": True, "length": 2})
    assert result.as_dict() == {"reward": 1.0, "matched": True, "length": 2}
    assert asyncio.run(exact_async(**agentfly_call_fields())) == result


def test_an_async_reward_object_is_given_to_agentflys_runner_as_is() -> None:
    # AgentFly's rewards are async and its runner reads result["reward"]: an async rewardkit
    # reward needs no adapter (to_agentfly adds the timeout, fallback and sync rewards).
    assert asyncio.run(agentfly_runner(exact_async)) == 1.0
    result = asyncio.run(exact_async(**agentfly_call_fields()))
    assert (result["reward"], result["matched"], result["length"]) == (1.0, True, 2)


def test_to_agentfly_is_awaitable_for_sync_and_async_rewards() -> None:
    for reward in (exact, exact_async):
        adapter = to_agentfly(reward)
        assert inspect.iscoroutinefunction(adapter)
        assert asyncio.run(agentfly_runner(adapter)) == 1.0
        # The same keys on every call: the reward's extras and `error` ("" unless the call failed).
        assert asyncio.run(adapter(**agentfly_call_fields())) == {"reward": 1.0, "matched": True, "length": 2, "error": ""}


def test_to_agentfly_counts_calls() -> None:
    adapter = to_agentfly(exact_async, name="exact_for_agentfly")
    asyncio.run(agentfly_runner(adapter))
    assert adapter.__name__ == "exact_for_agentfly"
    assert (adapter.stats.calls, adapter.stats.failures) == (1, 0)
