"""Hover and completion for reward parameters, from the engine's reward definitions and config.

No analysis here: the engine found the rewards and their parameter spans; this only looks up
the one under the cursor and says what the runtime passes to it.
"""

from __future__ import annotations

from lsprotocol import types

from rewardkit.checks import CheckConfig, RewardDefinition, RewardParameter
from rewardkit.fields import PREDEFINED_FIELDS


def parameter_at(
    rewards: tuple[RewardDefinition, ...], line: int, column: int
) -> tuple[RewardDefinition, RewardParameter] | None:
    """The reward parameter whose name spans the position (1-based line, code-point column)."""
    for reward in rewards:
        for parameter in reward.parameters:
            if parameter.span.contains(line, column):
                return reward, parameter
    return None


def reward_label(reward: RewardDefinition) -> str:
    """How hover names a reward: its registered name and where it is defined."""
    owner = f"{reward.class_name}.call" if reward.kind == "class" else reward.function_name
    name = f"`{reward.name}`" if reward.name else "(name computed at run time)"
    return f"{'async ' if reward.is_async else ''}reward {name} ({owner})"


def hover_markdown(
    reward: RewardDefinition, parameter: RewardParameter, config: CheckConfig
) -> str:
    """Markdown saying what the runtime passes to ``parameter`` of ``reward``."""
    title = f"**`{parameter.name}`**: parameter of {reward_label(reward)}"
    if parameter.kind in ("var_positional", "var_keyword"):
        return f"{title}\n\nrewards are called with keyword arguments only; this collects nothing."
    described = dict(reward.own_fields).get(parameter.name) or config.describe_field(parameter.name)
    if described is not None:
        kind = "predefined field" if parameter.name in PREDEFINED_FIELDS else "field"
        return f"{title}\n\n{kind}: {described}"
    if parameter.has_default:
        return f"{title}\n\nno field fills it: it always receives its default."
    declared = "declared task fields" if config.has_task_fields else "task fields (none declared)"
    return f"{title}\n\nnot a predefined field nor one of the {declared}: nothing fills it."


def reward_with_parameter_list_at(
    rewards: tuple[RewardDefinition, ...], line: int, column: int
) -> RewardDefinition | None:
    """The reward whose parameter list (between the parentheses) holds the position."""
    for reward in rewards:
        if reward.parameters_span.contains(line, column):
            return reward
    return None


def field_completions(
    reward: RewardDefinition,
    config: CheckConfig,
    line: int,
    column: int,
    markup: types.MarkupKind = types.MarkupKind.Markdown,
) -> list[types.CompletionItem]:
    """Field names ``reward`` does not declare yet (the one being typed does not count)."""
    used = {
        parameter.name
        for parameter in reward.parameters
        if not parameter.span.contains(line, column)
    }
    items = []
    fields = {**config.known_fields(), **dict(reward.own_fields)}
    for order, (name, description) in enumerate(fields.items()):
        if name in used:
            continue
        if name in PREDEFINED_FIELDS:
            detail = "predefined field"
        elif name in config.task_fields:
            detail = "task field"
        else:
            detail = "injected field"
        items.append(
            types.CompletionItem(
                label=name,
                kind=types.CompletionItemKind.Field,
                detail=detail,
                documentation=types.MarkupContent(kind=markup, value=description),
                sort_text=f"{order:04d}",
            )
        )
    return items
