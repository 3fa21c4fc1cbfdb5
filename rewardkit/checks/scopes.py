"""What names mean in a scope: the imports in scope (:class:`ImportContext`), the names a
scope binds, and which of them are coroutine functions.

Rewards are recognised through the imports in scope: ``@reward`` and ``@reward(...)`` imported
from ``rewardkit`` or ``agentfly`` (any submodule, or a relative ``reward_base`` module inside
AgentFly), under an alias or through a module alias, at the top of the module or inside the
enclosing function (``def main(): from agentfly.rewards import reward``), the decorators named
in the config, and subclasses of ``BaseReward``. A scope's imports and bindings are read from
its statements, nested blocks included, nested scopes excluded.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Literal

from rewardkit.checks.frameworks import (
    CALCULATE_FUNCTIONS,
    AdapterCall,
    AdapterUse,
    HelperInfo,
    resolve_adapter_uses,
    resolve_signal_helpers,
)
from rewardkit.runtime.define.return_keys import dotted_name

REWARD_PACKAGES = ("rewardkit", "agentfly")
"""Top-level packages whose ``reward`` and ``BaseReward`` define rewards."""

MAY_DEFINE_REWARDS = re.compile(r"rewardkit|agentfly")
"""Text a module that imports ``reward``/``BaseReward`` from rewardkit or AgentFly contains (at
module level or inside a function); AgentFly's own relative imports are looked for separately
(:func:`rewardkit.checks.engine.may_define_rewards`)."""

CONTEXT_COROUTINE_METHODS = frozenset(
    {"acquire_resource", "release_resource", "end_resource", "close"}
)
"""Coroutine methods of ``rewardkit.Context`` (a test keeps this in sync with the class)."""

KNOWN_COROUTINE_FUNCTIONS = frozenset(
    {
        "asyncio.sleep",
        "asyncio.wait_for",
        "asyncio.wait",
        "asyncio.to_thread",
        "asyncio.create_subprocess_exec",
        "asyncio.create_subprocess_shell",
        "asyncio.open_connection",
        "asyncio.open_unix_connection",
        "asyncio.start_server",
        "rewardkit.calculate_reward",
        "rewardkit.calculate_rewards",
        "rewardkit.runtime.batch.calculate.calculate_reward",
        "rewardkit.runtime.batch.calculate.calculate_rewards",
        "agentfly.rewards.calculate_reward",
        "agentfly.rewards.reward_base.calculate_reward",
    }
)
"""Imported coroutine functions the analysis resolves without reading their module: asyncio's,
and the reward runtimes' own (a test keeps rewardkit's in sync with the runtime)."""

TRANSPARENT_DECORATORS = frozenset(
    {
        "staticmethod",
        "classmethod",
        "abc.abstractmethod",
        "typing.override",
        "typing_extensions.override",
    }
)
"""Decorators that leave an ``async def`` a coroutine function (unknown decorators may not)."""

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
Runtime = Literal["rewardkit", "agentfly", "configured"]
"""Whose wrapper calls the reward: rewardkit's, AgentFly's own, or a configured decorator."""


def kit_runtime(qualified: str, leaf: str) -> Runtime | None:
    """Which runtime's ``leaf`` (``reward`` or ``BaseReward``) a qualified name is, if any."""
    module, _, name = qualified.rpartition(".")
    if name != leaf or not module:
        return None
    if module.startswith("."):
        return "agentfly" if "reward" in module else None  # AgentFly's own modules
    package = module.split(".", 1)[0]
    if package in REWARD_PACKAGES:
        return "agentfly" if package == "agentfly" else "rewardkit"
    return None


@dataclass(frozen=True)
class ImportContext:
    """What the imports in scope make of names: the part of a definition's meaning outside its text."""

    bindings: tuple[tuple[str, str], ...] = ()
    """(local name, qualified name) for every import in scope, in order (later ones win)."""
    star_modules: tuple[str, ...] = ()
    extra_decorators: tuple[str, ...] = ()
    coroutine_functions: frozenset[str] = frozenset()
    """Names in scope bound only to a coroutine function (``async def`` the module defines)."""
    adapter_uses: tuple[tuple[str, AdapterUse], ...] = ()
    """(function name, use) of the module's functions passed to ``to_trl``/``to_verl``/``to_openrlhf``."""
    framework_functions: tuple[tuple[str, str], ...] = ()
    """(function name, framework) of the framework functions the configuration names here."""
    signal_helpers: tuple[tuple[str, str], ...] = ()
    """(function name, grader) of the module's functions that reach a signal-based timeout."""
    none_helpers: tuple[tuple[str, str], ...] = ()
    """(function name, why) of the module's plain functions that can return ``None``."""
    script: str | None = None
    """Why the module is run as a script (an ``if __name__ == "__main__":`` block...): its
    rewards are then defined in ``__main__``."""
    calculated_in_process: tuple[str, ...] = ()
    """Names the module passes to ``calculate_rewards(..., execution="process")``."""

    @cached_property
    def _map(self) -> dict[str, str]:
        return dict(self.bindings)

    @cached_property
    def _hash(self) -> int:
        return hash(
            (
                self.bindings,
                self.star_modules,
                self.extra_decorators,
                self.coroutine_functions,
                self.adapter_uses,
                self.framework_functions,
                self.signal_helpers,
                self.none_helpers,
                self.script,
                self.calculated_in_process,
            )
        )

    def __hash__(self) -> int:  # computed once: contexts key the engine's cache of analyses
        return self._hash

    def qualify(self, dotted: str) -> str:
        """The qualified name a local dotted name refers to (itself when not imported)."""
        head, sep, rest = dotted.partition(".")
        target = self._map.get(head)
        if target is None:
            for module in self.star_modules:
                if kit_runtime(f"{module}.{head}", head) is not None:
                    return f"{module}.{dotted}"
            return dotted
        return target + sep + rest

    def decorator_runtime(self, dotted: str) -> Runtime | None:
        """Whose reward ``@dotted`` (or ``@dotted(...)``) makes, if it makes one."""
        qualified = self.qualify(dotted)
        runtime = kit_runtime(qualified, "reward")
        if runtime is not None:
            return runtime
        for extra in self.extra_decorators:
            if "." in extra:
                if qualified == extra:
                    return "configured"
            elif dotted == extra or qualified.rsplit(".", 1)[-1] == extra:
                return "configured"
        return None

    def is_reward_decorator(self, dotted: str) -> bool:
        """Whether ``@dotted`` (or ``@dotted(...)``) makes a reward."""
        return self.decorator_runtime(dotted) is not None

    def base_runtime(self, dotted: str) -> Runtime | None:
        """Whose ``BaseReward`` a class base is, if it is one."""
        return kit_runtime(self.qualify(dotted), "BaseReward")

    def is_base_reward(self, dotted: str) -> bool:
        """Whether a class base refers to ``BaseReward``."""
        return self.base_runtime(dotted) is not None

    def is_coroutine_function(self, dotted: str) -> bool:
        """Whether calling ``dotted`` certainly returns a coroutine (what the analysis resolves)."""
        if "." not in dotted and dotted in self.coroutine_functions:
            return True
        return self.qualify(dotted) in KNOWN_COROUTINE_FUNCTIONS

    def inner(self, scope: LocalScope) -> ImportContext:
        """The context inside a function or class body: its own imports and definitions on top."""
        if not scope.imports and not scope.coroutines and not scope.bound:
            return self
        imported = {local for local, _ in scope.imports}
        coroutines = (self.coroutine_functions - scope.bound - imported) | scope.coroutines
        return replace(self, bindings=self.bindings + scope.imports, coroutine_functions=coroutines)


def import_bindings(statement: ast.AST) -> Iterator[tuple[str, str]]:
    """(local name, qualified name) of each name an ``import`` or ``from ... import`` binds."""
    if isinstance(statement, ast.Import):
        for alias in statement.names:
            if alias.asname is not None:
                yield alias.asname, alias.name
            else:
                head = alias.name.split(".", 1)[0]
                yield head, head
    elif isinstance(statement, ast.ImportFrom):
        module = "." * statement.level + (statement.module or "")
        for alias in statement.names:
            if alias.name == "*":
                yield "*", module
                continue
            local = alias.asname or alias.name
            yield local, (module + alias.name if module.endswith(".") else f"{module}.{alias.name}")


TRY_STATEMENTS: tuple[type[ast.stmt], ...] = (
    (ast.Try, ast.TryStar) if sys.version_info >= (3, 11) else (ast.Try,)
)
"""``try`` and, on Python 3.11+, ``try``/``except*``."""

BLOCK_FIELDS: dict[type, tuple[str, ...]] = {
    ast.If: ("body", "orelse"),
    ast.For: ("body", "orelse"),
    ast.AsyncFor: ("body", "orelse"),
    ast.While: ("body", "orelse"),
    ast.With: ("body",),
    ast.AsyncWith: ("body",),
    **dict.fromkeys(TRY_STATEMENTS, ("body", "handlers", "orelse", "finalbody")),
    ast.Match: ("cases",),
    ast.FunctionDef: ("body",),
    ast.AsyncFunctionDef: ("body",),
    ast.ClassDef: ("body",),
}
"""The fields of each compound statement that hold blocks of statements (handlers and cases
hold one block each)."""


def block_statements(statement: ast.AST) -> list[ast.stmt]:
    """The statements directly in a compound statement's blocks (not in nested scopes' bodies)."""
    names = BLOCK_FIELDS.get(type(statement))
    if names is None:
        return []
    found: list[ast.stmt] = []
    for name in names:
        for item in getattr(statement, name):
            if isinstance(item, (ast.ExceptHandler, ast.match_case)):
                found.extend(item.body)
            else:
                found.append(item)
    return found


_SCOPE_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _scope_statements(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement of a scope's body, nested blocks included, nested scopes excluded."""
    pending = list(reversed(body))
    while pending:
        statement = pending.pop()
        yield statement
        if type(statement) in BLOCK_FIELDS and not isinstance(statement, _SCOPE_TYPES):
            pending.extend(reversed(block_statements(statement)))


def collect_imports(body: Sequence[ast.stmt]) -> tuple[tuple[str, str], ...]:
    """Every import binding of a scope (also inside its ``if``/``try``/``with``/loop blocks)."""
    return scan_scope(body)[0]


def target_names(target: ast.AST) -> Iterator[str]:
    """The names an assignment target binds (``a``, ``a, (b, *c)``; not ``x.a`` or ``x[a]``)."""
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from target_names(element)
    elif isinstance(target, ast.Starred):
        yield from target_names(target.value)


Definition = tuple[str, bool, tuple[str, ...]]
"""A name a scope binds: (name, bound by an ``async def``, the dotted names of its decorators);
a name bound any other way has ``False`` and no decorators."""


def scope_definitions(body: Sequence[ast.stmt]) -> tuple[Definition, ...]:
    """Every name a scope's statements bind (imports excepted, see :func:`collect_imports`)."""
    return scan_scope(body)[1]


def statement_bindings(statement: ast.stmt) -> Iterator[Definition]:
    """The names one statement binds in its scope (not counting imports)."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
        decorators = tuple(
            dotted_name(d.func if isinstance(d, ast.Call) else d) or "?"
            for d in statement.decorator_list
        )
        yield statement.name, isinstance(statement, ast.AsyncFunctionDef), decorators
    elif isinstance(statement, ast.ClassDef):
        yield statement.name, False, ()
    elif isinstance(statement, ast.Assign):
        for target in statement.targets:
            for name in target_names(target):
                yield name, False, ()
    elif isinstance(statement, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
        for name in target_names(statement.target):
            yield name, False, ()
    elif isinstance(statement, (ast.With, ast.AsyncWith)):
        for item in statement.items:
            if item.optional_vars is not None:
                for name in target_names(item.optional_vars):
                    yield name, False, ()
    elif isinstance(statement, TRY_STATEMENTS):
        for handler in statement.handlers:
            if handler.name:
                yield handler.name, False, ()


def scan_scope(
    body: Sequence[ast.stmt],
) -> tuple[tuple[tuple[str, str], ...], tuple[Definition, ...]]:
    """(import bindings, other bindings) of a scope's statements, in one walk."""
    imports: list[tuple[str, str]] = []
    definitions: list[Definition] = []
    for statement in _scope_statements(body):
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            imports.extend(import_bindings(statement))
        else:
            definitions.extend(statement_bindings(statement))
    return tuple(imports), tuple(definitions)


def coroutine_names(
    definitions: Iterable[Definition], context: ImportContext
) -> tuple[frozenset[str], frozenset[str]]:
    """(names bound only to coroutine functions, every other bound name) of a scope.

    An ``async def`` stays a coroutine function under no decorator, a reward decorator (calling
    an async reward returns a coroutine) or one of :data:`TRANSPARENT_DECORATORS`; a name bound
    any other way anywhere in the scope is not resolved (it may be a sync function)."""
    coroutines: set[str] = set()
    other: set[str] = set()
    for name, is_async, decorators in definitions:
        if is_async and all(
            context.qualify(d) in TRANSPARENT_DECORATORS or context.is_reward_decorator(d)
            for d in decorators
        ):
            coroutines.add(name)
        else:
            other.add(name)
    return frozenset(coroutines - other), frozenset(other)


@dataclass(frozen=True)
class LocalScope:
    """What a function or class body binds on top of the enclosing scope."""

    imports: tuple[tuple[str, str], ...] = ()
    coroutines: frozenset[str] = frozenset()
    bound: frozenset[str] = frozenset()
    """Every other name bound in the body (parameters included): none of them is resolved."""


def parameter_names(function: FunctionNode) -> list[str]:
    """Every parameter name of a function, ``*args`` and ``**kwargs`` included."""
    arguments = function.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    return [argument.arg for argument in every]


def local_scope(
    node: FunctionNode | ast.ClassDef,
    context: ImportContext,
    scanned: tuple[tuple[tuple[str, str], ...], Sequence[Definition]] | None = None,
) -> LocalScope:
    """The imports and definitions of a function's (or class's) body, its parameters included
    (``scanned``: the body's :func:`scan_scope`, when already known)."""
    imports, definitions = scanned if scanned is not None else scan_scope(node.body)
    parameters = [] if isinstance(node, ast.ClassDef) else parameter_names(node)
    if not imports and not definitions and not parameters:
        return LocalScope()
    coroutines, other = coroutine_names(definitions, context.inner(LocalScope(imports)))
    return LocalScope(imports, coroutines, other | frozenset(parameters))


def build_context(
    bindings: Sequence[tuple[str, str]],
    extra_decorators: Sequence[str],
    definitions: Iterable[Definition] = (),
    adapter_calls: Iterable[AdapterCall] = (),
    framework_functions: tuple[tuple[str, str], ...] = (),
    helpers: Iterable[HelperInfo] = (),
    none_helpers: Iterable[tuple[str, str]] = (),
    script: str | None = None,
    process_calls: Iterable[tuple[str, str]] = (),
) -> ImportContext:
    """An :class:`ImportContext` from a module's import bindings, its top-level definitions
    (for the coroutine functions it defines), the configured decorators, the calls that may
    pass its functions to an adapter, the framework functions configured for it, its functions
    that may return ``None``, why it is a script (if it is one) and the rewards it passes to
    ``calculate_rewards(..., execution="process")``."""
    plain = tuple((local, qualified) for local, qualified in bindings if local != "*")
    stars = tuple(qualified for local, qualified in bindings if local == "*")
    context = ImportContext(
        plain, stars, tuple(extra_decorators), framework_functions=framework_functions
    )
    coroutines, _ = coroutine_names(definitions, context)
    imported = {local for local, _ in plain}
    if coroutines - imported:
        context = replace(context, coroutine_functions=frozenset(coroutines - imported))
    uses = resolve_adapter_uses(adapter_calls, context.qualify)
    if uses:
        context = replace(context, adapter_uses=uses)
    signal_helpers = resolve_signal_helpers(helpers, context.qualify)
    if signal_helpers:
        context = replace(context, signal_helpers=signal_helpers)
    none_helpers = tuple(sorted(dict(none_helpers).items()))
    if none_helpers or script:
        context = replace(context, none_helpers=none_helpers, script=script)
    calculated = sorted(
        {name for callee, name in process_calls if context.qualify(callee) in CALCULATE_FUNCTIONS}
    )
    if calculated:
        context = replace(context, calculated_in_process=tuple(calculated))
    return context
