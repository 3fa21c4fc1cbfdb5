"""AgentFly: its call convention, with the adapters' timeout and error policy.

AgentFly's runner awaits ``reward_fn(final_response=..., trajectory=..., id=..., **fields)``
where ``fields`` are the task's fields plus what it injects (``chain_id``, ``group_id``,
``chain_idx``, ``group_idx``, ``finish_reason``: ``rewardkit.fields.AGENTFLY_INJECTED_FIELDS``),
and reads ``result["reward"]`` from the dict it gets back (other keys are extras).

A rewardkit reward object already takes that call (it picks the fields it declares and
ignores the rest); ``to_agentfly`` adds what AgentFly lacks: always awaitable, a flat
``{"reward": ..., **extras}`` dict, a per-call timeout and a fallback with an ``error`` extra.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rewardkit.adapters.base import ExecutionMode, OnError, RewardAdapter, mark_coroutine_function


class AgentFlyReward(RewardAdapter):
    """AgentFly reward (``async def``): ``await adapter(**fields)`` -> ``{"reward": ..., **extras}``."""

    framework: ClassVar[str] = "AgentFly"

    async def __call__(self, **fields: Any) -> dict[str, Any]:
        scored = await self.score_one_async(fields)
        if scored.error is not None:
            return {"reward": scored.reward, "error": scored.error}
        return {**(scored.extras or {}), "reward": scored.reward}


async def _agentfly_reward(**fields: Any) -> dict[str, Any]:
    """The signature AgentFly sees on the adapter (never called)."""
    raise NotImplementedError


mark_coroutine_function(AgentFlyReward, _agentfly_reward)


def to_agentfly(
    reward: Any,
    *,
    name: str | None = None,
    timeout: float | None = None,
    execution: ExecutionMode | None = None,
    on_error: OnError = "fallback",
    fallback: float = 0.0,
) -> AgentFlyReward:
    """Wrap ``reward`` for AgentFly's runner (where a ``@reward`` object also works as is) to
    get a per-call ``timeout`` and a ``fallback`` with an ``error`` extra on failure;
    ``execution`` runs it in a thread or a worker process (see ``rewardkit.execution``)."""
    return AgentFlyReward(
        reward, name=name, timeout=timeout, on_error=on_error, fallback=fallback, execution=execution
    )

