"""The facts rules check about one reward function, collected in one walk of its body: its
returns, calls, awaits, the uses of each name, the local dicts it builds and the values its
locals are bound to (:func:`collect_facts`)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field

from rewardkit.checks.frameworks import AdapterUse
from rewardkit.checks.model import RewardDefinition, RewardParameter, Span
from rewardkit.checks.positions import NodePositions
from rewardkit.checks.scopes import (
    Definition,
    FunctionNode,
    ImportContext,
    Runtime,
    import_bindings,
    local_scope,
    statement_bindings,
    target_names,
)
from rewardkit.runtime.define.return_keys import dotted_name, string_value


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
            fact = CallFact(node, positions, None, nested, parent, field_name, grandparent)  # type: ignore[arg-type]
            calls.append(fact)
            _read_call(fact, local_dicts)
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


def _read_call(fact: CallFact, local_dicts: dict[str, LocalDict]) -> None:
    """Fill a call's name and the local it is assigned to; a mutating method called on a local
    dict (``d.update(...)``) makes its keys unknown."""
    fact.dotted = call_dotted = dotted_name(fact.node.func)
    parent = fact.parent
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1:
        target = parent.targets[0]
        if isinstance(target, ast.Name):
            fact.assigned_to = target.id
    elif isinstance(parent, ast.AnnAssign) and isinstance(parent.target, ast.Name):
        fact.assigned_to = parent.target.id
    if call_dotted and not fact.nested:
        owner, _, method = call_dotted.rpartition(".")
        if method in _DICT_MUTATORS and owner in local_dicts:
            local_dicts[owner].unknown = True


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
            for name in target_names(target):
                local_dicts.setdefault(name, LocalDict()).unknown = True
                bindings.setdefault(name, []).append(None)
