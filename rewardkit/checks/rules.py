"""The rules: one small class per code, whose VALID/INVALID examples are its documentation and tests.

Rules read the facts :mod:`rewardkit.checks.discovery` collected in its single walk of each
reward; they never walk the tree themselves. Codes are part of the public contract.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import libcst as cst

from rewardkit.checks.config import CheckConfig
from rewardkit.checks.discovery import (
    BLOCKING_CALLS,
    CONTEXT_COROUTINE_METHODS,
    CallFact,
    ClassFacts,
    RewardFacts,
    string_value,
)
from rewardkit.checks.fixes import add_reward_key_fix, await_fix, make_async_fix, rename_fix
from rewardkit.checks.model import (
    Diagnostic,
    Fix,
    RewardDefinition,
    RewardParameter,
    Severity,
    Span,
)
from rewardkit.fields import PREDEFINED_FIELDS


@dataclass(frozen=True)
class Invalid:
    """An example a rule must flag: its source, the 1-based line of the diagnostic and, optionally,
    the source after applying the diagnostic's first fix."""

    code: str
    line: int
    expected_fix: str | None = None


class Rule:
    """Base of all rules: metadata plus hooks that turn collected facts into diagnostics."""

    code: ClassVar[str]
    severity: ClassVar[Severity]
    summary: ClassVar[str]
    """One line for the rule reference."""
    VALID: ClassVar[tuple[str, ...]] = ()
    INVALID: ClassVar[tuple[Invalid, ...]] = ()
    EXAMPLE_TASK_FIELDS: ClassVar[tuple[str, ...]] = ()
    """Task fields declared when the examples are checked (RK101 and RK104 need some)."""

    def check_reward(self, facts: RewardFacts, config: CheckConfig) -> Iterable[Diagnostic]:
        """Diagnostics for one reward function (or ``call`` method)."""
        return ()

    def check_class(self, facts: ClassFacts, config: CheckConfig) -> Iterable[Diagnostic]:
        """Diagnostics for one ``BaseReward`` subclass."""
        return ()

    @classmethod
    def diagnostic(
        cls,
        span: Span,
        message: str,
        *,
        fixes: Sequence[Fix] = (),
        data: dict[str, Any] | None = None,
    ) -> Diagnostic:
        """A diagnostic of this rule at ``span``."""
        return Diagnostic(
            code=cls.code,
            severity=cls.severity,
            message=message,
            line=span.line,
            column=span.column,
            end_line=span.end_line,
            end_column=span.end_column,
            fixes=tuple(fixes),
            data=data,
        )


# ----------------------------------------------------------------------------- spelling

NOT_MISSPELLINGS = frozenset({"content", "contents", "contexts", "trajectories", "identity"})
"""Real words within one edit of a predefined field: never reported as its misspelling."""


def edit_distance(first: str, second: str) -> int:
    """Optimal string alignment distance (insertions, deletions, substitutions, adjacent swaps)."""
    previous_previous: list[int] = []
    previous = list(range(len(second) + 1))
    for i, a in enumerate(first, start=1):
        current = [i] + [0] * len(second)
        for j, b in enumerate(second, start=1):
            cost = 0 if a == b else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a == second[j - 2] and first[i - 2] == b:
                current[j] = min(current[j], previous_previous[j - 2] + 1)
        previous_previous, previous = previous, current
    return previous[-1]


def misspelled_field(name: str, config: CheckConfig) -> str | None:
    """The predefined (or injected) field ``name`` is a small misspelling of, if any."""
    known = config.known_fields()
    if name in known or name in NOT_MISSPELLINGS or len(name) < 4:
        return None
    best: tuple[int, str] | None = None
    for candidate in (*PREDEFINED_FIELDS, *config.injected_fields):
        if len(candidate) < 4:
            continue
        limit = 1 if len(candidate) <= 7 else 2
        if abs(len(candidate) - len(name)) > limit:
            continue
        distance = edit_distance(name, candidate)
        if distance <= limit and (best is None or distance < best[0]):
            best = (distance, candidate)
    return best[1] if best else None


FIELD_ALIASES: dict[str, tuple[str, ...]] = {
    "final_response": (
        "response",
        "completion",
        "prediction",
        "pred",
        "output",
        "model_output",
        "generation",
        "final_answer",
        "solution_str",
    ),
    "trajectory": ("messages", "history", "conversation", "chat", "turns"),
    "answer": ("ground_truth", "gold", "gold_answer", "reference", "target", "expected"),
}
"""What other frameworks call a field (verl's ``solution_str``/``ground_truth``, TRL's
``completion``...): the did-you-mean of a parameter spelled nothing like it."""


def closest_field(name: str, config: CheckConfig) -> str | None:
    """The known field most similar to ``name`` (for did-you-mean), if any is close enough."""
    known = config.known_fields()
    matches = difflib.get_close_matches(name, list(known), n=1, cutoff=0.75)
    if matches:
        return matches[0]
    return next(
        (field for field, aliases in FIELD_ALIASES.items() if name in aliases and field in known),
        None,
    )


def _fillable(reward: RewardFacts) -> Iterator[RewardParameter]:
    """Parameters a field could fill (no ``*args``/``**kwargs``, none the decorator itself fills)."""
    own = dict(reward.definition.own_fields)
    for parameter, _ in reward.parameters:
        if parameter.kind not in ("var_positional", "var_keyword") and parameter.name not in own:
            yield parameter


def _is_context_annotation(annotation: str | None) -> bool:
    return (annotation or "").split(".")[-1].strip("'\"") == "Context"


def _predefined_misspelling(parameter: RewardParameter, config: CheckConfig) -> str | None:
    """The predefined field a parameter was meant to be (RK102): a near spelling, or ``context``
    for any parameter annotated ``Context`` (fields are passed by name, never by type)."""
    if _is_context_annotation(parameter.annotation) and parameter.name not in config.known_fields():
        return "context"
    return misspelled_field(parameter.name, config)


def _unfilled(
    rule: type[Rule], facts: RewardFacts, config: CheckConfig, *, with_default: bool
) -> Iterator[Diagnostic]:
    """RK101 (``with_default=False``) and RK104: parameters no field fills, with a did-you-mean."""
    if not config.has_task_fields:
        return
    known = config.known_fields()
    for parameter in _fillable(facts):
        name, span = parameter.name, parameter.span
        if (
            parameter.has_default != with_default
            or name in known
            or _predefined_misspelling(parameter, config)
        ):
            continue
        suggestion = closest_field(name, config)
        if with_default:
            message = f"no field fills `{name}`: it is always its default"
        else:
            message = f"`{name}` is not a field: no predefined, injected or task field fills it"
        fixes: list[Fix] = []
        if suggestion:
            message += f"; did you mean `{suggestion}`?"
            fixes.append(rename_fix(facts, name, suggestion))
        else:
            message += " (if the dataset has it, add it to `task_fields` in [tool.rewardkit])"
        yield rule.diagnostic(
            span, message, fixes=fixes, data=_data(facts, parameter=name, suggestion=suggestion)
        )


def _data(reward: RewardFacts, **values: Any) -> dict[str, Any]:
    return {"reward": reward.definition.name or reward.definition.function_name, **values}


# ----------------------------------------------------------------------------- parameters


class UnknownField(Rule):
    """A parameter without a default that no field fills: the runtime raises ``MissingFieldError``
    (or, where fields are filtered, the reward never runs). Only reported when task fields are
    declared (``task_fields`` or ``task_schema``): otherwise any name could be a task field."""

    code = "RK101"
    severity = Severity.ERROR
    summary = "unknown field: a parameter no predefined, injected or task field fills"
    EXAMPLE_TASK_FIELDS = ("answer",)
    VALID = (
        "from rewardkit import reward\n\n@reward\ndef exact(final_response, answer):\n"
        "    return float(final_response == answer)\n",
        "from rewardkit import reward\n\n@reward\ndef exact(final_response, **extra):\n"
        "    return float(final_response == extra.get('answer'))\n",
    )
    INVALID = (
        Invalid(
            "from rewardkit import reward\n\n@reward\ndef exact(final_response, answr):\n"
            "    return float(final_response == answr)\n",
            4,
            "from rewardkit import reward\n\n@reward\ndef exact(final_response, answer):\n"
            "    return float(final_response == answer)\n",
        ),
    )

    def check_reward(self, facts: RewardFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        return _unfilled(type(self), facts, config, with_default=False)


class MisspelledPredefinedField(Rule):
    """A parameter one or two edits away from a predefined field (``final_respone``,
    ``trajectroy``), or annotated ``Context`` under another name than ``context``: it receives
    nothing (fields are passed by name). Reported whatever the configuration."""

    code = "RK102"
    severity = Severity.ERROR
    summary = "misspelled predefined field (`final_respone`, `trajectroy`, `ctx: Context`)"
    VALID = (
        "from rewardkit import reward\n\n@reward\ndef length(final_response, trajectory):\n"
        "    return len(trajectory) / 10\n",
    )
    INVALID = (
        Invalid(
            "from rewardkit import reward\n\n@reward\ndef short(final_respone):\n"
            "    return 1.0 if len(final_respone) < 100 else 0.0\n",
            4,
            "from rewardkit import reward\n\n@reward\ndef short(final_response):\n"
            "    return 1.0 if len(final_response) < 100 else 0.0\n",
        ),
        Invalid(
            "import rewardkit as rk\n\n@rk.reward(name='turns')\nasync def turns(trajectroy=None):\n"
            "    return float(len(trajectroy or []))\n",
            4,
        ),
        Invalid(
            "from rewardkit import Context, reward\n\n@reward\n"
            "async def judged(final_response, ctx: Context):\n"
            "    judge = await ctx.acquire_resource('judge')\n"
            "    return await judge.score(final_response)\n",
            4,
            "from rewardkit import Context, reward\n\n@reward\n"
            "async def judged(final_response, context: Context):\n"
            "    judge = await context.acquire_resource('judge')\n"
            "    return await judge.score(final_response)\n",
        ),
    )

    def check_reward(self, facts: RewardFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        for parameter in _fillable(facts):
            name, span = parameter.name, parameter.span
            suggestion = _predefined_misspelling(parameter, config)
            if suggestion is None:
                continue
            if suggestion == "context" and _is_context_annotation(parameter.annotation):
                message = (
                    f"`{name}` is annotated `Context`, but fields are passed by name: only a "
                    "parameter called `context` receives it"
                )
            else:
                message = (
                    f"`{name}` looks like a misspelling of the predefined field `{suggestion}`; "
                    "as spelled it receives nothing"
                )
            yield self.diagnostic(
                span,
                message,
                fixes=[rename_fix(facts, name, suggestion)],
                data=_data(facts, parameter=name, suggestion=suggestion),
            )


class PositionalOnlyParameter(Rule):
    """Rewards are called with keywords only: positional-only parameters and ``*args`` never
    receive a field."""

    code = "RK103"
    severity = Severity.ERROR
    summary = "positional-only parameters or `*args`"
    VALID = (
        "from rewardkit import reward\n\n@reward\ndef exact(final_response, *, answer=''):\n"
        "    return float(final_response == answer)\n",
    )
    INVALID = (
        Invalid(
            "from rewardkit import reward\n\n@reward\ndef exact(final_response, /, answer):\n"
            "    return float(final_response == answer)\n",
            4,
        ),
        Invalid(
            "from rewardkit import reward\n\n@reward\ndef exact(final_response,\n"
            "          *answers):\n    return float(final_response in answers)\n",
            5,
        ),
    )

    def check_reward(self, facts: RewardFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        for parameter, _ in facts.parameters:
            if parameter.kind == "positional_only":
                yield self.diagnostic(
                    parameter.span,
                    f"`{parameter.name}` is positional-only, but rewards are called with keywords "
                    "only: it never receives a field",
                    data=_data(facts, parameter=parameter.name),
                )
            elif parameter.kind == "var_positional":
                yield self.diagnostic(
                    parameter.span,
                    f"`*{parameter.name}` never receives anything: rewards are called with keywords "
                    "only (use `**kwargs` to accept extra fields)",
                    data=_data(facts, parameter=parameter.name),
                )


class DefaultNeverFilled(Rule):
    """A parameter with a default that no field can fill always gets its default: usually a
    misnamed task field. Only reported when task fields are declared."""

    code = "RK104"
    severity = Severity.WARNING
    summary = "a parameter with a default that no field can fill (it is always the default)"
    EXAMPLE_TASK_FIELDS = ("answer", "max_length")
    VALID = (
        "from rewardkit import reward\n\n@reward\ndef short(final_response, max_length=100):\n"
        "    return float(len(final_response) <= max_length)\n",
    )
    INVALID = (
        Invalid(
            "from rewardkit import reward\n\n@reward\ndef short(final_response, max_len=100):\n"
            "    return float(len(final_response) <= max_len)\n",
            4,
        ),
    )

    def check_reward(self, facts: RewardFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        return _unfilled(type(self), facts, config, with_default=True)


# ----------------------------------------------------------------------------- returns

_CONTAINERS = {
    cst.List: "a list",
    cst.ListComp: "a list",
    cst.Tuple: "a tuple",
    cst.Set: "a set",
    cst.SetComp: "a set",
    cst.GeneratorExp: "a generator",
    cst.SimpleString: "a string",
    cst.ConcatenatedString: "a string",
    cst.FormattedString: "a string (f-string)",
}


def _dict_returns(
    facts: RewardFacts,
) -> Iterator[tuple[Any, frozenset[str] | None, cst.CSTNode | None]]:
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
            "    f1 = 0.5\n    return {'reward': f1, 'score': f1, 'f1': f1}\n",
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
                data=_data(facts, keys=sorted(keys)),
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
            if isinstance(value, cst.Name) and value.value == "None":
                if not facts.none_as_zero:
                    yield self.diagnostic(
                        returned.span,
                        "returns `None`: a reward returns a number or a dict with a numeric `reward` "
                        "(or use `@reward(none_as_zero=True)`)",
                        data=_data(facts),
                    )
                continue
            kind = _CONTAINERS.get(type(value))
            if kind is not None:
                yield self.diagnostic(
                    returned.span,
                    f"returns {kind}: a reward returns a number or a dict with a numeric `reward`",
                    data=_data(facts, returned=kind),
                )
                continue
            if isinstance(value, cst.Dict):
                for element in value.elements:
                    if (
                        isinstance(element, cst.DictElement)
                        and string_value(element.key) == "reward"
                        and isinstance(
                            element.value,
                            (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString),
                        )
                    ):
                        yield self.diagnostic(
                            facts.positions.span(element.value),
                            "the `reward` value is a string: it must be a number",
                            data=_data(facts),
                        )


_STATEMENT_KEYWORDS = {
    cst.If: "if",
    cst.For: "for",
    cst.While: "while",
    cst.Try: "try",
    cst.TryStar: "try",
    cst.With: "with",
    cst.Match: "match",
}


def _block_statements(block: cst.CSTNode) -> Sequence[cst.CSTNode]:
    body = getattr(block, "body", ())
    return body if isinstance(body, (list, tuple)) else ()


def _always_leaves(statements: Sequence[cst.CSTNode]) -> bool:
    """Whether running ``statements`` always ends in ``return`` or ``raise`` (never falls through)."""
    return any(_statement_leaves(statement) for statement in statements)


def _has_break(statements: Sequence[cst.CSTNode]) -> bool:
    pending = list(statements)
    while pending:
        node = pending.pop()
        if isinstance(node, cst.Break):
            return True
        if isinstance(node, (cst.For, cst.While, cst.FunctionDef, cst.ClassDef)):
            continue  # a break there belongs to that loop
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            pending.extend(node.body)
        elif isinstance(
            node,
            (
                cst.BaseCompoundStatement,
                cst.Else,
                cst.Finally,
                cst.ExceptHandler,
                cst.ExceptStarHandler,
                cst.MatchCase,
            ),
        ):
            pending.extend(_block_statements(node.body))  # type: ignore[attr-defined]
            for extra in ("orelse", "finalbody"):
                block = getattr(node, extra, None)
                if block is not None:
                    pending.append(block)
            pending.extend(getattr(node, "handlers", ()))
            pending.extend(getattr(node, "cases", ()))
    return False


def _statement_leaves(statement: cst.CSTNode) -> bool:
    if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return any(isinstance(small, (cst.Return, cst.Raise)) for small in statement.body)
    if isinstance(statement, (cst.Return, cst.Raise)):
        return True
    if isinstance(statement, cst.If):
        if not _always_leaves(_block_statements(statement.body)) or statement.orelse is None:
            return False
        if isinstance(statement.orelse, cst.If):
            return _statement_leaves(statement.orelse)
        return _always_leaves(_block_statements(statement.orelse.body))
    if isinstance(statement, (cst.Try, cst.TryStar)):
        if statement.finalbody is not None and _always_leaves(
            _block_statements(statement.finalbody.body)
        ):
            return True
        normal = _always_leaves(_block_statements(statement.body)) or (
            statement.orelse is not None
            and _always_leaves(_block_statements(statement.orelse.body))
        )
        return normal and all(
            _always_leaves(_block_statements(handler.body)) for handler in statement.handlers
        )
    if isinstance(statement, cst.With):
        return _always_leaves(_block_statements(statement.body))
    if isinstance(statement, cst.While):
        forever = (isinstance(statement.test, cst.Name) and statement.test.value == "True") or (
            isinstance(statement.test, cst.Integer) and statement.test.value not in ("0",)
        )
        return forever and not _has_break(_block_statements(statement.body))
    if isinstance(statement, cst.For):
        return (
            statement.orelse is not None
            and _always_leaves(_block_statements(statement.orelse.body))
            and not _has_break(_block_statements(statement.body))
        )
    if isinstance(statement, cst.Match):
        has_wildcard = any(
            isinstance(case.pattern, cst.MatchAs)
            and case.pattern.pattern is None
            and case.guard is None
            for case in statement.cases
        )
        return has_wildcard and all(
            _always_leaves(_block_statements(case.body)) for case in statement.cases
        )
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
                    data=_data(facts),
                )
        statements = _block_statements(facts.function.body)
        if not statements or _always_leaves(statements):
            return
        last = statements[-1]
        positions = facts.positions
        line, column = positions.start(last)
        keyword = _STATEMENT_KEYWORDS.get(type(last))
        if keyword is not None:
            span = Span(line, column, line, column + len(keyword))
        else:
            end_line, end_column = positions.end(last)
            span = (
                Span(line, column, end_line, end_column)
                if end_line == line
                else Span(line, column, line + 1, 0)
            )
        yield self.diagnostic(
            span,
            f"`{facts.definition.function_name}` can reach the end of its body without returning "
            "a value (it returns None)",
            data=_data(facts),
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
                data=_data(facts),
            )


# ----------------------------------------------------------------------------- async


def _context_names(facts: RewardFacts) -> set[str]:
    names = set()
    for parameter, _ in facts.parameters:
        if parameter.name == "context" or _is_context_annotation(parameter.annotation):
            names.add(parameter.name)
    return names


def _context_calls(facts: RewardFacts) -> Iterator[CallFact]:
    names = _context_names(facts)
    if not names:
        return
    for call in facts.calls:
        if call.nested or call.dotted is None:
            continue
        owner, _, method = call.dotted.rpartition(".")
        if owner in names and method in CONTEXT_COROUTINE_METHODS:
            yield call


def _is_awaited(facts: RewardFacts, call: CallFact) -> bool:
    if id(call.node) in facts.awaited:
        return True
    if isinstance(call.parent, cst.Arg):
        return True  # handed to asyncio.gather/wait_for/create_task
    # Not `async with context.acquire_resource(...)`: a coroutine is no context manager.
    return call.assigned_to is not None and call.assigned_to in facts.awaited_names


class UnawaitedContextCall(Rule):
    """``context.acquire_resource(...)`` and the other ``Context`` coroutine methods return a
    coroutine: without ``await`` nothing is acquired and the reward works on a coroutine object."""

    code = "RK301"
    severity = Severity.ERROR
    summary = (
        "`context.acquire_resource(...)` (or another coroutine method of `context`) not awaited"
    )
    VALID = (
        "from rewardkit import reward\n\n@reward\nasync def shop(final_response, context):\n"
        "    env = await context.acquire_resource('webshop')\n    return await env.score(final_response)\n",
    )
    INVALID = (
        Invalid(
            "from rewardkit import reward\n\n@reward\nasync def shop(final_response, context):\n"
            "    env = context.acquire_resource('webshop')\n    return await env.score(final_response)\n",
            5,
            "from rewardkit import reward\n\n@reward\nasync def shop(final_response, context):\n"
            "    env = await context.acquire_resource('webshop')\n    return await env.score(final_response)\n",
        ),
    )

    def check_reward(self, facts: RewardFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        if not facts.definition.is_async:
            return
        for call in _context_calls(facts):
            if _is_awaited(facts, call):
                continue
            yield self.diagnostic(
                call.span,
                f"`{call.dotted}(...)` is a coroutine and is not awaited: add `await`",
                fixes=[await_fix(facts, call)],
                data=_data(facts, call=call.dotted),
            )


class SyncContextCall(Rule):
    """A sync reward cannot await ``context``'s coroutine methods: make the reward ``async``."""

    code = "RK302"
    severity = Severity.ERROR
    summary = "a sync reward that calls a coroutine method of `context`"
    VALID = (
        "from rewardkit import reward\n\n@reward\ndef plain(final_response, context):\n"
        "    return float(bool(context.rollout_id))\n",
    )
    INVALID = (
        Invalid(
            "from rewardkit import reward\n\n@reward\ndef shop(final_response, context):\n"
            "    env = context.acquire_resource('webshop')\n    return env.score(final_response)\n",
            5,
            "from rewardkit import reward\n\n@reward\nasync def shop(final_response, context):\n"
            "    env = context.acquire_resource('webshop')\n    return env.score(final_response)\n",
        ),
    )

    def check_reward(self, facts: RewardFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        if facts.definition.is_async:
            return
        for call in _context_calls(facts):
            yield self.diagnostic(
                call.span,
                f"`{call.dotted}(...)` is a coroutine, but `{facts.definition.function_name}` is "
                "not async: make the reward `async def` and `await` it",
                fixes=[make_async_fix(facts)],
                data=_data(facts, call=call.dotted),
            )


class BlockingCallInAsyncReward(Rule):
    """An async reward shares the event loop with every other rollout: ``time.sleep``,
    ``requests.*`` or ``subprocess.run`` stall all of them. Use ``asyncio.sleep``, an async
    client, or ``await asyncio.to_thread(...)``."""

    code = "RK303"
    severity = Severity.WARNING
    summary = "a blocking call (`time.sleep`, `requests.*`, `subprocess.run`) in an async reward"
    VALID = (
        "import asyncio\nfrom rewardkit import reward\n\n@reward\nasync def slow(final_response):\n"
        "    await asyncio.sleep(0.1)\n    return 1.0\n",
    )
    INVALID = (
        Invalid(
            "import time\nfrom rewardkit import reward\n\n@reward\nasync def slow(final_response):\n"
            "    time.sleep(0.1)\n    return 1.0\n",
            6,
        ),
        Invalid(
            "from subprocess import run\nfrom rewardkit import reward\n\n@reward\n"
            "async def tests_pass(final_response):\n"
            "    return float(run(['pytest']).returncode == 0)\n",
            6,
        ),
    )

    def check_reward(self, facts: RewardFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        if not facts.definition.is_async:
            return
        for call in facts.calls:
            if call.nested or call.qualified not in BLOCKING_CALLS:
                continue
            yield self.diagnostic(
                call.span,
                f"`{call.qualified}` blocks the event loop inside async "
                f"`{facts.definition.function_name}`: it stalls every rollout sharing the loop "
                "(use an async API or `await asyncio.to_thread(...)`)",
                data=_data(facts, call=call.qualified),
            )


# ----------------------------------------------------------------------------- module level


class DuplicateRewardName(Rule):
    """Two rewards registered under the same name: the second replaces (or clashes with) the
    first. Reported at both definitions, in one module or across the checked files. Names are
    compared ignoring case, as the registry does."""

    code = "RK401"
    severity = Severity.ERROR
    summary = "two rewards with the same name in the checked files"
    VALID = (
        "from rewardkit import reward\n\n@reward\ndef a(final_response):\n    return 1.0\n\n"
        "@reward(name='b')\ndef a_again(final_response):\n    return 0.0\n",
    )
    INVALID = (
        Invalid(
            "from rewardkit import reward\n\n@reward\ndef a(final_response):\n    return 1.0\n\n"
            "@reward(name='a')\ndef a_again(final_response):\n    return 0.0\n",
            4,
        ),
    )

    @classmethod
    def duplicates(
        cls, definitions: Sequence[tuple[str | None, RewardDefinition]]
    ) -> list[tuple[int, Diagnostic]]:
        """RK401 for each (path, definition) whose name another definition also has: (index, diagnostic)."""
        by_name: dict[str, list[int]] = {}
        for index, (_, definition) in enumerate(definitions):
            if definition.name:
                by_name.setdefault(definition.name.casefold(), []).append(index)
        found = []
        for indices in by_name.values():
            if len(indices) < 2:
                continue
            for index in indices:
                path, definition = definitions[index]
                name = definition.name
                others = []
                for other in indices:
                    if other == index:
                        continue
                    other_path, other_definition = definitions[other]
                    line = other_definition.span.line
                    where = f"line {line}" if other_path == path else f"{other_path}:{line}"
                    if other_definition.name != name:
                        where += f" (as {other_definition.name!r})"
                    others.append(where)
                found.append(
                    (
                        index,
                        cls.diagnostic(
                            definition.span,
                            f"reward name {name!r} is also defined at {', '.join(others)}",
                            data={"reward": name, "others": others},
                        ),
                    )
                )
        return found


class IncompleteBaseReward(Rule):
    """A ``BaseReward`` subclass needs a ``name`` (AgentFly registers by it) and a
    ``call(self, ...)`` method (without one it is never registered). A class with neither is an
    intermediate base and is left alone, as are classes named like one (``...Base``, ``Base...``,
    ``Abstract...``, ``...Mixin``), which often hold the shared ``call`` their subclasses name."""

    code = "RK402"
    severity = Severity.ERROR
    summary = "a `BaseReward` subclass without `name` or without `call`"
    VALID = (
        "from rewardkit import BaseReward\n\nclass Api(BaseReward):\n    name = 'api'\n\n"
        "    async def call(self, final_response):\n        return 1.0\n",
        "from rewardkit import BaseReward\n\nclass Shared(BaseReward):\n"
        "    def normalize(self, text):\n        return text.strip()\n",
        "from rewardkit import BaseReward\n\nclass JudgeBase(BaseReward):\n"
        "    rubric = 'default'\n\n    async def call(self, final_response):\n"
        "        return float(self.rubric in final_response)\n\n"
        "class StrictJudge(JudgeBase):\n    name = 'strict_judge'\n    rubric = 'strict'\n",
    )
    INVALID = (
        Invalid(
            "from rewardkit import BaseReward\n\nclass Api(BaseReward):\n\n"
            "    async def call(self, final_response):\n        return 1.0\n",
            3,
        ),
        Invalid(
            "from rewardkit import BaseReward\n\nclass Api(BaseReward):\n    name = 'api'\n\n"
            "    async def score(self, final_response):\n        return 1.0\n",
            3,
        ),
    )

    def check_class(self, facts: ClassFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        class_name = facts.node.name.value
        if facts.call is None and not facts.has_name:
            return  # neither: an intermediate base with shared helpers, which the runtime skips
        named_like_a_base = class_name.startswith(("Base", "Abstract")) or class_name.endswith(
            ("Base", "Mixin")
        )
        if named_like_a_base:
            return  # shared logic (maybe a `call`) that subclasses name
        if facts.call is None:
            yield self.diagnostic(
                facts.span,
                f"`{class_name}` subclasses BaseReward but defines no `call(self, ...)`: "
                "it is never registered",
                data={"reward": facts.name, "missing": "call"},
            )
        if not facts.has_name:
            yield self.diagnostic(
                facts.span,
                f"`{class_name}` subclasses BaseReward but sets no `name`: set "
                f"`name = {class_name.lower()!r}` (AgentFly registers rewards by it)",
                data={"reward": facts.name, "missing": "name"},
            )


class SyntaxErrorRule(Rule):
    """The module does not parse: one diagnostic at the error, and the module's other checks
    are skipped (never a crash)."""

    code = "RK900"
    severity = Severity.ERROR
    summary = "a syntax error (the file's other checks are skipped)"
    VALID = ("from rewardkit import reward\n\n@reward\ndef one(final_response):\n    return 1.0\n",)
    INVALID = (
        Invalid(
            "from rewardkit import reward\n\n@reward\ndef one(final_response:\n    return 1.0\n",
            4,
        ),
    )


class NestingTooDeep(Rule):
    """A definition nested so deeply (thousands of levels) that walking it would exhaust the
    stack: it is skipped with this note instead of crashing the checker."""

    code = "RK901"
    severity = Severity.INFO
    summary = "a definition too deeply nested to analyse (its checks are skipped)"


RULES: tuple[type[Rule], ...] = (
    UnknownField,
    MisspelledPredefinedField,
    PositionalOnlyParameter,
    DefaultNeverFilled,
    MissingRewardKey,
    NonNumericReturn,
    ReturnsNothing,
    InconsistentExtras,
    UnawaitedContextCall,
    SyncContextCall,
    BlockingCallInAsyncReward,
    DuplicateRewardName,
    IncompleteBaseReward,
    SyntaxErrorRule,
    NestingTooDeep,
)
"""Every rule, in code order."""

_BY_CODE = {rule.code: rule for rule in RULES}


def unknown_code_prefixes(prefixes: Iterable[str]) -> list[str]:
    """The ``select``/``ignore`` prefixes no rule code starts with (a typo such as ``RK2010``)."""
    return [prefix for prefix in prefixes if not any(code.startswith(prefix) for code in _BY_CODE)]


def rule_for_code(code: str) -> type[Rule]:
    """The rule class of a code (``KeyError`` for an unknown code)."""
    return _BY_CODE[code]
