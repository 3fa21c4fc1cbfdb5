"""Names and documentation of the fields the runtime injects into rewards.

One source of truth for the runtime (which fields exist), the static checks
(which parameter names are valid) and the language server (hover text).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Final

PREDEFINED_FIELDS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "final_response": "The agent's final answer text (str): the last assistant message of the rollout.",
        "trajectory": "The rollout's messages (list of dicts with `role` and `content`), oldest first.",
        "context": "The rollout's `rewardkit.Context`: rollout id, metadata and shared resources "
        "(`await context.acquire_resource(...)`).",
        "id": "The rollout id (str), the same as `context.rollout_id`.",
        "prompt": "The prompt's text (str): a text prompt as given (OpenRLHF's prompt after the chat "
        "template, TRL's standard data), a chat prompt's last user message (TRL's conversational data, "
        "verl's `raw_prompt`).",
        "completion": "The completion's messages (list of dicts with `role` and `content`): the messages "
        "after the prompt, the tail of `trajectory` (tool calls and tool results included).",
        "completion_ids": "The completion's token ids (list of int), where the framework has them "
        "(TRL; verl through rewardkit's reward managers).",
        "completion_length": "The completion's length in tokens (int), where the framework has them "
        "(TRL; verl through rewardkit's reward managers).",
    }
)
"""Fields every reward may declare, whatever the task: name -> what it receives."""

AGENTFLY_INJECTED_FIELDS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "chain_id": "AgentFly: the id of the rollout chain.",
        "group_id": "AgentFly: the id of the rollout group (all samples of one prompt).",
        "chain_idx": "AgentFly: the index of the chain within its group.",
        "group_idx": "AgentFly: the index of the group within the batch.",
        "finish_reason": "AgentFly: why generation stopped (e.g. `stop`, `length`).",
    }
)
"""Extra names AgentFly's runner injects; the `preset = "agentfly"` check config adds them."""

FRAMEWORK_CALL_FIELDS: Final[Mapping[str, tuple[str, frozenset[str]]]] = MappingProxyType(
    {
        "to_verl": ("verl's compute_score", frozenset({"solution_str", "solution_strs"})),
        "to_trl": ("TRL's reward function", frozenset({"completions"})),
        "to_openrlhf": ("OpenRLHF's reward_func", frozenset({"queries", "query"})),
    }
)
"""Adapter -> (the framework call it answers, keyword names only that call passes): a reward
called with these fields was handed to the framework bare, without its adapter."""


ADAPTER_FIELDS: Final[frozenset[str]] = frozenset({"final_response", "trajectory"})
"""Fields every adapter passes and no framework's own call does."""


def framework_hint(names: Iterable[str]) -> str:
    """The advice for a reward called the way a framework calls its reward function: which
    ``rewardkit.adapters`` wrapper to use (``""`` when ``names`` match no framework's call)."""
    given = set(names)
    if given & ADAPTER_FIELDS:  # the call came through an adapter: its own hint applies
        return ""
    for adapter, (call, markers) in FRAMEWORK_CALL_FIELDS.items():
        if given & markers:
            return (
                f". These are the arguments of {call}: a rewardkit reward is handed to it through its "
                f"adapter, e.g. `from rewardkit.adapters import {adapter}` and `reward_fn = {adapter}(my_reward)` "
                f"(see docs/adapters.md)"
            )
    return ""
