"""RK206: a return that can give ``None`` where the code does not say ``return None`` (RK202 and
RK203 report the literal ``None``, the bare ``return`` and the end of the body).

A variable left at ``None`` (``score = None``, set in one branch only), a conditional expression
with a ``None`` branch (TRL's "not applicable"), or a module function that can return ``None``
(a forgotten ``return`` in a helper) all make the reward fail on those samples.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from rewardkit.checks.facts import RewardFacts
from rewardkit.checks.model import Diagnostic, Severity
from rewardkit.checks.rules.base import Invalid, Rule, reward_data
from rewardkit.runtime.define.return_keys import dotted_name

if TYPE_CHECKING:
    from rewardkit.checks.config import CheckConfig

NOT_APPLICABLE_HINT = (
    "for a sample the reward does not apply to (TRL's `None`), return `rewardkit.NOT_APPLICABLE`"
)


def _is_none(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _none_branch(node: ast.expr) -> bool:
    """Whether a conditional expression (``a if c else None``, chained) has a ``None`` branch."""
    while isinstance(node, ast.IfExp):
        if _is_none(node.body) or _is_none(node.orelse):
            return True
        node = node.orelse
    return False


def _assigns(statement: ast.stmt, name: str) -> bool:
    """Whether running ``statement`` certainly binds ``name`` (every branch of it does)."""
    if isinstance(statement, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == name for t in statement.targets)
    if isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
        target = statement.target
        has_value = not isinstance(statement, ast.AnnAssign) or statement.value is not None
        return has_value and isinstance(target, ast.Name) and target.id == name
    if isinstance(statement, ast.If):
        return _block_assigns(statement.body, name) and _block_assigns(statement.orelse, name)
    if isinstance(statement, (ast.With, ast.AsyncWith)):
        return _block_assigns(statement.body, name)
    if isinstance(statement, ast.Try):
        return _block_assigns(statement.body, name) and all(
            _block_assigns(handler.body, name) for handler in statement.handlers
        )
    return False


def _block_assigns(statements: list[ast.stmt], name: str) -> bool:
    return any(_assigns(statement, name) for statement in statements)


def _left_at_none(facts: RewardFacts, returned: ast.Return, name: str) -> bool:
    """Whether a top-level ``name = None`` still holds when ``return name`` (a top-level
    statement of the reward's body) runs: no statement between them certainly rebinds it."""
    body = facts.function.body
    if returned not in body:
        return False
    at_none = False
    for statement in body[: body.index(returned)]:
        if isinstance(statement, (ast.Assign, ast.AnnAssign)) and _is_none(statement.value):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                at_none = True
                continue
        if at_none and _assigns(statement, name):
            at_none = False
    return at_none


def _called_helper(facts: RewardFacts, value: ast.expr) -> tuple[str, str] | None:
    """(name, how) of the module function whose result is returned, when it can be ``None``."""
    if isinstance(value, ast.Await):
        value = value.value
    if not isinstance(value, ast.Call):
        return None
    called = dotted_name(value.func)
    helpers = dict(facts.context.none_helpers)
    if called is None or called not in helpers:
        return None
    local = {parameter.name for parameter, _ in facts.parameters} | set(facts.bindings)
    if called in local or called == facts.definition.function_name:
        return None
    return called, helpers[called]


class ReturnsMaybeNone(Rule):
    """A reward returns a number or a dict with a numeric ``reward``; ``None`` fails the sample
    (``RewardShapeError``). Beyond a written ``return None`` (RK202) and a path without a return
    (RK203), ``None`` comes back from a variable left at ``None`` (``score = None``, set in one
    branch only), a conditional expression with a ``None`` branch (TRL's way of saying "not
    applicable"), and a module function that can return ``None`` (a forgotten ``return`` in a
    helper). For a sample the reward does not apply to, return ``rewardkit.NOT_APPLICABLE``
    (TRL then gets ``None``, verl and OpenRLHF a number you choose). Not reported with
    ``none_as_zero=True``."""

    code = "RK206"
    severity = Severity.ERROR
    summary = (
        "a return that can give `None`: a variable left at `None`, `x if c else None`, a helper"
    )
    VALID = (
        "from rewardkit import NOT_APPLICABLE, reward\n\n@reward\n"
        "def boxed(final_response, answer):\n"
        "    if '\\\\boxed' not in final_response:\n        return NOT_APPLICABLE\n"
        "    return float(answer in final_response)\n",
        "from rewardkit import reward\n\n@reward\ndef boxed(final_response, answer):\n"
        "    score = None\n    if '\\\\boxed' in final_response:\n"
        "        score = float(answer in final_response)\n    else:\n        score = 0.0\n"
        "    return score\n",
    )
    INVALID = (
        Invalid(
            "from rewardkit import reward\n\n@reward\ndef boxed(final_response, answer):\n"
            "    score = None\n    if '\\\\boxed' in final_response:\n"
            "        score = float(answer in final_response)\n    return score\n",
            8,
        ),
        Invalid(
            "from rewardkit import reward\n\n@reward\ndef boxed(final_response, answer):\n"
            "    return float(answer in final_response) if '\\\\boxed' in final_response else None\n",
            5,
        ),
        Invalid(
            "from rewardkit import reward\n\ndef grade(response, gold):\n"
            "    if response.strip() == gold:\n        return 1.0\n\n"
            "@reward\ndef exact(final_response, answer):\n"
            "    return grade(final_response, answer)\n",
            9,
        ),
    )

    def check_reward(self, facts: RewardFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        if facts.none_as_zero or facts.is_generator:
            return
        remedy = NOT_APPLICABLE_HINT if facts.runtime == "rewardkit" else "return a number"
        for returned in facts.returns:
            value = returned.node.value
            if value is None or _is_none(value):
                continue  # RK203, RK202
            problem = None
            if _none_branch(value):
                problem = "this conditional expression gives `None` on one branch"
            elif isinstance(value, ast.Name):
                if _left_at_none(facts, returned.node, value.id):
                    problem = f"`{value.id}` can still be `None` here (it is set to `None` above)"
            else:
                helper = _called_helper(facts, value)
                if helper is not None:
                    problem = (
                        f"`{helper[0]}` can return `None` ({helper[1]}: a forgotten `return`?)"
                    )
            if problem is not None:
                yield self.diagnostic(
                    returned.span,
                    f"{problem}: a reward returning `None` fails that sample; {remedy}, else "
                    "return the score",
                    data=reward_data(facts),
                )
