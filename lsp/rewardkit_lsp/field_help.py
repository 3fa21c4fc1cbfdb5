"""Hover and completion for reward parameters, from the engine's reward definitions and config.

No analysis here: the engine found the rewards, their parameter spans and the diagnostics; this
only looks up the one under the cursor and says what the runtime passes to it, in the markup the
client declared (Markdown, or plain text for clients that list only ``plaintext``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from rewardkit.checks import CheckConfig, Diagnostic, RewardDefinition, RewardParameter
from rewardkit.runtime.define.fields import PREDEFINED_FIELDS

MARKDOWN = "markdown"
PLAINTEXT = "plaintext"
_CODE = re.compile(r"`([^`]*)`")


def parameter_at(
    rewards: tuple[RewardDefinition, ...], line: int, column: int
) -> tuple[RewardDefinition, RewardParameter] | None:
    """The reward parameter whose name spans the position (1-based line, code-point column)."""
    for reward in rewards:
        for parameter in reward.parameters:
            if parameter.span.contains(line, column):
                return reward, parameter
    return None


def _plain(text: str) -> str:
    """Markdown of this module's texts as plain text: inline code in single quotes, no emphasis."""
    return _CODE.sub(r"'\1'", text.replace("**", ""))


def render(markdown: str, markup: str) -> str:
    """``markdown`` in the client's ``markup`` (``markdown`` or ``plaintext``)."""
    return markdown if markup == MARKDOWN else _plain(markdown)


def reward_label(reward: RewardDefinition) -> str:
    """How hover names a reward: its registered name, and where it is defined only when that
    says more (``reward `qa``` for ``def qa``, never ``reward `qa` (qa)``)."""
    owner = f"{reward.class_name}.call" if reward.kind == "class" else reward.function_name
    prefix = f"{'async ' if reward.is_async else ''}reward"
    if not reward.name:
        return f"{prefix} `{owner}` (its name is computed at run time)"
    if reward.name == owner:
        return f"{prefix} `{reward.name}`"
    return f"{prefix} `{reward.name}` (`{owner}`)"


def _what_fills(reward: RewardDefinition, parameter: RewardParameter, config: CheckConfig) -> str:
    if parameter.kind in ("var_positional", "var_keyword"):
        return "rewards are called with keyword arguments only; this collects nothing."
    described = dict(reward.own_fields).get(parameter.name) or config.describe_field(parameter.name)
    if described is not None:
        kind = "predefined field" if parameter.name in PREDEFINED_FIELDS else "field"
        return f"{kind}: {described}"
    if parameter.has_default:
        return "no field fills it: it always receives its default."
    declared = "declared task fields" if config.has_task_fields else "task fields (none declared)"
    return f"not a predefined field nor one of the {declared}: nothing fills it."


def parameter_findings(
    parameter: RewardParameter, diagnostics: Iterable[Diagnostic]
) -> list[Diagnostic]:
    """The diagnostics about ``parameter`` itself (a misspelling, an unknown field), in order."""
    return [
        diagnostic
        for diagnostic in diagnostics
        if diagnostic.span == parameter.span
        and (diagnostic.data or {}).get("parameter") == parameter.name
    ]


def hover_text(
    reward: RewardDefinition,
    parameter: RewardParameter,
    config: CheckConfig,
    diagnostics: Iterable[Diagnostic] = (),
    markup: str = MARKDOWN,
) -> str:
    """What the runtime passes to ``parameter`` of ``reward``, with what its diagnostics say
    (the same did-you-mean), in ``markup``."""
    parts = [
        f"**`{parameter.name}`**: parameter of {reward_label(reward)}",
        _what_fills(reward, parameter, config),
    ]
    for diagnostic in parameter_findings(parameter, diagnostics):
        suggestion = (diagnostic.data or {}).get("suggestion")
        ask = f"**did you mean `{suggestion}`?** " if suggestion else ""
        parts.append(f"{ask}{diagnostic.code}: {diagnostic.message}")
    return render("\n\n".join(parts), markup)


def reward_with_parameter_list_at(
    rewards: tuple[RewardDefinition, ...], line: int, column: int
) -> RewardDefinition | None:
    """The reward whose parameter list (between the parentheses) holds the position."""
    for reward in rewards:
        if reward.parameters_span.contains(line, column):
            return reward
    return None


_COMPLETION_KIND_FIELD = 5
"""LSP ``CompletionItemKind.Field``."""


def field_completions(
    reward: RewardDefinition,
    config: CheckConfig,
    line: int,
    column: int,
    markup: str = MARKDOWN,
) -> list[dict[str, Any]]:
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
            {
                "label": name,
                "kind": _COMPLETION_KIND_FIELD,
                "detail": detail,
                "documentation": {"kind": markup, "value": render(description, markup)},
                "sortText": f"{order:04d}",
            }
        )
    return items
