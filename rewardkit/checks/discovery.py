"""Find reward definitions in a parsed chunk and collect, in one walk of each, the facts rules check.

Rewards are recognised through the imports in scope (:class:`ImportContext`): ``@reward`` and
``@reward(...)`` imported from ``rewardkit`` or ``agentfly`` (any submodule, or a relative
``reward_base`` module inside AgentFly), under an alias or through a module alias, at the top of
the module or inside the enclosing function (``def main(): from agentfly.rewards import reward``),
the decorators named in the config, and subclasses of ``BaseReward`` with their ``call`` method.

The trees are CPython's :mod:`ast` (the parser every Python file must pass anyway, and ten times
faster than a concrete syntax tree); :mod:`rewardkit.checks.positions` turns its byte columns
into the engine's code-point columns and slices the source text fixes reuse.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Literal

from rewardkit.checks.frameworks import (
    CALCULATE_FUNCTIONS,
    AdapterCall,
    AdapterUse,
    HelperInfo,
    resolve_adapter_uses,
    resolve_signal_helpers,
    uses_of,
)
from rewardkit.checks.model import ParameterKind, RewardDefinition, RewardParameter, Span
from rewardkit.checks.positions import NodePositions
from rewardkit.return_keys import dotted_name, string_value

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
        "rewardkit.calculate.calculate_reward",
        "rewardkit.calculate.calculate_rewards",
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


ENV_FIELD = (
    "AgentFly: an instance of the decorator's `env_cls`, taken from its pool for this call "
    "(`@reward(env_cls=..., pool_size=...)`)."
)
"""What ``env`` receives in a reward whose decorator passes ``env_cls``."""

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

_BLOCKS: dict[type, tuple[str, ...]] = {
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
    names = _BLOCKS.get(type(statement))
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
        if type(statement) in _BLOCKS and not isinstance(statement, _SCOPE_TYPES):
            pending.extend(reversed(block_statements(statement)))


def collect_imports(body: Sequence[ast.stmt]) -> tuple[tuple[str, str], ...]:
    """Every import binding of a scope (also inside its ``if``/``try``/``with``/loop blocks)."""
    return scan_scope(body)[0]


def _target_names(target: ast.AST) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _target_names(element)
    elif isinstance(target, ast.Starred):
        yield from _target_names(target.value)


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
            for name in _target_names(target):
                yield name, False, ()
    elif isinstance(statement, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
        for name in _target_names(statement.target):
            yield name, False, ()
    elif isinstance(statement, (ast.With, ast.AsyncWith)):
        for item in statement.items:
            if item.optional_vars is not None:
                for name in _target_names(item.optional_vars):
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


# ----------------------------------------------------------------------------- facts


@dataclass
class ReturnFact:
    """A ``return`` of the reward's own body (not of a nested function)."""

    node: ast.Return
    positions: NodePositions

    @property
    def span(self) -> Span:
        """Where the ``return`` statement is (computed when a rule reports it)."""
        return self.positions.span(self.node)


@dataclass
class CallFact:
    """A call in the reward's body with what surrounds it."""

    node: ast.Call
    positions: NodePositions
    dotted: str | None
    nested: bool
    """Inside a nested function, lambda or class (not run by the reward itself)."""
    parent: ast.AST | None
    field: str = ""
    """The parent's field that holds the call (``value``, ``args``, ``func``...)."""
    grandparent: ast.AST | None = None
    assigned_to: str | None = None
    """The local name the call's result is assigned to (``x = call(...)``), if any."""
    qualified: str | None = None
    """``dotted`` resolved through the imports in the reward's scope (filled after the walk)."""

    @property
    def span(self) -> Span:
        """Where the call is (computed when a rule reports it)."""
        return self.positions.span(self.node)


@dataclass
class LocalDict:
    """What the body does with a local variable that holds a dict literal (keys followed if literal)."""

    literal: ast.Dict | None = None
    keys: set[str] = field(default_factory=set)
    unknown: bool = False
    """Assigned other values, non-literal keys, ``**`` splats or mutating method calls: keys unknown."""


@dataclass
class RewardFacts:
    """Everything the rules need about one reward function, collected in one walk of its body."""

    definition: RewardDefinition
    function: FunctionNode
    positions: NodePositions
    context: ImportContext
    """The imports in the reward's scope: the module's, the enclosing functions' and its own."""
    parameters: tuple[tuple[RewardParameter, ast.arg], ...]
    none_as_zero: bool = False
    runtime: Runtime = "rewardkit"
    """Whose wrapper calls the reward (AgentFly's refuses ``int`` and ``bool`` returns)."""
    self_coroutines: frozenset[str] = frozenset()
    """Coroutine methods of the ``BaseReward`` subclass whose ``call`` this is (``self.x(...)``)."""
    adapters: tuple[AdapterUse, ...] = ()
    """The module's calls passing this function to a rewardkit adapter."""
    framework: str | None = None
    """``trl`` or ``verl`` for a framework function (not a reward: checked by RK502/RK503)."""
    by_adapter: bool = False
    """A plain function that is a reward because the module passes it to an adapter."""
    in_process: bool = False
    """``@reward(execution="process")`` (a ``BaseReward``'s ``execution = "process"``): each
    worker process runs it on its main thread."""
    returns: list[ReturnFact] = field(default_factory=list)
    calls: list[CallFact] = field(default_factory=list)
    awaited: set[int] = field(default_factory=set)
    """``id()`` of every expression directly under ``await``."""
    name_uses: dict[str, list[ast.Name]] = field(default_factory=dict)
    """Every ``Name`` node of the body, by name (the rename fix edits them)."""
    local_dicts: dict[str, LocalDict] = field(default_factory=dict)
    bindings: dict[str, list[ast.expr | None]] = field(default_factory=dict)
    """Values assigned to each plain local name in the body (``None``: unpacked or bound by a
    loop, value unknown); for ``x += v`` the ``v``. Rules read them to tell numbers apart."""
    is_generator: bool = False

    def code(self, node: ast.AST) -> str:
        """The source text of a node."""
        return self.positions.code(node)

    def dict_keys(self, value: ast.expr | None) -> tuple[frozenset[str] | None, ast.expr | None]:
        """The literal key set of a returned dict (``None`` if unknown) and the node a fix edits.

        Handles dict displays, ``dict(k=...)`` calls and local variables built from a literal and
        subscript assignments. ``(None, None)`` when the value is not a dict at all.
        """
        if isinstance(value, ast.Dict):
            return literal_dict_keys(value), value
        if isinstance(value, ast.Call) and dotted_name(value.func) == "dict":
            keys = set()
            if value.args:
                return None, value
            for keyword in value.keywords:
                if keyword.arg is None:
                    return None, value
                keys.add(keyword.arg)
            return frozenset(keys), value
        if isinstance(value, ast.Name):
            local = self.local_dicts.get(value.id)
            if local is not None and local.literal is not None:
                if local.unknown:
                    return None, local.literal
                return frozenset(local.keys), local.literal
        return None, None


def literal_dict_keys(node: ast.Dict) -> frozenset[str] | None:
    """The keys of a dict display when all are string literals, else ``None``."""
    keys = set()
    for key in node.keys:
        text = string_value(key)
        if text is None:
            return None
        keys.add(text)
    return frozenset(keys)


_SKIPPED_FIELDS = frozenset({"ctx", "op", "ops", "type_comment", "type_ignores", "kind"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_DICT_MUTATORS = frozenset({"update", "setdefault", "pop", "popitem", "clear", "__setitem__"})


def child_fields(node_type: type) -> tuple[str, ...]:
    """The fields of an ``ast`` node type that can hold child nodes (no contexts or operators)."""
    names = _CHILD_FIELDS.get(node_type)
    if names is None:
        names = tuple(f for f in node_type._fields if f not in _SKIPPED_FIELDS)  # type: ignore[attr-defined]
        _CHILD_FIELDS[node_type] = names
    return names


def iter_children(node: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    """(field, child) for the node's child nodes, in source order."""
    for name in child_fields(type(node)):
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            yield name, value
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, ast.AST):
                    yield name, item


def collect_facts(facts: RewardFacts) -> RewardFacts:
    """Walk the reward's body once (iteratively: deep nesting is fine) and fill ``facts``.

    The same walk collects what the body itself imports and defines: ``facts.context`` becomes
    the reward's own scope (its local imports qualify its calls)."""
    positions = facts.positions
    function = facts.function
    Item = tuple[ast.AST, ast.AST | None, str, ast.AST | None, bool]
    stack: list[Item] = [
        (statement, function, "body", None, False) for statement in reversed(function.body)
    ]
    push = stack.append
    local_dicts = facts.local_dicts
    name_uses = facts.name_uses
    imports: list[tuple[str, str]] = []
    definitions: list[Definition] = []
    calls = facts.calls
    while stack:
        node, parent, field_name, grandparent, nested = stack.pop()
        node_type = type(node)
        if node_type is ast.Name:
            uses = name_uses.get(node.id)  # type: ignore[attr-defined]
            if uses is None:
                name_uses[node.id] = [node]  # type: ignore[attr-defined,list-item]
            else:
                uses.append(node)  # type: ignore[arg-type]
            continue
        if node_type is ast.Constant:
            continue
        if node_type is ast.Call:
            call_dotted = dotted_name(node.func)  # type: ignore[attr-defined]
            fact = CallFact(
                node,  # type: ignore[arg-type]
                positions,
                call_dotted,
                nested,
                parent,
                field_name,
                grandparent,
            )
            if isinstance(parent, ast.Assign) and len(parent.targets) == 1:
                target = parent.targets[0]
                if isinstance(target, ast.Name):
                    fact.assigned_to = target.id
            elif isinstance(parent, ast.AnnAssign) and isinstance(parent.target, ast.Name):
                fact.assigned_to = parent.target.id
            calls.append(fact)
            if call_dotted and not nested:
                owner, _, method = call_dotted.rpartition(".")
                if method in _DICT_MUTATORS and owner in local_dicts:
                    local_dicts[owner].unknown = True
        elif not nested:
            if node_type is ast.Return:
                facts.returns.append(ReturnFact(node, positions))  # type: ignore[arg-type]
            elif node_type is ast.Await:
                facts.awaited.add(id(node.value))  # type: ignore[attr-defined]
            elif node_type is ast.Yield or node_type is ast.YieldFrom:
                facts.is_generator = True
            elif node_type is ast.Import or node_type is ast.ImportFrom:
                imports.extend(import_bindings(node))
                continue
            if node_type in _BINDING_STATEMENTS:
                _track_assignment(node, local_dicts, facts.bindings)
            if isinstance(node, ast.stmt):
                definitions.extend(statement_bindings(node))
        elif node_type is ast.Await:
            facts.awaited.add(id(node.value))  # type: ignore[attr-defined]
        child_nested = nested or node_type in _SCOPES
        for name in _reversed_fields(node_type):
            value = getattr(node, name)
            if type(value) is list:
                for item in reversed(value):
                    if isinstance(item, ast.AST):
                        push((item, node, name, parent, child_nested))
            elif isinstance(value, ast.AST):
                push((value, node, name, parent, child_nested))
    scope = local_scope(function, facts.context, (tuple(imports), definitions))
    facts.context = context = facts.context.inner(scope)
    for call in calls:
        if call.dotted is not None:
            call.qualified = context.qualify(call.dotted)
    return facts


_REVERSED_FIELDS: dict[type, tuple[str, ...]] = {}


def _reversed_fields(node_type: type) -> tuple[str, ...]:
    names = _REVERSED_FIELDS.get(node_type)
    if names is None:
        names = _REVERSED_FIELDS[node_type] = tuple(reversed(child_fields(node_type)))
    return names


_BINDING_STATEMENTS = (
    ast.Assign,
    ast.AnnAssign,
    ast.AugAssign,
    ast.For,
    ast.AsyncFor,
    ast.With,
    ast.AsyncWith,
    ast.NamedExpr,
)


def _track_assignment(
    node: ast.AST,
    local_dicts: dict[str, LocalDict],
    bindings: dict[str, list[ast.expr | None]],
) -> None:
    value: ast.expr | None
    if isinstance(node, ast.Assign):
        targets: list[ast.expr] = list(node.targets)
        value = node.value
    elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)):
        targets = [node.target]
        value = node.value
    elif isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor)):
        targets = [node.target]
        value = None
    else:  # with ... as x
        targets = [i.optional_vars for i in node.items if i.optional_vars is not None]  # type: ignore[attr-defined]
        value = None
    unknown_value = isinstance(node, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith))
    for target in targets:
        if isinstance(target, ast.Name):
            if isinstance(node, ast.AugAssign):
                bindings.setdefault(target.id, []).append(node.value)
            elif unknown_value:
                bindings.setdefault(target.id, []).append(None)
            elif value is not None:  # `x: float` alone binds nothing
                bindings.setdefault(target.id, []).append(value)
            local = local_dicts.setdefault(target.id, LocalDict())
            if isinstance(value, ast.Dict) and local.literal is None and len(targets) == 1:
                local.literal = value
                keys = literal_dict_keys(value)
                if keys is None:
                    local.unknown = True
                else:
                    local.keys.update(keys)
            else:
                local.unknown = True
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            local = local_dicts.setdefault(target.value.id, LocalDict())
            key = string_value(target.slice)
            if key is None or (isinstance(node, ast.AugAssign) and key not in local.keys):
                local.unknown = local.unknown or key is None
            else:
                local.keys.add(key)
        elif isinstance(target, (ast.Tuple, ast.List, ast.Starred)):
            for name in _target_names(target):
                local_dicts.setdefault(name, LocalDict()).unknown = True
                bindings.setdefault(name, []).append(None)


# ----------------------------------------------------------------------------- discovery


@dataclass
class ClassFacts:
    """A ``BaseReward`` subclass: enough for RK402 (missing ``name`` or ``call``)."""

    node: ast.ClassDef
    span: Span
    name: str | None
    has_name: bool
    call: FunctionNode | None


@dataclass
class GroupRewardFacts:
    """A ``@group_reward`` function: how it is grouped, run and adapted (RK504, RK505)."""

    function: FunctionNode
    positions: NodePositions
    context: ImportContext
    span: Span
    """Its name."""
    over: object
    """``over=``: ``"group"`` (the default), ``"batch"``, or ``...`` when not a literal."""
    in_process: bool
    adapters: tuple[AdapterUse, ...]


@dataclass
class ChunkFindings:
    """The rewards of one chunk: facts per reward function and the ``BaseReward`` classes."""

    rewards: list[RewardFacts] = field(default_factory=list)
    classes: list[ClassFacts] = field(default_factory=list)
    group_rewards: list[GroupRewardFacts] = field(default_factory=list)


def _decorator_target(decorator: ast.expr) -> tuple[str | None, ast.Call | None]:
    if isinstance(decorator, ast.Call):
        return dotted_name(decorator.func), decorator
    return dotted_name(decorator), None


def _keyword_literal(call: ast.Call | None, keyword: str) -> tuple[bool, object]:
    """Whether ``keyword=`` is passed, and its literal value (``...`` when not a literal)."""
    if call is None:
        return False, None
    for argument in call.keywords:
        if argument.arg == keyword:
            value = argument.value
            if isinstance(value, ast.Constant) and (
                value.value is None or isinstance(value.value, (bool, str))
            ):
                return True, value.value
            return True, ...
    return False, None


_KEYWORD = re.compile(r"(?:async(?:[ \t\f]|\\\r?\n)+)?(?:def|class)(?:[ \t\f]|\\\r?\n)+")
_AFTER_PARAMETERS = re.compile(r"#[^\r\n]*|\\\r?\n|->|[:)]|[^#:)\\-]+|.", re.DOTALL)
"""Tokens between the last parameter and the ``:`` or ``->`` of a ``def``: comments, line
continuations, ``)`` (the last one closes the parameter list; others close a parenthesized
default) and the spaces, commas, ``/`` and ``*`` between them."""


def name_span(node: FunctionNode | ast.ClassDef, positions: NodePositions) -> Span:
    """The span of a ``def``'s or ``class``'s name."""
    offset = positions.start_offset(node)
    match = _KEYWORD.match(positions.text, offset)
    start = match.end() if match else offset
    line, column = positions.position(start)
    return Span(line, column, line, column + len(node.name))


def _parameters(
    function: FunctionNode, positions: NodePositions, skip_first: bool
) -> tuple[tuple[RewardParameter, ast.arg], ...]:
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults_from = len(positional) - len(arguments.defaults)
    ordered: list[tuple[ParameterKind, ast.arg, bool]] = [
        ("positional_only", a, index >= defaults_from)
        for index, a in enumerate(arguments.posonlyargs)
    ]
    ordered += [
        ("positional_or_keyword", a, index + len(arguments.posonlyargs) >= defaults_from)
        for index, a in enumerate(arguments.args)
    ]
    if arguments.vararg is not None:
        ordered.append(("var_positional", arguments.vararg, False))
    ordered += [
        ("keyword_only", a, default is not None)
        for a, default in zip(arguments.kwonlyargs, arguments.kw_defaults)
    ]
    if arguments.kwarg is not None:
        ordered.append(("var_keyword", arguments.kwarg, False))
    if skip_first and ordered and ordered[0][0] in ("positional_only", "positional_or_keyword"):
        ordered = ordered[1:]
    result = []
    for kind, argument, has_default in ordered:
        line, column = positions.start(argument)
        annotation = positions.code(argument.annotation) if argument.annotation else None
        result.append(
            (
                RewardParameter(
                    name=argument.arg,
                    kind=kind,
                    has_default=has_default,
                    span=Span(line, column, line, column + len(argument.arg)),
                    annotation=annotation,
                ),
                argument,
            )
        )
    return tuple(result)


def _parameters_span(function: FunctionNode, name: Span, positions: NodePositions) -> Span:
    """From just after ``(`` to just before ``)`` (an empty range for ``def f():``)."""
    text = positions.text
    after = positions.offset(name.end_line, name.end_column)
    type_params = getattr(function, "type_params", None)  # Python 3.12+: def f[T](...)
    if type_params:
        after = text.index("]", positions.end_offset(type_params[-1]))
    opening = text.index("(", after)
    arguments = function.args
    nodes: list[ast.AST] = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    nodes += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    nodes += [*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)]
    closing = position = max((positions.end_offset(node) for node in nodes), default=opening + 1)
    while position < len(text):
        token = _AFTER_PARAMETERS.match(text, position)
        if token is None or token.group() in (":", "->"):
            break
        if token.group() == ")":
            closing = position
        position = token.end()
    return Span(*positions.position(opening + 1), *positions.position(closing))


def _reward_facts(
    function: FunctionNode,
    positions: NodePositions,
    context: ImportContext,
    *,
    name: str | None,
    runtime: Runtime,
    class_node: ast.ClassDef | None = None,
    none_as_zero: bool = False,
    auto_register: bool = True,
    own_fields: tuple[tuple[str, str], ...] = (),
    self_coroutines: frozenset[str] = frozenset(),
) -> RewardFacts:
    """The definition of a reward function (or of a class's ``call``) and its facts, collected."""
    parameters = _parameters(function, positions, skip_first=class_node is not None)
    outer: FunctionNode | ast.ClassDef = class_node if class_node is not None else function
    first = outer.decorator_list[0] if outer.decorator_list else outer
    start_line, start_column = positions.start(first)
    if outer.decorator_list:  # the decorator's `@`, before its expression
        at = positions.text.rfind("@", 0, positions.start_offset(first))
        start_line, start_column = positions.position(at)
    end_line, end_column = positions.end(outer)
    function_name = name_span(function, positions)
    definition = RewardDefinition(
        name=name,
        function_name=function.name,
        is_async=isinstance(function, ast.AsyncFunctionDef),
        kind="class" if class_node is not None else "function",
        class_name=class_node.name if class_node is not None else None,
        span=name_span(outer, positions) if class_node is not None else function_name,
        definition_span=Span(start_line, start_column, end_line, end_column),
        parameters=tuple(p for p, _ in parameters),
        parameters_span=_parameters_span(function, function_name, positions),
        registered=auto_register,
        own_fields=own_fields,
    )
    facts = RewardFacts(
        definition=definition,
        function=function,
        positions=positions,
        context=context,
        parameters=parameters,
        none_as_zero=none_as_zero,
        runtime=runtime,
        self_coroutines=self_coroutines,
    )
    return collect_facts(facts)


class _Scope:
    """The imports in scope at a statement: computed only when a nested definition needs them
    (most function bodies hold none, and are never scanned twice)."""

    __slots__ = ("_context", "_node", "_outer")

    def __init__(
        self,
        context: ImportContext | None,
        outer: _Scope | None = None,
        node: FunctionNode | ast.ClassDef | None = None,
    ) -> None:
        self._context = context
        self._outer = outer
        self._node = node

    def get(self) -> ImportContext:
        if self._context is None:
            assert self._outer is not None
            assert self._node is not None
            outer = self._outer.get()
            self._context = outer.inner(local_scope(self._node, outer))
        return self._context


def find_rewards(
    body: Sequence[ast.stmt], context: ImportContext, positions: NodePositions
) -> ChunkFindings:
    """The reward functions and ``BaseReward`` classes of a chunk, with their facts collected.

    Function and class bodies are searched too, each with its own imports in scope: a reward
    whose decorator is imported inside the enclosing function is still a reward."""
    findings = ChunkFindings()
    module_scope = _Scope(context)
    pending: list[tuple[ast.stmt, _Scope, bool]] = [
        (statement, module_scope, False) for statement in reversed(body)
    ]
    while pending:
        statement, scope, in_function = pending.pop()
        statement_type = type(statement)
        if statement_type not in _BLOCKS:
            continue  # a simple statement: no definition inside
        inner_scope = scope
        if statement_type is ast.FunctionDef or statement_type is ast.AsyncFunctionDef:
            found = _decorated_reward(statement, positions, scope, in_function)  # type: ignore[arg-type]
            if found is None and scope is module_scope:
                found = _framework_facts(statement, positions, context)  # type: ignore[arg-type]
            if found is not None:
                findings.rewards.append(found)
            elif statement.decorator_list:  # type: ignore[attr-defined]
                group = _group_reward(statement, positions, scope.get())  # type: ignore[arg-type]
                if group is not None:
                    findings.group_rewards.append(group)
            inner_scope = _Scope(None, scope, statement)  # type: ignore[arg-type]
        elif statement_type is ast.ClassDef:
            runtime = next(
                (
                    found_runtime
                    for base in statement.bases  # type: ignore[attr-defined]
                    if (dotted := dotted_name(base)) is not None
                    and (found_runtime := scope.get().base_runtime(dotted)) is not None
                ),
                None,
            )
            if runtime is not None:
                before = len(findings.rewards)
                _class_facts(statement, positions, scope.get(), runtime, findings)  # type: ignore[arg-type]
                if in_function:
                    for facts in findings.rewards[before:]:
                        facts.definition = replace(facts.definition, module_level=False)
                continue
            inner_scope = _Scope(None, scope, statement)  # type: ignore[arg-type]
        inner = (
            in_function
            or statement_type is ast.FunctionDef
            or statement_type is ast.AsyncFunctionDef
        )
        pending.extend(
            (child, inner_scope, inner) for child in reversed(block_statements(statement))
        )
    return findings


def _decorated_reward(
    function: FunctionNode, positions: NodePositions, scope: _Scope, in_function: bool
) -> RewardFacts | None:
    """The facts of a function a reward decorator makes a reward, else ``None``."""
    for decorator in function.decorator_list:
        target, call = _decorator_target(decorator)
        if target is None:
            continue
        runtime = scope.get().decorator_runtime(target)
        if runtime is not None:
            found = _function_facts(function, call, positions, scope.get(), runtime)
            if in_function:
                found.definition = replace(found.definition, module_level=False)
            return found
    return None


GROUP_REWARD_DECORATORS = frozenset({"rewardkit.group_reward", "rewardkit.groups.group_reward"})


def _group_reward(
    function: FunctionNode, positions: NodePositions, context: ImportContext
) -> GroupRewardFacts | None:
    """The facts of a function ``@group_reward`` decorates, else ``None``."""
    for decorator in function.decorator_list:
        target, call = _decorator_target(decorator)
        if target is None or context.qualify(target) not in GROUP_REWARD_DECORATORS:
            continue
        has_over, over = _keyword_literal(call, "over")
        _, execution = _keyword_literal(call, "execution")
        return GroupRewardFacts(
            function=function,
            positions=positions,
            context=context,
            span=name_span(function, positions),
            over=over if has_over else "group",
            in_process=execution == "process",
            adapters=tuple(uses_of(function.name, context.adapter_uses)),
        )
    return None


def _framework_facts(
    function: FunctionNode, positions: NodePositions, context: ImportContext
) -> RewardFacts | None:
    """A module-level function that is no reward by its decorators but is one by its use:
    passed to an adapter (a reward, unregistered) or named a framework function in the
    configuration (checked against the framework, not as a reward)."""
    adapters = tuple(uses_of(function.name, context.adapter_uses))
    if adapters and not function.decorator_list:  # a decorated one is what its decorator made
        facts = _reward_facts(function, positions, context, name=function.name, runtime="rewardkit")
        facts.definition = replace(facts.definition, registered=False)
        facts.adapters, facts.by_adapter = adapters, True
        return facts
    framework = next((f for n, f in context.framework_functions if n == function.name), None)
    if framework is None:
        return None
    facts = _reward_facts(function, positions, context, name=function.name, runtime="rewardkit")
    facts.framework = framework
    return facts


def _function_facts(
    function: FunctionNode,
    call: ast.Call | None,
    positions: NodePositions,
    context: ImportContext,
    runtime: Runtime,
) -> RewardFacts:
    name: str | None = function.name
    has_name, value = _keyword_literal(call, "name")
    if has_name:
        name = value if isinstance(value, str) else None
    elif call is not None and call.args:
        name = string_value(call.args[0])
    _, none_as_zero = _keyword_literal(call, "none_as_zero")
    _, auto_register = _keyword_literal(call, "auto_register")
    has_env, env_cls = _keyword_literal(call, "env_cls")
    _, execution = _keyword_literal(call, "execution")
    facts = _reward_facts(
        function,
        positions,
        context,
        name=name,
        runtime=runtime,
        none_as_zero=none_as_zero is True,
        auto_register=auto_register is not False,
        own_fields=(("env", ENV_FIELD),) if has_env and env_cls is not None else (),
    )
    facts.in_process = execution == "process"
    facts.adapters = tuple(uses_of(function.name, context.adapter_uses))
    return facts


def _class_facts(
    node: ast.ClassDef,
    positions: NodePositions,
    context: ImportContext,
    runtime: Runtime,
    findings: ChunkFindings,
) -> None:
    name: str | None = node.name
    has_name = False
    call_method: FunctionNode | None = None
    none_as_zero = in_process = False
    for statement in node.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if statement.name == "call":
                call_method = statement
            continue
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(statement, ast.Assign):
            targets, value = list(statement.targets), statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets, value = [statement.target], statement.value
        for target in targets:
            if isinstance(target, ast.Name) and target.id == "name":
                has_name = True
                name = string_value(value)
            elif isinstance(target, ast.Name) and target.id == "none_as_zero":
                none_as_zero = isinstance(value, ast.Constant) and value.value is True
            elif isinstance(target, ast.Name) and target.id == "execution":
                in_process = isinstance(value, ast.Constant) and value.value == "process"
    auto_register = True
    for keyword in node.keywords:
        if keyword.arg == "auto_register":
            auto_register = not (
                isinstance(keyword.value, ast.Constant) and keyword.value.value is False
            )
    findings.classes.append(
        ClassFacts(
            node, name_span(node, positions), name if has_name else node.name, has_name, call_method
        )
    )
    if call_method is not None:
        class_scope = local_scope(node, context)
        facts = _reward_facts(
            call_method,
            positions,
            context,
            name=name,
            runtime=runtime,
            class_node=node,
            none_as_zero=none_as_zero,
            auto_register=auto_register,
            self_coroutines=class_scope.coroutines,
        )
        facts.in_process = in_process
        findings.rewards.append(facts)
