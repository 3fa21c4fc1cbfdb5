"""Quick fixes as data (title + text edits): the language server only converts them to LSP edits.

Builders here take the facts of a reward and return :class:`Fix` objects in the same coordinates
as diagnostics; :func:`apply_edits` applies them to text (tests, editors without LSP).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from rewardkit.checks.discovery import dotted_name, string_value
from rewardkit.checks.model import Diagnostic, Fix, Span, TextEdit
from rewardkit.checks.positions import LINE_BREAK, NodePositions

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

NUMERIC_CALLS = frozenset(
    {"float", "int", "len", "round", "abs", "sum", "min", "max", "bool", "pow"}
    | {f"statistics.{name}" for name in ("mean", "fmean", "median", "stdev", "pstdev")}
    | {f"numpy.{name}" for name in ("mean", "sum", "max", "min", "median", "std", "average")}
)
"""Calls (qualified through the module's imports) that return a number; ``math.*`` too."""

_ARITHMETIC = (ast.Div, ast.FloorDiv, ast.Pow)
"""Operators whose result is a number (``+``, ``*``, ``%``, ``-`` also work on strings or sets:
those count when an operand is numeric)."""


def apply_edits(source: str, edits: Iterable[TextEdit]) -> str:
    """``source`` with non-overlapping ``edits`` applied (positions refer to the original text)."""
    offset = NodePositions(source).offset
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
    lines = LINE_BREAK.split(source)
    index = diagnostic.line - 1
    line_text = lines[index] if 0 <= index < len(lines) else ""
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
    spans.extend(facts.positions.span(node) for node in facts.name_uses.get(parameter, ()))
    edits = tuple(
        TextEdit(span.line, span.column, span.end_line, span.end_column, suggestion)
        for span in sorted(set(spans))
    )
    return Fix(f"Rename `{parameter}` to `{suggestion}`", edits, is_preferred=True)


def is_number_literal(node: ast.AST) -> bool:
    """A literal ``int``, ``float`` or ``complex`` (not ``True``/``False``: flags, not scores)."""
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, (int, float, complex))
        and not isinstance(node.value, bool)
    )


def is_numeric(facts: RewardFacts, node: ast.AST, seen: frozenset[str] = frozenset()) -> bool:
    """Whether ``node`` certainly evaluates to a number (``bool`` included): a number literal,
    arithmetic, a comparison, ``float()``/``len()``/``math.*`` and the like, or a local name
    every assignment of which is numeric."""
    if is_number_literal(node):
        return True
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.Not) or is_numeric(facts, node.operand, seen)
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, _ARITHMETIC):
            return True
        return is_numeric(facts, node.left, seen) or is_numeric(facts, node.right, seen)
    if isinstance(node, ast.Compare):
        return True
    if isinstance(node, ast.IfExp):
        return is_numeric(facts, node.body, seen) and is_numeric(facts, node.orelse, seen)
    if isinstance(node, ast.Call):
        called = dotted_name(node.func)
        qualified = facts.context.qualify(called) if called else ""
        return qualified in NUMERIC_CALLS or qualified.startswith("math.")
    if isinstance(node, ast.Name) and node.id not in seen:
        values = facts.bindings.get(node.id)
        seen = seen | {node.id}
        return bool(values) and all(
            value is not None and is_numeric(facts, value, seen) for value in values
        )
    return False


def _reward_expression(
    facts: RewardFacts, pairs: Sequence[tuple[str | None, ast.expr]]
) -> str | None:
    """The closest numeric value among a dict's entries, as source text (``None``: none found).

    A numeric value under a score-like key first, then the first numeric value; failing those,
    a plain name or call under a score-like key (``{"score": f1}``: its key says what it is).
    """
    by_key = {key: value for key, value in pairs if key is not None}
    score_values = [by_key[key] for key in SCORE_KEYS if key in by_key]
    candidates = [
        *(value for value in score_values if is_numeric(facts, value)),
        *(value for _, value in pairs if is_numeric(facts, value)),
        *(
            value
            for value in score_values
            if isinstance(value, (ast.Name, ast.Attribute, ast.Subscript, ast.Call))
        ),
    ]
    for value in candidates:
        text = facts.code(value)
        if "\n" not in text and "\r" not in text:
            return text
    return None


_STRING_PREFIX = re.compile(r"[rRbBuUfF]*")


def add_reward_key_fix(facts: RewardFacts, target: ast.expr) -> Fix | None:
    """Add a ``reward`` entry to a dict display or ``dict(...)`` call, valued from its closest
    numeric entry, else a placeholder the fix asks the editor to select."""
    positions = facts.positions
    if isinstance(target, ast.Dict):
        pairs = [(string_value(key), value) for key, value in zip(target.keys, target.values)]
        quote = '"'
        for key in target.keys:
            if string_value(key) is not None:
                text = positions.code(key)  # type: ignore[arg-type]
                quote = text[_STRING_PREFIX.match(text).end()]  # type: ignore[union-attr]
                break
        prefix = f"{quote}reward{quote}: "
        brace_line, brace_column = positions.start(target)
        if not target.keys:
            line, column = brace_line, brace_column + 1
            suffix = ""
        else:
            first = target.keys[0]
            if first is None:  # `{**base, ...}`: before the `**`
                value_start = positions.start_offset(target.values[0])
                line, column = positions.position(positions.text.rfind("**", 0, value_start))
            else:
                line, column = positions.start(first)
            suffix = f",\n{' ' * column}" if line > brace_line else ", "
    elif isinstance(target, ast.Call):
        arguments: list[ast.AST] = [*target.args, *target.keywords]
        pairs = [(None, argument) for argument in target.args]
        pairs += [(keyword.arg, keyword.value) for keyword in target.keywords]
        prefix = "reward="
        if arguments:
            line, column = min(positions.start(argument) for argument in arguments)
            suffix = ", "
        else:
            line, column = positions.end(target)
            column -= 1  # just before ")"
            suffix = ""
    else:
        return None
    expression = _reward_expression(facts, pairs)
    if expression is not None:
        edit = TextEdit(line, column, line, column, f"{prefix}{expression}{suffix}")
        return Fix(f"Add a `reward` key with `{expression}`", (edit,))
    edit = TextEdit(line, column, line, column, f"{prefix}{REWARD_PLACEHOLDER}{suffix}")
    start = column + len(prefix)
    return Fix(
        f"Add a `reward` key (placeholder {REWARD_PLACEHOLDER})",
        (edit,),
        selection=Span(line, start, line, start + len(REWARD_PLACEHOLDER)),
    )


def await_fix(facts: RewardFacts, call: CallFact) -> Fix:
    """Insert the missing ``await`` before a call (parenthesised when the result is used further)."""
    line, column = facts.positions.start(call.node)
    end_line, end_column = facts.positions.end(call.node)
    parent = call.parent
    needs_parentheses = (
        isinstance(parent, (ast.Attribute, ast.Subscript)) and call.field == "value"
    ) or (isinstance(parent, ast.Call) and call.field == "func")
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


def float_fix(facts: RewardFacts, value: ast.expr) -> Fix:
    """Make a returned ``int`` or ``bool`` a ``float``: ``1`` -> ``1.0``, ``int(x)`` ->
    ``float(x)``, anything else wrapped in ``float(...)``."""
    positions = facts.positions
    line, column = positions.start(value)
    end_line, end_column = positions.end(value)
    if isinstance(value, ast.Constant) and type(value.value) is int:
        edits = (TextEdit(end_line, end_column, end_line, end_column, ".0"),)
        return Fix(f"Return `{positions.code(value)}.0`", edits, is_preferred=True)
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in ("int", "bool")
        and len(value.args) == 1
        and not value.keywords
    ):
        func_line, func_column = positions.start(value.func)
        edits = (TextEdit(func_line, func_column, *positions.end(value.func), "float"),)
        return Fix(
            f"Return `float(...)` instead of `{value.func.id}(...)`", edits, is_preferred=True
        )
    edits = (
        TextEdit(line, column, line, column, "float("),
        TextEdit(end_line, end_column, end_line, end_column, ")"),
    )
    return Fix("Wrap the value in `float(...)`", edits, is_preferred=True)
