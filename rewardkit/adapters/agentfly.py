"""AgentFly: its call convention, with the adapters' timeout and error policy.

AgentFly's runner awaits ``reward_fn(final_response=..., trajectory=..., id=..., **fields)``
where ``fields`` are the task's fields plus what it injects (``chain_id``, ``group_id``,
``chain_idx``, ``group_idx``, ``finish_reason``: ``rewardkit.runtime.define.fields.AGENTFLY_INJECTED_FIELDS``),
and reads ``result["reward"]`` from the dict it gets back (other keys are extras).

A rewardkit reward object already takes that call (it picks the fields it declares and
ignores the rest); ``to_agentfly`` adds what AgentFly lacks: always awaitable, a flat
``{"reward": ..., **extras, "error": ...}`` dict with the same keys on every call (the reward's
result schema; ``error`` is ``""`` unless the call failed), a per-call timeout and a fallback.
"""

from __future__ import annotations

import importlib
import types
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from rewardkit.adapters.base import RewardAdapter
from rewardkit.adapters.messages import prompt_text
from rewardkit.adapters.options import OPTION_NAMES

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from rewardkit.adapters.options import AdapterOptions, AdapterOptionsDict


def with_prompt_and_completion(fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` plus ``prompt`` and ``completion`` split from AgentFly's ``trajectory`` at its
    first assistant message (kept as given when the caller passes them, or without a trajectory)."""
    trajectory = fields.get("trajectory")
    if not isinstance(trajectory, list) or ("prompt" in fields and "completion" in fields):
        return fields
    start = next(
        (
            i
            for i, m in enumerate(trajectory)
            if isinstance(m, dict) and m.get("role") == "assistant"
        ),
        len(trajectory),
    )
    derived = {"prompt": prompt_text(trajectory[:start]), "completion": trajectory[start:]}
    return {**derived, **fields}


AGENTFLY_REGISTRY_MODULES = ("agentfly.rewards.reward_base", "agentfly.rewards")
"""Where AgentFly's ``register_reward`` lives (its reward runtime, then the package re-exporting it)."""

AGENTFLY_RESERVED_EXTRAS: Mapping[str, str] = types.MappingProxyType(
    {"error": "the adapter reports failures under it"}
)


async def _agentfly_reward(**fields: Any) -> dict[str, Any]:
    """The signature AgentFly sees on the adapter (never called)."""
    raise NotImplementedError


class AgentFlyReward(RewardAdapter, awaitable=_agentfly_reward):
    """AgentFly reward (``async def``): ``await adapter(**fields)`` -> ``{"reward": ..., **extras}``."""

    framework: ClassVar[str] = "AgentFly"
    factory: ClassVar[str] = "to_agentfly"
    options_taken: ClassVar[frozenset[str]] = frozenset(OPTION_NAMES) - {"field_map", "concurrency"}
    """AgentFly passes fields by name and scores one rollout per call."""
    reserved_extras: ClassVar[Mapping[str, str]] = AGENTFLY_RESERVED_EXTRAS

    def __init__(
        self,
        reward: Any,
        *,
        options: AdapterOptions | None = None,
        **keywords: Unpack[AdapterOptionsDict],
    ) -> None:
        super().__init__(reward, options=options, **keywords)
        if self.is_group:  # refused when built, as every adapter that can never give it a group
            raise self.group_error(
                f"{self.group_hint()}, so it never has a group or a batch to give it"
            )

    def group_hint(self) -> str:
        return "AgentFly's runner calls the reward once per rollout"

    async def score_call(self, **fields: Any) -> dict[str, Any]:
        """Score one rollout: AgentFly's flat result dict."""
        scored = await self.score_one_async(with_prompt_and_completion(fields))
        return {
            "reward": scored.reward,
            **self.schema.conform(scored.extras),
            "error": scored.error or "",
        }


def to_agentfly(
    reward: Any,
    *,
    options: AdapterOptions | None = None,
    **keywords: Unpack[AdapterOptionsDict],
) -> AgentFlyReward:
    """Wrap ``reward`` for AgentFly's runner (where a ``@reward`` object also works as is) to
    get a per-call ``timeout``, a ``fallback`` with an ``error`` extra on failure, and the same
    extras keys on every call (``extra_keys``, ``missing_extra``: see ``to_verl``); ``execution``
    runs it in a thread or a worker process (see ``rewardkit.runtime.run.execution``). ``options`` and the
    keyword arguments are ``AdapterOptions`` but for ``field_map`` and ``concurrency``, which
    AgentFly has no use for (a ``TypeError``)."""
    return AgentFlyReward(reward, options=options, **keywords)


def _agentfly_registry() -> Any:
    """AgentFly's reward registry module (the one with ``register_reward``), imported."""
    for module in AGENTFLY_REGISTRY_MODULES:
        try:
            loaded = importlib.import_module(module)
        except ImportError:
            continue
        if callable(getattr(loaded, "register_reward", None)):
            return loaded
    raise ImportError(
        "AgentFly is not importable here (no register_reward in "
        f"{' or '.join(AGENTFLY_REGISTRY_MODULES)}); install AgentFly, or pass registry=<its reward_base module>"
    )


def register_in_agentfly(
    reward: Any,
    *,
    registry: Any = None,
    options: AdapterOptions | None = None,
    **keywords: Unpack[AdapterOptionsDict],
) -> AgentFlyReward:
    """Make ``reward`` visible to AgentFly's registry, so that an AgentFly config's
    ``reward_name: <name>`` finds it (``get_reward_from_name``), and return the adapter registered.

    The reward goes in as ``to_agentfly(reward, options=options, **keywords)``: awaitable, a flat dict
    with the same keys on every call, timeout and fallback. ``name`` defaults to the reward's name
    (AgentFly looks names up in lower case). ``registry``: AgentFly's ``reward_base`` module (or any
    module with its ``register_reward(name, fn)``), by default imported from ``agentfly.rewards``.
    Call it where AgentFly will have imported it before building the agent (the training script,
    or a module the config's tools import).
    """
    adapter = to_agentfly(reward, options=options, **keywords)
    module = _agentfly_registry() if registry is None else registry
    module.register_reward(adapter.__name__, adapter)
    return adapter
