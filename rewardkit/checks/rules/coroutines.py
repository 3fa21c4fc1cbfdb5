"""Coroutine rules (RK301-RK303): awaited where they must be, nothing blocking the event loop."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING, Literal

from rewardkit.checks.facts import CallFact, RewardFacts, iter_children
from rewardkit.checks.fixes import AWAIT, MAKE_ASYNC, await_fix, make_async_fix
from rewardkit.checks.model import Diagnostic, Severity
from rewardkit.checks.rules.base import Invalid, Rule, reward_data
from rewardkit.checks.rules.fields import is_context_annotation
from rewardkit.checks.scopes import CONTEXT_COROUTINE_METHODS
from rewardkit.runtime.define.return_keys import dotted_name

if TYPE_CHECKING:
    from rewardkit.checks.config import CheckConfig

BLOCKING_CALLS = frozenset(
    {
        "time.sleep",
        "subprocess.run",
        "subprocess.call",
        "subprocess.check_call",
        "subprocess.check_output",
        "os.system",
        "os.popen",
        "urllib.request.urlopen",
        "socket.create_connection",
    }
    | {
        f"requests.{verb}"
        for verb in ("get", "post", "put", "patch", "delete", "head", "options", "request")
    }
    | {
        f"httpx.{verb}"
        for verb in ("get", "post", "put", "patch", "delete", "head", "options", "request")
    }
)
"""Calls that block the event loop (qualified through the module's imports)."""

VALUE_CONSUMERS = frozenset(
    {
        "float",
        "int",
        "bool",
        "str",
        "repr",
        "format",
        "round",
        "abs",
        "len",
        "min",
        "max",
        "sum",
        "sorted",
        "list",
        "tuple",
        "set",
        "print",
        "json.dumps",
    }
)
"""Calls that use their argument's value (a coroutine there is a bug); an argument of any other
call is handed over (``asyncio.gather``, ``create_task``, ``wait_for``, ``asyncio.run``...)."""

Role = Literal["awaited", "handed", "assigned", "returned", "discarded", "consumed"]
"""What the code around an expression does with its value."""


def value_role(
    facts: RewardFacts, parent: ast.AST | None, field: str, grandparent: ast.AST | None
) -> Role:
    """What happens to a value held in ``parent.field``: awaited, handed over to other code
    (an argument, a collection: maybe awaited there), assigned, returned, discarded or used as
    a value (an operand, an attribute's owner, an argument of ``float()``...)."""
    if isinstance(parent, ast.Await):
        return "awaited"
    if isinstance(parent, ast.Expr):
        return "discarded"
    if isinstance(parent, ast.Return):
        return "returned"
    if isinstance(parent, (ast.Assign, ast.AnnAssign)) and field == "value":
        return "assigned"
    if isinstance(parent, ast.keyword):
        parent, field = grandparent, "keywords"
    if isinstance(parent, ast.Call):
        if field == "func":
            return "consumed"
        callee = dotted_name(parent.func)
        qualified = facts.context.qualify(callee) if callee else ""
        if qualified in VALUE_CONSUMERS or qualified.startswith("math."):
            return "consumed"
        return "handed"
    if isinstance(parent, (ast.Attribute, ast.Subscript)) and field == "value":
        return "consumed"
    if isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.FormattedValue)):
        return "consumed"
    if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)) and field == "test":
        return "consumed"
    if isinstance(parent, (ast.For, ast.AsyncFor, ast.comprehension)) and field == "iter":
        return "consumed"
    if isinstance(parent, ast.withitem):
        return "consumed"  # `async with coroutine(...)`: a coroutine is no context manager
    return "handed"


def _name_roles(facts: RewardFacts, name: str) -> set[Role]:
    """The roles of every read of local ``name`` in the reward (reads in nested scopes count as
    handed over: the nested code may await it)."""
    roles: set[Role] = set()
    function = facts.function
    stack: list[tuple[ast.AST, ast.AST | None, str, ast.AST | None, bool]] = [
        (statement, function, "body", None, False) for statement in function.body
    ]
    while stack:
        node, parent, field, grandparent, nested = stack.pop()
        if isinstance(node, ast.Name):
            if node.id == name and isinstance(node.ctx, ast.Load):
                roles.add("handed" if nested else value_role(facts, parent, field, grandparent))
            continue
        inner = nested or isinstance(
            node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
        )
        for child_field, child in iter_children(node):
            stack.append((child, node, child_field, parent, inner))
    return roles


def is_unawaited(facts: RewardFacts, call: CallFact) -> bool:
    """Whether the coroutine a call returns is certainly never awaited: discarded, returned,
    used as a value, or assigned to a name that is only used that way (or not at all)."""
    role = value_role(facts, call.parent, call.field, call.grandparent)
    if role in ("awaited", "handed"):
        return False
    if role == "assigned":
        if call.assigned_to is None:
            return False  # `a, b = ...`, `self.x = ...`: followed no further
        roles = _name_roles(facts, call.assigned_to)
        return not roles & {"awaited", "handed", "assigned"}
    return True


def _context_names(facts: RewardFacts) -> set[str]:
    names = set()
    for parameter, _ in facts.parameters:
        if parameter.name == "context" or is_context_annotation(parameter.annotation):
            names.add(parameter.name)
    return names


def _self_name(facts: RewardFacts) -> str | None:
    if facts.definition.kind != "class":
        return None
    positional = [*facts.function.args.posonlyargs, *facts.function.args.args]
    return positional[0].arg if positional else None


def coroutine_calls(facts: RewardFacts) -> Iterator[tuple[CallFact, bool]]:
    """Calls the reward itself makes that return a coroutine, each with whether it is a
    ``context`` method: ``context``'s, the class's own ``async def`` methods (``self.x()``),
    and the coroutine functions its scope defines or imports (see ``ImportContext``)."""
    context_names = _context_names(facts)
    self_name = _self_name(facts)
    for call in facts.calls:
        if call.nested or call.dotted is None:
            continue
        owner, _, method = call.dotted.rpartition(".")
        if owner in context_names and method in CONTEXT_COROUTINE_METHODS:
            yield call, True
        elif (owner and owner == self_name and method in facts.self_coroutines) or (
            facts.context.is_coroutine_function(call.dotted)
        ):
            yield call, False


class UnawaitedCoroutine(Rule):
    """A coroutine that is never awaited does nothing: ``context.acquire_resource(...)``
    acquires nothing, and ``judge(x)`` of an ``async def judge`` gives a coroutine object, not a
    score (the reward returns or compares a coroutine). Followed: ``context``'s methods, the
    ``async def`` functions the module (or the enclosing function, or the reward's class) defines,
    and imported ones the analysis knows (``asyncio``'s, the reward runtimes'). A coroutine
    handed to other code (``asyncio.gather(...)``, ``create_task(...)``, a list) is left alone."""

    code = "RK301"
    severity = Severity.ERROR
    TRANSFORM = AWAIT
    summary = "a coroutine not awaited: a `context` method, or an `async def` the module defines or imports"
    VALID = (
        "from rewardkit import reward\n\n@reward\nasync def shop(final_response, context):\n"
        "    env = await context.acquire_resource('webshop')\n    return await env.score(final_response)\n",
        "import asyncio\nfrom rewardkit import reward\n\nasync def judge(text):\n"
        "    return float(len(text) > 10)\n\n@reward\nasync def judged(final_response):\n"
        "    scores = await asyncio.gather(judge(final_response), judge(final_response.upper()))\n"
        "    return sum(scores) / 2\n",
    )
    INVALID = (
        Invalid(
            "from rewardkit import reward\n\n@reward\nasync def shop(final_response, context):\n"
            "    env = context.acquire_resource('webshop')\n    return await env.score(final_response)\n",
            5,
            "from rewardkit import reward\n\n@reward\nasync def shop(final_response, context):\n"
            "    env = await context.acquire_resource('webshop')\n    return await env.score(final_response)\n",
        ),
        Invalid(
            "from rewardkit import reward\n\nasync def judge(text):\n"
            "    return float(len(text) > 10)\n\n@reward\nasync def judged(final_response):\n"
            "    score = judge(final_response)\n    return score\n",
            8,
            "from rewardkit import reward\n\nasync def judge(text):\n"
            "    return float(len(text) > 10)\n\n@reward\nasync def judged(final_response):\n"
            "    score = await judge(final_response)\n    return score\n",
        ),
    )

    def check_reward(self, facts: RewardFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        if not facts.definition.is_async:
            return
        for call, _ in coroutine_calls(facts):
            if not is_unawaited(facts, call):
                continue
            yield self.diagnostic(
                call.span,
                f"`{call.dotted}(...)` is a coroutine and is not awaited: add `await`",
                fixes=[await_fix(facts, call)],
                data=reward_data(facts, call=call.dotted),
            )


class CoroutineInSyncReward(Rule):
    """A sync reward cannot await a coroutine (``context``'s methods, an ``async def`` it
    calls): make the reward ``async``. Running one to completion (``asyncio.run(judge(x))``) is
    left alone."""

    code = "RK302"
    severity = Severity.ERROR
    TRANSFORM = MAKE_ASYNC
    summary = "a sync reward that calls a coroutine (a `context` method or an `async def`)"
    VALID = (
        "from rewardkit import reward\n\n@reward\ndef plain(final_response, context):\n"
        "    return float(bool(context.rollout_id))\n",
        "import asyncio\nfrom rewardkit import reward\n\nasync def judge(text):\n"
        "    return float(len(text) > 10)\n\n@reward\ndef judged(final_response):\n"
        "    return asyncio.run(judge(final_response))\n",
    )
    INVALID = (
        Invalid(
            "from rewardkit import reward\n\n@reward\ndef shop(final_response, context):\n"
            "    env = context.acquire_resource('webshop')\n    return env.score(final_response)\n",
            5,
            "from rewardkit import reward\n\n@reward\nasync def shop(final_response, context):\n"
            "    env = context.acquire_resource('webshop')\n    return env.score(final_response)\n",
        ),
        Invalid(
            "from rewardkit import reward\n\nasync def judge(text):\n"
            "    return float(len(text) > 10)\n\n@reward\ndef judged(final_response):\n"
            "    return judge(final_response)\n",
            8,
            "from rewardkit import reward\n\nasync def judge(text):\n"
            "    return float(len(text) > 10)\n\n@reward\nasync def judged(final_response):\n"
            "    return judge(final_response)\n",
        ),
    )

    def check_reward(self, facts: RewardFacts, config: CheckConfig) -> Iterator[Diagnostic]:
        if facts.definition.is_async:
            return
        for call, is_context_method in coroutine_calls(facts):
            if not is_context_method and not is_unawaited(facts, call):
                continue
            yield self.diagnostic(
                call.span,
                f"`{call.dotted}(...)` is a coroutine, but `{facts.definition.function_name}` is "
                "not async: make the reward `async def` and `await` it",
                fixes=[make_async_fix(facts)],
                data=reward_data(facts, call=call.dotted),
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
                data=reward_data(facts, call=call.qualified),
            )
