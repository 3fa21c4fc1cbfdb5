"""Quick fixes as data (title + text edits): the language server only converts them to LSP edits.

Builders here take the facts of a reward and return :class:`Fix` objects in the same coordinates
as diagnostics; :func:`apply_edits` applies them to text (tests, editors without LSP).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import libcst as cst

from rewardkit.checks.model import Diagnostic, Fix, Span, TextEdit

if TYPE_CHECKING:
    from rewardkit.checks.discovery import CallFact, RewardFacts

SUPPRESSION = re.compile(r"#\s*rewardkit:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)
"""``# rewardkit: ignore`` (every code) or ``# rewardkit: ignore[RK101, RK204]`` on a line."""

REWARD_PLACEHOLDER = "0.0"
"""What the add-``reward``-key fix writes when no numeric value is at hand (select it to edit)."""

SCORE_KEYS = (
    "score",
    "accuracy",
    "acc",
    "f1",
    "em",
    "exact_match",
    "correct",
    "is_correct",
    "value",
)
"""Keys whose value is the best guess for a missing ``reward`` (in this order)."""

_NOT_NUMERIC = (
    cst.SimpleString,
    cst.ConcatenatedString,
    cst.FormattedString,
    cst.List,
    cst.Tuple,
    cst.Set,
    cst.Dict,
    cst.ListComp,
    cst.SetComp,
    cst.DictComp,
    cst.GeneratorExp,
    cst.Lambda,
)


def _offsets(source: str) -> list[int]:
    starts = [0]
    index = source.find("\n")
    while index != -1:
        starts.append(index + 1)
        index = source.find("\n", index + 1)
    return starts


def apply_edits(source: str, edits: Iterable[TextEdit]) -> str:
    """``source`` with non-overlapping ``edits`` applied (positions refer to the original text)."""
    starts = _offsets(source)

    def offset(line: int, column: int) -> int:
        if line > len(starts):
            return len(source)
        return min(starts[line - 1] + column, len(source))

    ordered = sorted(
        edits, key=lambda e: (e.line, e.column, e.end_line, e.end_column), reverse=True
    )
    for edit in ordered:
        start = offset(edit.line, edit.column)
        end = offset(edit.end_line, edit.end_column)
        source = source[:start] + edit.new_text + source[end:]
    return source


def suppressed_codes(line_text: str) -> frozenset[str] | None:
    """Codes a line suppresses: ``None`` when none, an empty set for a bare ``# rewardkit: ignore``."""
    match = SUPPRESSION.search(line_text)
    if match is None:
        return None
    codes = match.group("codes")
    if codes is None:
        return frozenset()
    return frozenset(code.strip().upper() for code in codes.split(",") if code.strip())


def suppression_fix(diagnostic: Diagnostic, source: str) -> Fix:
    """A fix that adds ``# rewardkit: ignore[CODE]`` to the diagnostic's line (or extends the list there)."""
    lines = source.split("\n")
    index = diagnostic.line - 1
    line_text = lines[index] if 0 <= index < len(lines) else ""
    line_text = line_text.rstrip("\r")
    title = f"Suppress {diagnostic.code} on this line"
    match = SUPPRESSION.search(line_text)
    if match is not None and match.group("codes") is not None:
        existing = [code.strip() for code in match.group("codes").split(",") if code.strip()]
        if diagnostic.code not in existing:
            existing.append(diagnostic.code)
        start, end = match.span()
        edit = TextEdit(
            diagnostic.line,
            start,
            diagnostic.line,
            end,
            f"# rewardkit: ignore[{', '.join(existing)}]",
        )
        return Fix(title, (edit,))
    if match is not None:  # a bare ignore already suppresses everything
        return Fix(title, ())
    stripped = line_text.rstrip()
    column = len(stripped)
    separator = "  " if stripped else ""
    edit = TextEdit(
        diagnostic.line,
        column,
        diagnostic.line,
        len(line_text),
        f"{separator}# rewardkit: ignore[{diagnostic.code}]",
    )
    return Fix(title, (edit,))


def rename_fix(facts: RewardFacts, parameter: str, suggestion: str) -> Fix:
    """Rename a parameter and its uses in the reward's body to ``suggestion``."""
    spans: list[Span] = []
    for declared, _ in facts.parameters:
        if declared.name == parameter:
            spans.append(declared.span)
    spans.extend(facts.name_uses.get(parameter, ()))
    edits = tuple(
        TextEdit(span.line, span.column, span.end_line, span.end_column, suggestion)
        for span in sorted(set(spans))
    )
    return Fix(f"Rename `{parameter}` to `{suggestion}`", edits, is_preferred=True)


def _reward_expression(
    facts: RewardFacts, pairs: Sequence[tuple[str | None, cst.BaseExpression]]
) -> str:
    by_key = {key: value for key, value in pairs if key is not None}
    for key in SCORE_KEYS:
        value = by_key.get(key)
        if value is not None and not isinstance(value, _NOT_NUMERIC):
            return facts.code(value)
    for _, value in pairs:
        if isinstance(value, _NOT_NUMERIC):
            continue
        if isinstance(value, cst.Name) and value.value in ("None", "True", "False"):
            continue
        text = facts.code(value)
        if "\n" not in text:
            return text
    return REWARD_PLACEHOLDER


def add_reward_key_fix(facts: RewardFacts, target: cst.CSTNode) -> Fix | None:
    """Add a ``reward`` entry to a dict display or ``dict(...)`` call, valued from its closest numeric entry."""
    from rewardkit.checks.discovery import string_value

    positions = facts.positions
    if target not in positions:
        return None
    if isinstance(target, cst.Dict):
        pairs = [
            (string_value(element.key), element.value)
            for element in target.elements
            if isinstance(element, cst.DictElement)
        ]
        expression = _reward_expression(facts, pairs)
        quote = '"'
        for element in target.elements:
            if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
                quote = element.key.quote[-1]
                break
        key = f"{quote}reward{quote}: {expression}"
        if not target.elements:
            line, column = positions.end(target.lbrace)
            return Fix(_add_title(expression), (TextEdit(line, column, line, column, key),))
        first = target.elements[0]
        line, column = positions.start(first)
        dict_line, _ = positions.start(target.lbrace)
        text = f"{key},\n{' ' * column}" if line > dict_line else f"{key}, "
        return Fix(_add_title(expression), (TextEdit(line, column, line, column, text),))
    if isinstance(target, cst.Call):
        pairs = [(arg.keyword.value if arg.keyword else None, arg.value) for arg in target.args]
        expression = _reward_expression(facts, pairs)
        if target.args:
            line, column = positions.start(target.args[0])
            text = f"reward={expression}, "
        else:
            line, column = positions.end(target)
            column -= 1  # just before ")"
            text = f"reward={expression}"
        return Fix(_add_title(expression), (TextEdit(line, column, line, column, text),))
    return None


def _add_title(expression: str) -> str:
    if expression == REWARD_PLACEHOLDER:
        return f"Add a `reward` key (placeholder {REWARD_PLACEHOLDER})"
    return f"Add a `reward` key with `{expression}`"


def await_fix(facts: RewardFacts, call: CallFact) -> Fix:
    """Insert the missing ``await`` before a call (parenthesised when the result is used further)."""
    line, column = facts.positions.start(call.node)
    end_line, end_column = facts.positions.end(call.node)
    parent = call.parent
    needs_parentheses = (
        (isinstance(parent, cst.Attribute) and parent.value is call.node)
        or (isinstance(parent, cst.Subscript) and parent.value is call.node)
        or (isinstance(parent, cst.Call) and parent.func is call.node)
    )
    if needs_parentheses:
        edits = (
            TextEdit(line, column, line, column, "(await "),
            TextEdit(end_line, end_column, end_line, end_column, ")"),
        )
    else:
        edits = (TextEdit(line, column, line, column, "await "),)
    return Fix("Insert `await`", edits, is_preferred=True)


def make_async_fix(facts: RewardFacts) -> Fix:
    """Turn the reward's ``def`` into ``async def`` (its callers then await it)."""
    line, column = facts.positions.start(facts.function)
    return Fix("Make the reward `async`", (TextEdit(line, column, line, column, "async "),))
