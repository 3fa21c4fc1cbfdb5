"""Coroutine rules (RK301-RK303): awaited where they must be, nothing blocking the event loop."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import libcst as cst

from rewardkit.checks.discovery import (
    BLOCKING_CALLS,
    CONTEXT_COROUTINE_METHODS,
    CallFact,
    RewardFacts,
)
from rewardkit.checks.fixes import await_fix, make_async_fix
from rewardkit.checks.model import Diagnostic, Severity
from rewardkit.checks.rules.base import Invalid, Rule, reward_data
from rewardkit.checks.rules.fields import is_context_annotation

if TYPE_CHECKING:
    from rewardkit.checks.config import CheckConfig


def _context_names(facts: RewardFacts) -> set[str]:
    names = set()
    for parameter, _ in facts.parameters:
        if parameter.name == "context" or is_context_annotation(parameter.annotation):
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
                data=reward_data(facts, call=call.dotted),
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
