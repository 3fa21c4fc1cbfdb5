"""Quick fixes as data: what each rule's fix changes, and whether it is safe.

Builders here take the :mod:`ast` facts of a reward and return :class:`Fix` objects that describe
their change as a :class:`Transform` (a node's span and a few options) in the same coordinates as
diagnostics. Nothing here imports libcst: the edits are computed from the transform only when a
fix is asked for (:mod:`rewardkit.checks.fixer`). :func:`apply_edits` applies text edits (tests,
editors without LSP); :func:`suppression_fix` is the one fix made of text edits alone.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from rewardkit.checks.fix_safety import conversion_risk, dynamic_use, rename_risk
from rewardkit.checks.model import Applicability, Diagnostic, Fix, Span, TextEdit, Transform
from rewardkit.checks.positions import LINE_BREAK, NodePositions
from rewardkit.runtime.define.return_keys import dotted_name, string_value

if TYPE_CHECKING:
    from rewardkit.checks.facts import CallFact, RewardFacts

SUPPRESSION = re.compile(r"#\s*rewardkit:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)
"""``# rewardkit: ignore`` (every code) or ``# rewardkit: ignore[RK101, RK204]`` on a line."""

REWARD_PLACEHOLDER = "0.0"
"""What the add-``reward``-key fix writes when no numeric value is at hand (select it to edit)."""
PLACEHOLDER_MARKER = "__rewardkit_placeholder__"
"""The name a transformation writes where the placeholder goes, to find it in the result (a
module that already holds it gets no fix)."""

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

RENAME = "rename"
"""The transform renaming a parameter and its uses (RK101, RK102, RK104)."""
ADD_REWARD_KEY = "add_reward_key"
"""The transform adding a ``reward`` entry to a returned dict (RK201)."""
FLOAT = "float"
"""The transform making a returned ``int``/``bool`` a ``float`` (RK205)."""
AWAIT = "await"
"""The transform putting ``await`` before a call (RK301)."""
MAKE_ASYNC = "make_async"
"""The transform turning ``def`` into ``async def`` (RK302)."""
TRANSFORM_KINDS = (RENAME, ADD_REWARD_KEY, FLOAT, AWAIT, MAKE_ASYNC)
"""Every transform a rule can name as its ``TRANSFORM`` (the keys of
:data:`rewardkit.checks.transforms.TRANSFORMS`; a test keeps the two equal)."""

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


def rename_fix(
    facts: RewardFacts, parameter: str, suggestion: str, *, meant: str | None = None
) -> Fix:
    """Rename a parameter and every use of it in the reward's body to ``suggestion`` (libcst's
    scope analysis finds the uses; a nested scope that binds the same name is left alone).

    Unsafe when the names mark different kinds of input (the model's output, the gold:
    :func:`fix_safety.rename_risk`) or the function uses the name by its text (``locals()``,
    ``eval``, ``f"{answr=}"``: :func:`fix_safety.dynamic_use`); never applied when ``suggestion`` is already a name in the
    function (the rename would merge two variables). ``meant``: the name ``parameter``
    misspells (``solution_sr``: verl's ``solution_str``), whose role counts."""
    span = next(declared.span for declared, _ in facts.parameters if declared.name == parameter)
    used = {declared.name for declared, _ in facts.parameters if declared.name != parameter}
    used.update(facts.name_uses, facts.bindings)
    used.discard(parameter)
    if suggestion in used:
        applicability: Applicability = "display"
        risk: str | None = (
            f"`{suggestion}` is already a name in this function: rename that first, or the two "
            "would become one variable"
        )
    else:
        risk = rename_risk(meant or parameter, suggestion)
        dynamic = dynamic_use(facts.function, facts.code(facts.function), parameter)
        if dynamic is not None:
            risk = dynamic
        applicability = "safe" if risk is None else "unsafe"
    return Fix(
        f"Rename `{parameter}` to `{suggestion}`",
        is_preferred=risk is None,
        transform=Transform(
            RENAME,
            span,
            (("name", parameter), ("to", suggestion), ("function", facts.function.name)),
        ),
        applicability=applicability,
        unsafe_reason=risk,
    )


def inserts_placeholder(fix: Fix) -> bool:
    """Whether the fix inserts a placeholder to select (an added ``reward`` key without a value
    to copy: an editor resolves such a fix when it lists it, to select the placeholder)."""
    return (
        fix.transform is not None
        and fix.transform.kind == ADD_REWARD_KEY
        and fix.transform.option("value") is None
    )


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


def evaluates_cheaply(node: ast.expr) -> bool:
    """Whether evaluating ``node`` a second time certainly gives the same value and runs
    nothing: a name or a literal (``-1`` included). An attribute may be a property, a subscript
    a ``__getitem__``, a call a judge: each could run twice and differ."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return is_number_literal(node.operand)
    return isinstance(node, (ast.Name, ast.Constant))


def _reward_expression(
    facts: RewardFacts, pairs: Sequence[tuple[str | None, ast.expr]]
) -> tuple[str, str | None, int] | None:
    """The closest numeric value among a dict's entries, as (source text, its key, the index
    of its entry); ``None`` when none is found.

    A numeric value under a score-like key first, then the first numeric value; failing those,
    a plain name or call under a score-like key (``{"score": f1}``: its key says what it is).
    A repeated key counts by its last entry, which is the one the dict keeps.
    """
    last = {key: index for index, (key, _) in enumerate(pairs) if key is not None}
    entries = [(key, value, index) for index, (key, value) in enumerate(pairs)]
    entries = [entry for entry in entries if entry[0] is None or last[entry[0]] == entry[2]]
    by_key = {key: (key, value, index) for key, value, index in entries if key is not None}
    score_entries = [by_key[key] for key in SCORE_KEYS if key in by_key]
    candidates = [
        *(entry for entry in score_entries if is_numeric(facts, entry[1])),
        *(entry for entry in entries if is_numeric(facts, entry[1])),
        *(
            entry
            for entry in score_entries
            if isinstance(entry[1], (ast.Name, ast.Attribute, ast.Subscript, ast.Call))
        ),
    ]
    for key, value, index in candidates:
        text = facts.code(value)
        if "\n" not in text and "\r" not in text:
            return text, key, index
    return None


def _walrus_names(node: ast.AST) -> set[str]:
    """Names an expression binds with ``:=`` (in its comprehensions too: they bind outside)."""
    return {
        child.target.id
        for child in ast.walk(node)
        if isinstance(child, ast.NamedExpr) and isinstance(child.target, ast.Name)
    }


def _changed_before_return(facts: RewardFacts, target: ast.expr) -> str | None:
    """The local name of a dict display the reward returns later, when the function may change
    the dict before returning it (any use of the name but ``return name``): a ``reward`` key
    copied into the display would carry the display's value, not the returned one."""
    if any(returned.node.value is target for returned in facts.returns):
        return None
    names = {name for name, local in facts.local_dicts.items() if local.literal is target}
    expected = {id(r.node.value) for r in facts.returns if isinstance(r.node.value, ast.Name)}
    nodes = list(ast.walk(facts.function))
    for node in nodes:
        if isinstance(node, ast.Assign) and node.value is target:
            expected.update(id(name) for name in node.targets if isinstance(name, ast.Name))
    for node in nodes:
        if isinstance(node, ast.Name) and node.id in names and id(node) not in expected:
            return node.id
    return None


def _keys(target: ast.expr) -> list[str | None]:
    """The literal keys of a dict display or ``dict(...)`` call (``None``: not a literal)."""
    if isinstance(target, ast.Dict):
        return [string_value(key) for key in target.keys]
    if isinstance(target, ast.Call):
        return [keyword.arg for keyword in target.keywords]
    return []


def _copy_risk(
    facts: RewardFacts, target: ast.expr, key: str | None, value: ast.expr, expression: str
) -> str | None:
    """Why copying ``value`` into a new ``reward`` entry may not give what the dict returns as
    its score (``None``: it does)."""
    if key not in SCORE_KEYS:
        named = f"the value of `{key}`" if key else "a positional value"
        return f"`{expression}` ({named}) is a guess: no key says which entry is the score"
    scores = sorted({name for name in _keys(target) if name in SCORE_KEYS})
    if len(scores) > 1:
        listed = ", ".join(f"`{name}`" for name in scores)
        return f"`{expression}` is a guess: {listed} could each be the score"
    if not evaluates_cheaply(value):
        return f"`{expression}` would run twice, and may not give the same value twice"
    if isinstance(value, ast.Name) and value.id in _walrus_names(target):
        return f"`{expression}` is bound by `:=` in this dict: the copy may read another value"
    changed = _changed_before_return(facts, target)
    if changed is not None:
        return (
            f"`{changed}` may change between this dict and its `return`: a `reward` written "
            "here would keep the first score"
        )
    return None


def add_reward_key_fix(facts: RewardFacts, target: ast.expr) -> Fix | None:
    """Add a ``reward`` entry to a dict display or ``dict(...)`` call, in the dict's own style:
    right after the entry whose value it copies, else first with a placeholder the fix asks the
    editor to select.

    Safe only when the copy is certainly the score the dict returns: a key that says it is the
    score (``score``, ``f1``...) and no other entry's key does, a value that is a name or a literal (evaluating anything else
    again may run a judge or a property twice), not bound by ``:=`` in the dict, in a dict not
    changed between its display and its ``return`` (:func:`_copy_risk`)."""
    if isinstance(target, ast.Dict):
        pairs = [(string_value(key), value) for key, value in zip(target.keys, target.values)]
    elif isinstance(target, ast.Call):
        pairs = [(None, argument) for argument in target.args]
        pairs += [(keyword.arg, keyword.value) for keyword in target.keywords]
    else:
        return None
    span = facts.positions.span(target)
    found = _reward_expression(facts, pairs)
    if found is None:
        return Fix(
            f"Add a `reward` key (placeholder {REWARD_PLACEHOLDER})",
            transform=Transform(ADD_REWARD_KEY, span, (("value", None),)),
            applicability="unsafe",
            unsafe_reason=f"`{REWARD_PLACEHOLDER}` is a placeholder: until it is replaced every "
            f"sample scores {REWARD_PLACEHOLDER}",
        )
    expression, key, index = found
    risk = _copy_risk(facts, target, key, pairs[index][1], expression)
    return Fix(
        f"Add a `reward` key with `{expression}`",
        transform=Transform(ADD_REWARD_KEY, span, (("value", expression), ("after", str(index)))),
        applicability="safe" if risk is None else "unsafe",
        unsafe_reason=risk,
    )


def await_fix(facts: RewardFacts, call: CallFact) -> Fix:
    """Insert the missing ``await`` before a call (parenthesised when the result is used further)."""
    parent = call.parent
    needs_parentheses = (
        isinstance(parent, (ast.Attribute, ast.Subscript)) and call.field == "value"
    ) or (isinstance(parent, ast.Call) and call.field == "func")
    transform = Transform(
        AWAIT, facts.positions.span(call.node), (("parenthesize", needs_parentheses),)
    )
    return Fix("Insert `await`", is_preferred=True, transform=transform)


_DEF = re.compile(r"(?:async\s+)?def\s+")


def function_name_span(facts: RewardFacts) -> Span:
    """Where the reward function's name is in its ``def`` line."""
    line, column = facts.positions.start(facts.function)
    match = _DEF.match(facts.positions.line_text(line), column)
    start = match.end() if match is not None else column
    return Span(line, start, line, start + len(facts.function.name))


def make_async_fix(facts: RewardFacts) -> Fix:
    """Turn the reward's ``def`` into ``async def`` (its callers then await it).

    Unsafe: whoever calls the function directly now gets a coroutine, and the calls it makes
    still need their ``await`` (RK301, a fix of its own)."""
    return Fix(
        "Make the reward `async`",
        transform=Transform(
            MAKE_ASYNC, function_name_span(facts), (("name", facts.function.name),)
        ),
        applicability="unsafe",
        unsafe_reason="direct callers of the function get a coroutine instead of a score",
    )


_DECIMAL = re.compile(r"[0-9][0-9_]*")


def float_fix(facts: RewardFacts, value: ast.expr) -> Fix:
    """Make a returned ``int`` or ``bool`` a ``float``: ``1`` -> ``1.0``, ``int(x)`` ->
    ``float(x)``, anything else wrapped in ``float(...)``.

    ``int(x)`` -> ``float(x)`` (or ``bool(x)``) keeps the value only when ``x`` is a ``bool``;
    otherwise the fix is unsafe (:func:`fix_safety.conversion_risk`)."""
    span = facts.positions.span(value)
    text = facts.code(value)
    if isinstance(value, ast.Constant) and type(value.value) is int and _DECIMAL.fullmatch(text):
        transform = Transform(FLOAT, span, (("mode", "literal"),))
        return Fix(f"Return `{text}.0`", is_preferred=True, transform=transform)
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in ("int", "bool")
        and len(value.args) == 1
        and not value.keywords
    ):
        risk = conversion_risk(value.func.id, value.args[0])
        return Fix(
            f"Return `float(...)` instead of `{value.func.id}(...)`",
            is_preferred=risk is None,
            transform=Transform(FLOAT, span, (("mode", "convert"),)),
            applicability="safe" if risk is None else "unsafe",
            unsafe_reason=risk,
        )
    transform = Transform(FLOAT, span, (("mode", "wrap"),))
    return Fix("Wrap the value in `float(...)`", is_preferred=True, transform=transform)
