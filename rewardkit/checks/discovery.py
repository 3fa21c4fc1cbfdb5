"""Find reward definitions in a parsed chunk and collect, in one walk of each, the facts rules check.

Rewards are recognised through the imports in scope (:class:`~rewardkit.checks.scopes.ImportContext`):
``@reward`` and ``@reward(...)`` imported from ``rewardkit`` or ``agentfly``, the decorators named
in the config, and subclasses of ``BaseReward`` with their ``call`` method, at module level or
nested in functions and classes (each with its own imports in scope); a module-level function
passed to an adapter or named a framework function counts too. Each one's facts are collected by
:func:`rewardkit.checks.facts.collect_facts`.

The trees are CPython's :mod:`ast` (the parser every Python file must pass anyway, and ten times
faster than a concrete syntax tree); :mod:`rewardkit.checks.positions` turns its byte columns
into the engine's code-point columns and slices the source text fixes reuse.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from rewardkit.checks.facts import RewardFacts, collect_facts
from rewardkit.checks.frameworks import AdapterUse, uses_of
from rewardkit.checks.model import ParameterKind, RewardDefinition, RewardParameter, Span
from rewardkit.checks.positions import NodePositions
from rewardkit.checks.scopes import (
    BLOCK_FIELDS,
    FunctionNode,
    ImportContext,
    Runtime,
    block_statements,
    local_scope,
)
from rewardkit.runtime.define.return_keys import dotted_name, string_value

ENV_FIELD = (
    "AgentFly: an instance of the decorator's `env_cls`, taken from its pool for this call "
    "(`@reward(env_cls=..., pool_size=...)`)."
)
"""What ``env`` receives in a reward whose decorator passes ``env_cls``."""


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
        if statement_type not in BLOCK_FIELDS:
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


GROUP_REWARD_DECORATORS = frozenset(
    {"rewardkit.group_reward", "rewardkit.runtime.define.group_rewards.group_reward"}
)


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
