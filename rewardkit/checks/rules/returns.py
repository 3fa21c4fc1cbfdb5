"""Return rules (RK201-RK204): every path returns a number or a dict with a numeric ``reward``."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Literal

from rewardkit.checks.facts import ReturnFact, RewardFacts
from rewardkit.checks.fixes import ADD_REWARD_KEY, FLOAT, add_reward_key_fix, float_fix
from rewardkit.checks.model import Diagnostic, Severity, Span
from rewardkit.checks.rules.base import Invalid, Rule, reward_data
from rewardkit.checks.scopes import TRY_STATEMENTS, block_statements
from rewardkit.runtime.define.return_keys import dotted_name, string_value

if TYPE_CHECKING:
    from rewardkit.checks.config import CheckConfig


_CONTAINERS: dict[type[ast.AST], str] = {
    ast.List: "a list",
    ast.ListComp: "a list",
    ast.Tuple: "a tuple",
    ast.Set: "a set",
    ast.SetComp: "a set",
    ast.GeneratorExp: "a generator",
    ast.JoinedStr: "a string (f-string)",
}


def _returned_kind(value: ast.expr) -> str | None:
    """What a returned expression certainly is when no reward can be: a container or a string."""
    if isinstance(value, ast.Constant):
        if isinstance(value.value, str):
            return "a string"
        if isinstance(value.value, bytes):
            return "bytes"
        return None
    return _CONTAINERS.get(type(value))


def _dict_returns(
    facts: RewardFacts,
) -> Iterator[tuple[ReturnFact, frozenset[str] | None, ast.expr | None]]:
    for returned in facts.returns:
        value = returned.node.value
        keys, target = facts.dict_keys(value)
        if target is not None:
            yield returned, keys, target


class MissingRewardKey(Rule):
    """A dict return must carry the score under ``reward`` (other keys become extras/metrics);
    without it the runtime raises ``RewardShapeError``. Local dicts built by a literal and
    subscript assignments are followed."""

    code = "RK201"
    severity = Severity.ERROR
    TRANSFORM = ADD_REWARD_KEY
    summary = "a dict return without a `reward` key"
    VALID = (
        "from rewardkit import reward\n\n@reward\ndef qa(final_response, answer):\n"
        "    f1 = 0.5\n    return {'reward': f1, 'f1': f1}\n",
        "from rewardkit import reward\n\n@reward\ndef qa(final_response, answer):\n"
        "    result = {'f1': 0.5}\n    result['reward'] = result['f1']\n    return result\n",
    )
    INVALID = (
        Invalid(
            "from rewardkit import reward\n\n@reward\ndef qa(final_response, answer):\n"
            "    f1 = 0.5\n    return {'score': f1, 'f1': f1}\n",
            6,
            "from rewardkit import reward\n\n@reward\ndef qa(final_response, answer):\n"
            "    f1 = 0.5\n    return {'score': f1, 'reward': f1, 'f1': f1}\n",
        ),
        Invalid(
            "from rewardkit import reward\n\n@reward\ndef qa(final_response, answer):\n"
            "    result = {}\n    result['f1'] = 0.5\n    return result\n",
            7,
            "from rewardkit import reward\n\n@reward\ndef qa(final_response, answer):\n"
            "    result = {\"reward\": 0.0}\n    result['f1'] = 0.5\n    return result\n",
        ),
    )

    def check_reward(self, facts: RewardFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        for returned, keys, target in _dict_returns(facts):
            if keys is None or "reward" in keys:
                continue
            fix = add_reward_key_fix(facts, target) if target is not None else None
            listed = ", ".join(f"`{key}`" for key in sorted(keys)) or "none"
            yield self.diagnostic(
                returned.span,
                f"this dict has no `reward` key (keys: {listed}): the runtime cannot find the score",
                fixes=[fix] if fix else [],
                data=reward_data(facts, keys=sorted(keys)),
            )


class NonNumericReturn(Rule):
    """A reward returns a number, or a dict whose ``reward`` is a number. Returning a string,
    a container or ``None`` (or a string ``reward``) fails at run time, hours into training."""

    code = "RK202"
    severity = Severity.ERROR
    summary = "a return of a string, f-string, list, tuple, set or `None` (or a string `reward`)"
    VALID = (
        "from rewardkit import reward\n\n@reward\ndef one(final_response):\n    return 1.0\n",
        "from rewardkit import reward\n\n@reward(none_as_zero=True)\ndef maybe(final_response):\n"
        "    return None\n",
    )
    INVALID = (
        Invalid(
            "from rewardkit import reward\n\n@reward\ndef one(final_response):\n"
            "    return f'{len(final_response)}'\n",
            5,
        ),
        Invalid(
            "from rewardkit import reward\n\n@reward\ndef one(final_response):\n"
            "    return {'reward': '1.0'}\n",
            5,
        ),
        Invalid(
            "from rewardkit import reward\n\n@reward\ndef one(final_response):\n"
            "    return [1.0, 0.0]\n",
            5,
        ),
    )

    def check_reward(self, facts: RewardFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        if facts.is_generator:
            return
        for returned in facts.returns:
            value = returned.node.value
            if value is None:
                continue
            if isinstance(value, ast.Constant) and value.value is None:
                if not facts.none_as_zero:
                    yield self.diagnostic(
                        returned.span,
                        "returns `None`: a reward returns a number or a dict with a numeric "
                        "`reward`; for a sample the reward does not apply to (TRL's `None`), "
                        "return `rewardkit.NOT_APPLICABLE` (or use `@reward(none_as_zero=True)` "
                        "to score it 0.0)",
                        data=reward_data(facts),
                    )
                continue
            kind = _returned_kind(value)
            if kind is not None:
                yield self.diagnostic(
                    returned.span,
                    f"returns {kind}: a reward returns a number or a dict with a numeric `reward`",
                    data=reward_data(facts, returned=kind),
                )
                continue
            if isinstance(value, ast.Dict):
                for key, item in zip(value.keys, value.values):
                    if string_value(key) == "reward" and _returned_kind(item) in (
                        "a string",
                        "a string (f-string)",
                    ):
                        yield self.diagnostic(
                            facts.positions.span(item),
                            "the `reward` value is a string: it must be a number",
                            data=reward_data(facts),
                        )


_BOOL_CALLS = frozenset(
    {"bool", "isinstance", "issubclass", "callable", "hasattr", "any", "all", "math.isclose"}
    | {f"math.{name}" for name in ("isfinite", "isinf", "isnan")}
)
_INT_CALLS = frozenset(
    {"int", "len", "ord", "hash", "id"}
    | {
        f"math.{name}"
        for name in ("floor", "ceil", "trunc", "comb", "perm", "gcd", "lcm", "isqrt", "factorial")
    }
)
_INT_OPERATORS = (
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.FloorDiv,
    ast.Mod,
    ast.LShift,
    ast.RShift,
    ast.BitAnd,
    ast.BitOr,
    ast.BitXor,
)
"""Operators whose result is an ``int`` when both operands are ``int`` or ``bool`` (not ``/``,
and not ``**``: ``2 ** -1`` is a float)."""

IntOrBool = Literal["int", "bool"]


def int_or_bool(
    facts: RewardFacts, node: ast.AST, seen: frozenset[str] = frozenset()
) -> IntOrBool | None:
    """``"int"`` or ``"bool"`` when ``node`` can evaluate to one (a literal, a comparison,
    ``not``, ``int()``/``len()``/``bool()``, integer arithmetic, a branch of a conditional
    expression, a local name every assignment of which is one); ``None`` when it cannot, or
    when the analysis cannot tell."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool):
            return "bool"
        return "int" if isinstance(node.value, int) else None
    if isinstance(node, ast.Compare) or (
        isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)
    ):
        return "bool"
    if isinstance(node, ast.UnaryOp):
        return "int" if int_or_bool(facts, node.operand, seen) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, _INT_OPERATORS):
        left = int_or_bool(facts, node.left, seen)
        right = int_or_bool(facts, node.right, seen)
        if left is None or right is None:
            return None
        bitwise = isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor))
        return "bool" if bitwise and left == right == "bool" else "int"
    if isinstance(node, ast.IfExp):  # either branch may be the one returned
        return int_or_bool(facts, node.body, seen) or int_or_bool(facts, node.orelse, seen)
    if isinstance(node, ast.BoolOp):  # returns one of its operands: only when all are
        kinds = {int_or_bool(facts, value, seen) for value in node.values}
        return None if None in kinds else ("bool" if kinds == {"bool"} else "int")
    if isinstance(node, ast.Call):
        called = dotted_name(node.func)
        if called is None or called in _local_names(facts):  # a local `int` is not the builtin
            return None
        qualified = facts.context.qualify(called)
        if qualified in _BOOL_CALLS:
            return "bool"
        if qualified in _INT_CALLS or (
            qualified == "round" and len(node.args) == 1 and not node.keywords
        ):
            return "int"
        return None
    if isinstance(node, ast.Name) and node.id not in seen:
        values = facts.bindings.get(node.id)
        if not values or any(value is None for value in values):
            return None
        kinds = {int_or_bool(facts, value, seen | {node.id}) for value in values}  # type: ignore[arg-type]
        return None if None in kinds else ("bool" if kinds == {"bool"} else "int")
    return None


def _local_names(facts: RewardFacts) -> set[str]:
    """Parameters and names the reward binds (a local ``int`` is not the builtin)."""
    return {parameter.name for parameter, _ in facts.parameters} | set(facts.bindings)


_STATEMENT_KEYWORDS: dict[type[ast.AST], str] = {
    ast.If: "if",
    ast.For: "for",
    ast.AsyncFor: "async",
    ast.While: "while",
    **dict.fromkeys(TRY_STATEMENTS, "try"),
    ast.With: "with",
    ast.AsyncWith: "async",
    ast.Match: "match",
}


def always_leaves(statements: Sequence[ast.stmt]) -> bool:
    """Whether running ``statements`` always ends in ``return`` or ``raise`` (never falls through)."""
    return any(_statement_leaves(statement) for statement in statements)


_LOOPS_AND_SCOPES = (
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
)


def _has_break(statements: Sequence[ast.stmt]) -> bool:
    """Whether a ``break`` in ``statements`` leaves the loop they are the body of."""
    pending = list(statements)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Break):
            return True
        if isinstance(node, _LOOPS_AND_SCOPES):
            continue  # a break there belongs to that loop
        pending.extend(block_statements(node))
    return False


def _is_forever(test: ast.expr) -> bool:
    return isinstance(test, ast.Constant) and bool(test.value) and test.value is not ...


def _statement_leaves(statement: ast.stmt) -> bool:
    if isinstance(statement, (ast.Return, ast.Raise)):
        return True
    if isinstance(statement, ast.If):
        return always_leaves(statement.body) and always_leaves(statement.orelse)
    if isinstance(statement, TRY_STATEMENTS):
        if always_leaves(statement.finalbody):
            return True
        normal = always_leaves(statement.body) or always_leaves(statement.orelse)
        return normal and all(always_leaves(handler.body) for handler in statement.handlers)
    if isinstance(statement, (ast.With, ast.AsyncWith)):
        return always_leaves(statement.body)
    if isinstance(statement, ast.While):
        return _is_forever(statement.test) and not _has_break(statement.body)
    if isinstance(statement, (ast.For, ast.AsyncFor)):
        return always_leaves(statement.orelse) and not _has_break(statement.body)
    if isinstance(statement, ast.Match):
        irrefutable = any(
            isinstance(case.pattern, ast.MatchAs)
            and case.pattern.pattern is None
            and case.guard is None
            for case in statement.cases
        )
        return irrefutable and all(always_leaves(case.body) for case in statement.cases)
    return False


class ReturnsNothing(Rule):
    """A path through the reward that returns nothing (a bare ``return``, or the end of the
    body): the reward yields ``None`` and the runtime raises ``RewardShapeError`` on that sample
    only, maybe hours into training. Not reported with ``none_as_zero=True``."""

    code = "RK203"
    severity = Severity.ERROR
    summary = "a path that returns nothing (bare `return`, or falling off the end)"
    VALID = (
        "from rewardkit import reward\n\n@reward\ndef sign(final_response):\n"
        "    if final_response:\n        return 1.0\n    else:\n        return 0.0\n",
        "from rewardkit import reward\n\n@reward\ndef strict(final_response):\n"
        "    if not final_response:\n        raise ValueError('empty')\n    return 1.0\n",
    )
    INVALID = (
        Invalid(
            "from rewardkit import reward\n\n@reward\ndef sign(final_response):\n"
            "    if final_response:\n        return 1.0\n",
            5,
        ),
        Invalid(
            "from rewardkit import reward\n\n@reward\ndef sign(final_response):\n"
            "    if not final_response:\n        return\n    return 1.0\n",
            6,
        ),
    )

    def check_reward(self, facts: RewardFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        if facts.none_as_zero or facts.is_generator:
            return
        for returned in facts.returns:
            if returned.node.value is None:
                yield self.diagnostic(
                    returned.span,
                    "a bare `return` returns nothing: return a number or a dict with `reward`",
                    data=reward_data(facts),
                )
        statements = facts.function.body
        if not statements or always_leaves(statements):
            return
        last = statements[-1]
        positions = facts.positions
        line, column = positions.start(last)
        keyword = _STATEMENT_KEYWORDS.get(type(last))
        if keyword is not None:
            span = Span(line, column, line, column + len(keyword))
        else:
            end_line, end_column = positions.end(last)
            if end_line != line:  # the statement's first line
                end_line, end_column = line, len(positions.line_text(line))
            span = Span(line, column, end_line, end_column)
        yield self.diagnostic(
            span,
            f"`{facts.definition.function_name}` can reach the end of its body without returning "
            "a value (it returns None)",
            data=reward_data(facts),
        )


class InconsistentExtras(Rule):
    """Dict returns with different extra keys give metrics gaps, and some trainers drop or crash on
    ragged extras: return the same keys on every path (use 0.0 or None for missing values)."""

    code = "RK204"
    severity = Severity.WARNING
    summary = "dict returns with different extras key sets"
    VALID = (
        "from rewardkit import reward\n\n@reward\ndef qa(final_response, answer):\n"
        "    if not final_response:\n        return {'reward': 0.0, 'f1': 0.0}\n"
        "    return {'reward': 1.0, 'f1': 1.0}\n",
    )
    INVALID = (
        Invalid(
            "from rewardkit import reward\n\n@reward\ndef qa(final_response, answer):\n"
            "    if not final_response:\n        return {'reward': 0.0}\n"
            "    return {'reward': 1.0, 'f1': 1.0}\n",
            7,
        ),
    )

    def check_reward(self, facts: RewardFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        first: frozenset[str] | None = None  # the extras of the first dict return
        for returned, keys, _ in _dict_returns(facts):
            if keys is None or "reward" not in keys:
                continue
            extras = keys - {"reward"}
            if first is None:
                first = extras
                continue
            if extras == first:
                continue
            missing = ", ".join(f"`{key}`" for key in sorted(first - extras))
            added = ", ".join(f"`{key}`" for key in sorted(extras - first))
            details = "; ".join(
                part
                for part in (
                    f"missing {missing}" if missing else "",
                    f"adds {added}" if added else "",
                )
                if part
            )
            yield self.diagnostic(
                returned.span,
                f"this return's extras differ from the first dict return's ({details}): "
                "return the same keys on every path",
                data=reward_data(facts),
            )


class IntOrBoolReturn(Rule):
    """AgentFly's own reward wrapper accepts a ``float`` or a dict, nothing else: a reward that
    returns an ``int`` or a ``bool`` (``return int(a == b)``, ``return a == b``, ``return 1 if
    ok else 0``) raises ``ValueError: Invalid reward`` on that sample. Reported for rewards
    defined with AgentFly's ``@reward``/``BaseReward``, and for every reward under
    ``preset = "agentfly"`` (rewardkit's own runtime accepts both, as a float)."""

    code = "RK205"
    severity = Severity.ERROR
    TRANSFORM = FLOAT
    summary = (
        "an `int` or `bool` return where AgentFly's runtime runs the reward (it wants a `float`)"
    )
    VALID = (
        "from agentfly.rewards import reward\n\n@reward(name='exact')\n"
        "def exact(final_response, answer):\n    return float(final_response == answer)\n",
        "from rewardkit import reward\n\n@reward\ndef exact(final_response, answer):\n"
        "    return final_response == answer\n",
    )
    INVALID = (
        Invalid(
            "from agentfly.rewards import reward\n\n@reward(name='exact')\n"
            "def exact(final_response, answer):\n    return final_response == answer\n",
            5,
            "from agentfly.rewards import reward\n\n@reward(name='exact')\n"
            "def exact(final_response, answer):\n    return float(final_response == answer)\n",
        ),
        Invalid(
            "from rewardkit import reward\n\n@reward\ndef exact(final_response, answer):\n"
            "    return int(final_response == answer)\n",
            5,
            "from rewardkit import reward\n\n@reward\ndef exact(final_response, answer):\n"
            "    return float(final_response == answer)\n",
            preset="agentfly",
        ),
        Invalid(
            "from agentfly.rewards import reward\n\n@reward(name='has_box')\n"
            "def has_box(final_response):\n    return 1 if '\\\\boxed' in final_response else 0\n",
            5,
            "from agentfly.rewards import reward\n\n@reward(name='has_box')\n"
            "def has_box(final_response):\n"
            "    return float(1 if '\\\\boxed' in final_response else 0)\n",
        ),
    )

    def check_reward(self, facts: RewardFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        if facts.is_generator or (facts.runtime != "agentfly" and config.preset != "agentfly"):
            return
        for returned in facts.returns:
            value = returned.node.value
            kind = int_or_bool(facts, value) if value is not None else None
            if kind is None:
                continue
            article = "an" if kind == "int" else "a"
            yield self.diagnostic(
                returned.span,
                f"returns {article} `{kind}`: AgentFly's reward wrapper accepts only a `float` or "
                "a dict (`ValueError: Invalid reward` on this sample): return `float(...)`",
                fixes=[float_fix(facts, value)],  # type: ignore[arg-type]
                data=reward_data(facts, returned=kind),
            )
