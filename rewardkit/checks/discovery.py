"""Find reward definitions in a parsed chunk and collect, in one walk of each, the facts rules check.

Rewards are recognised through the module's imports (:class:`ImportContext`): ``@reward`` and
``@reward(...)`` imported from ``rewardkit`` or ``agentfly`` (any submodule, or a relative
``reward_base`` module inside AgentFly), under an alias or through a module alias, the decorators
named in the config, and subclasses of ``BaseReward`` with their ``call`` method.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import Any

import libcst as cst

from rewardkit.checks.model import ParameterKind, RewardDefinition, RewardParameter, Span
from rewardkit.checks.positions import NodePositions

REWARD_PACKAGES = ("rewardkit", "agentfly")
"""Top-level packages whose ``reward`` and ``BaseReward`` define rewards."""

MAY_DEFINE_REWARDS = re.compile(r"rewardkit|agentfly|BaseReward|reward_base|from\s+\.+\w*reward")
"""Text every module that defines a reward contains (through its imports); others are skipped unparsed."""

CONTEXT_COROUTINE_METHODS = frozenset(
    {"acquire_resource", "release_resource", "end_resource", "close"}
)
"""Coroutine methods of ``rewardkit.Context`` (a test keeps this in sync with the class)."""

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


def dotted_name(expression: cst.CSTNode | None) -> str | None:
    """``a.b.c`` for a ``Name``/``Attribute`` chain, else ``None``."""
    parts: list[str] = []
    while isinstance(expression, cst.Attribute):
        parts.append(expression.attr.value)
        expression = expression.value
    if not isinstance(expression, cst.Name):
        return None
    parts.append(expression.value)
    return ".".join(reversed(parts))


def _is_kit_name(qualified: str, leaf: str) -> bool:
    module, _, name = qualified.rpartition(".")
    if name != leaf or not module:
        return False
    if module.startswith("."):
        return "reward" in module
    return module.split(".", 1)[0] in REWARD_PACKAGES


@dataclass(frozen=True)
class ImportContext:
    """What the module's imports make of names: the part of a definition's meaning outside its text."""

    bindings: tuple[tuple[str, str], ...] = ()
    """(local name, qualified name) for every top-level import, in order."""
    star_modules: tuple[str, ...] = ()
    extra_decorators: tuple[str, ...] = ()

    @cached_property
    def _map(self) -> dict[str, str]:
        return dict(self.bindings)

    def qualify(self, dotted: str) -> str:
        """The qualified name a local dotted name refers to (itself when not imported)."""
        head, sep, rest = dotted.partition(".")
        target = self._map.get(head)
        if target is None:
            for module in self.star_modules:
                if _is_kit_name(f"{module}.{head}", head):
                    return f"{module}.{dotted}"
            return dotted
        return target + sep + rest

    def is_reward_decorator(self, dotted: str) -> bool:
        """Whether ``@dotted`` (or ``@dotted(...)``) makes a reward."""
        qualified = self.qualify(dotted)
        if _is_kit_name(qualified, "reward"):
            return True
        for extra in self.extra_decorators:
            if "." in extra:
                if qualified == extra:
                    return True
            elif dotted == extra or qualified.rsplit(".", 1)[-1] == extra:
                return True
        return False

    def is_base_reward(self, dotted: str) -> bool:
        """Whether a class base refers to ``BaseReward``."""
        return _is_kit_name(self.qualify(dotted), "BaseReward")


def _import_bindings(statement: cst.CSTNode) -> Iterator[tuple[str, str]]:
    if isinstance(statement, cst.Import):
        for alias in statement.names:
            name = dotted_name(alias.name) or ""
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                yield alias.asname.name.value, name
            else:
                head = name.split(".", 1)[0]
                yield head, head
    elif isinstance(statement, cst.ImportFrom):
        module = "." * len(statement.relative) + (dotted_name(statement.module) or "")
        if isinstance(statement.names, cst.ImportStar):
            yield "*", module
            return
        for alias in statement.names:
            name = dotted_name(alias.name) or ""
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            yield local, (module + name if module.endswith(".") else f"{module}.{name}")


def collect_imports(module: cst.Module) -> tuple[tuple[str, str], ...]:
    """Every import binding at the module's top level (also inside top-level ``if``/``try``/``with``)."""
    found: list[tuple[str, str]] = []
    pending: list[cst.CSTNode] = list(reversed(module.body))
    while pending:
        statement = pending.pop()
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                found.extend(_import_bindings(small))
        elif isinstance(statement, (cst.If, cst.Try, cst.TryStar, cst.With, cst.Else, cst.Finally)):
            blocks = [statement.body]
            if isinstance(statement, cst.If) and statement.orelse is not None:
                blocks.append(statement.orelse)  # type: ignore[arg-type]
            if isinstance(statement, (cst.Try, cst.TryStar)):
                blocks.extend(statement.handlers)  # type: ignore[arg-type]
                if statement.orelse is not None:
                    blocks.append(statement.orelse)  # type: ignore[arg-type]
                if statement.finalbody is not None:
                    blocks.append(statement.finalbody)  # type: ignore[arg-type]
            for block in reversed(blocks):
                if isinstance(
                    block, (cst.If, cst.Else, cst.Finally, cst.ExceptHandler, cst.ExceptStarHandler)
                ):
                    pending.append(block)
                elif isinstance(block, cst.IndentedBlock):
                    pending.extend(reversed(block.body))
        elif isinstance(statement, (cst.ExceptHandler, cst.ExceptStarHandler)) and isinstance(
            statement.body, cst.IndentedBlock
        ):
            pending.extend(reversed(statement.body.body))
    return tuple(found)


def build_context(
    bindings: Sequence[tuple[str, str]], extra_decorators: Sequence[str]
) -> ImportContext:
    """An :class:`ImportContext` from a module's import bindings and the configured decorators."""
    plain = tuple((local, qualified) for local, qualified in bindings if local != "*")
    stars = tuple(qualified for local, qualified in bindings if local == "*")
    return ImportContext(plain, stars, tuple(extra_decorators))


# ----------------------------------------------------------------------------- facts


@dataclass
class ReturnFact:
    """A ``return`` of the reward's own body (not of a nested function)."""

    node: cst.Return
    span: Span


@dataclass
class CallFact:
    """A call in the reward's body with what surrounds it."""

    node: cst.Call
    span: Span
    dotted: str | None
    qualified: str | None
    nested: bool
    """Inside a nested function, lambda or class (not run by the reward itself)."""
    parent: cst.CSTNode | None
    assigned_to: str | None = None


@dataclass
class LocalDict:
    """What the body does with a local variable that holds a dict literal (keys followed if literal)."""

    literal: cst.Dict | None = None
    keys: set[str] = field(default_factory=set)
    unknown: bool = False
    """Assigned other values, non-literal keys, ``**`` splats or mutating method calls: keys unknown."""


@dataclass
class RewardFacts:
    """Everything the rules need about one reward function, collected in one walk of its body."""

    definition: RewardDefinition
    function: cst.FunctionDef
    module: cst.Module
    positions: NodePositions
    context: ImportContext
    parameters: tuple[tuple[RewardParameter, cst.Param], ...]
    none_as_zero: bool = False
    returns: list[ReturnFact] = field(default_factory=list)
    calls: list[CallFact] = field(default_factory=list)
    awaited: set[int] = field(default_factory=set)
    """``id()`` of every expression directly under ``await``."""
    awaited_names: set[str] = field(default_factory=set)
    name_uses: dict[str, list[Span]] = field(default_factory=dict)
    local_dicts: dict[str, LocalDict] = field(default_factory=dict)
    bindings: dict[str, list[cst.BaseExpression | None]] = field(default_factory=dict)
    """Values assigned to each plain local name in the body (``None``: unpacked, value unknown);
    for ``x += v`` the ``v``. The add-``reward``-key fix reads them to tell numbers apart."""
    is_generator: bool = False

    def code(self, node: cst.CSTNode) -> str:
        """The source text of a node."""
        return self.module.code_for_node(node)

    def dict_keys(
        self, value: cst.BaseExpression | None
    ) -> tuple[frozenset[str] | None, cst.CSTNode | None]:
        """The literal key set of a returned dict (``None`` if unknown) and the node a fix edits.

        Handles dict displays, ``dict(k=...)`` calls and local variables built from a literal and
        subscript assignments. ``(None, None)`` when the value is not a dict at all.
        """
        if isinstance(value, cst.Dict):
            return literal_dict_keys(value), value
        if isinstance(value, cst.Call) and dotted_name(value.func) == "dict":
            keys = set()
            for arg in value.args:
                if arg.keyword is None:
                    return None, value
                keys.add(arg.keyword.value)
            return frozenset(keys), value
        if isinstance(value, cst.Name):
            local = self.local_dicts.get(value.value)
            if local is not None and local.literal is not None:
                if local.unknown:
                    return None, local.literal
                return frozenset(local.keys), local.literal
        return None, None


def literal_dict_keys(node: cst.Dict) -> frozenset[str] | None:
    """The keys of a dict display when all are string literals, else ``None``."""
    keys = set()
    for element in node.elements:
        if not isinstance(element, cst.DictElement):
            return None
        key = string_value(element.key)
        if key is None:
            return None
        keys.add(key)
    return frozenset(keys)


def string_value(node: cst.CSTNode) -> str | None:
    """The value of a plain string literal (``None`` for f-strings, bytes and other nodes)."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        try:
            value: Any = node.evaluated_value
        except Exception:  # malformed escapes: not a literal we can read
            return None
        return value if isinstance(value, str) else None
    return None


_SKIPPED_FIELDS = frozenset(
    {
        "lpar",
        "rpar",
        "leading_lines",
        "lines_after_decorators",
        "header",
        "footer",
        "semicolon",
        "comma",
        "colon",
        "equal",
        "star",
        "asynchronous",
        "operator",
        "dot",
        "lbrace",
        "rbrace",
        "lbracket",
        "rbracket",
        "newline",
        "trailing_whitespace",
        "whitespace",
        "await_",
        "arrow",
    }
)
_NOT_USES = {
    cst.Attribute: frozenset({"attr"}),
    cst.Arg: frozenset({"keyword"}),
    cst.Param: frozenset({"name"}),
    cst.FunctionDef: frozenset({"name"}),
    cst.ClassDef: frozenset({"name"}),
    cst.Import: frozenset({"names"}),
    cst.ImportFrom: frozenset({"names", "module"}),
    cst.Global: frozenset({"names"}),
    cst.Nonlocal: frozenset({"names"}),
}
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)


def _child_fields(node_type: type) -> tuple[str, ...]:
    names = _CHILD_FIELDS.get(node_type)
    if names is None:
        excluded = _NOT_USES.get(node_type, frozenset())
        names = tuple(
            f.name
            for f in fields(node_type)
            if f.name not in _SKIPPED_FIELDS
            and "whitespace" not in f.name
            and f.name not in excluded
        )
        _CHILD_FIELDS[node_type] = names
    return names


def iter_children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The node's semantic children (no whitespace or punctuation), faster than ``node.children``."""
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            yield value
        elif isinstance(value, (tuple, list)):
            for item in value:
                if isinstance(item, cst.CSTNode):
                    yield item


_DICT_MUTATORS = frozenset({"update", "setdefault", "pop", "popitem", "clear", "__setitem__"})


def collect_facts(facts: RewardFacts) -> RewardFacts:
    """Walk the reward's body once (iteratively: deep nesting is fine) and fill ``facts``."""
    positions = facts.positions
    function = facts.function
    body = function.body
    stack: list[tuple[cst.CSTNode, cst.CSTNode | None, bool]] = [
        (child, function, False) for child in reversed(list(iter_children(body)))
    ]
    local_dicts = facts.local_dicts
    name_uses = facts.name_uses
    while stack:
        node, parent, nested = stack.pop()
        node_type = type(node)
        if node_type is cst.Name:
            name_uses.setdefault(node.value, []).append(positions.span(node))  # type: ignore[attr-defined]
            continue
        if node_type is cst.Return and not nested:
            facts.returns.append(ReturnFact(node, positions.span(node)))  # type: ignore[arg-type]
        elif node_type is cst.Call:
            call_dotted = dotted_name(node.func)  # type: ignore[attr-defined]
            fact = CallFact(
                node,  # type: ignore[arg-type]
                positions.span(node),
                call_dotted,
                facts.context.qualify(call_dotted) if call_dotted else None,
                nested,
                parent,
            )
            if isinstance(parent, (cst.Assign, cst.AnnAssign)) and parent.value is node:
                targets = (
                    [t.target for t in parent.targets]
                    if isinstance(parent, cst.Assign)
                    else [parent.target]
                )
                if len(targets) == 1 and isinstance(targets[0], cst.Name):
                    fact.assigned_to = targets[0].value
            facts.calls.append(fact)
            if call_dotted and not nested:
                owner, _, method = call_dotted.rpartition(".")
                if method in _DICT_MUTATORS and owner in local_dicts:
                    local_dicts[owner].unknown = True
        elif node_type is cst.Await:
            facts.awaited.add(id(node.expression))  # type: ignore[attr-defined]
            if isinstance(node.expression, cst.Name):  # type: ignore[attr-defined]
                facts.awaited_names.add(node.expression.value)  # type: ignore[attr-defined]
        elif (node_type is cst.Yield) and not nested:
            facts.is_generator = True
        elif node_type in (cst.Assign, cst.AnnAssign, cst.AugAssign) and not nested:
            _track_assignment(node, local_dicts, facts.bindings)
        child_nested = nested or node_type in _SCOPES
        for child in reversed(list(iter_children(node))):
            stack.append((child, node, child_nested))
    return facts


def _track_assignment(
    node: cst.CSTNode,
    local_dicts: dict[str, LocalDict],
    bindings: dict[str, list[cst.BaseExpression | None]],
) -> None:
    if isinstance(node, cst.Assign):
        targets = [t.target for t in node.targets]
        value: cst.BaseExpression | None = node.value
    elif isinstance(node, cst.AnnAssign):
        targets = [node.target]
        value = node.value
    else:
        targets = [node.target]  # type: ignore[attr-defined]
        value = None
    for target in targets:
        if isinstance(target, cst.Name):
            if isinstance(node, cst.AugAssign):
                bindings.setdefault(target.value, []).append(node.value)
            elif value is not None:  # `x: float` alone binds nothing
                bindings.setdefault(target.value, []).append(value)
            local = local_dicts.setdefault(target.value, LocalDict())
            if isinstance(value, cst.Dict) and local.literal is None and len(targets) == 1:
                local.literal = value
                keys = literal_dict_keys(value)
                if keys is None:
                    local.unknown = True
                else:
                    local.keys.update(keys)
            else:
                local.unknown = True
        elif isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            local = local_dicts.setdefault(target.value.value, LocalDict())
            key = None
            if len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index):
                key = string_value(target.slice[0].slice.value)
            if key is None or (isinstance(node, cst.AugAssign) and key not in local.keys):
                local.unknown = local.unknown or key is None
            else:
                local.keys.add(key)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                if isinstance(element.value, cst.Name):
                    local_dicts.setdefault(element.value.value, LocalDict()).unknown = True
                    bindings.setdefault(element.value.value, []).append(None)


# ----------------------------------------------------------------------------- discovery


@dataclass
class ClassFacts:
    """A ``BaseReward`` subclass: enough for RK402 (missing ``name`` or ``call``)."""

    node: cst.ClassDef
    span: Span
    name: str | None
    has_name: bool
    call: cst.FunctionDef | None


@dataclass
class ChunkFindings:
    """The rewards of one chunk: facts per reward function and the ``BaseReward`` classes."""

    rewards: list[RewardFacts] = field(default_factory=list)
    classes: list[ClassFacts] = field(default_factory=list)


def _decorator_target(decorator: cst.Decorator) -> tuple[str | None, cst.Call | None]:
    expression = decorator.decorator
    if isinstance(expression, cst.Call):
        return dotted_name(expression.func), expression
    return dotted_name(expression), None


def _keyword_literal(call: cst.Call | None, keyword: str) -> tuple[bool, object]:
    """Whether ``keyword=`` is passed, and its literal value (``...`` when not a literal)."""
    if call is None:
        return False, None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            value = arg.value
            if isinstance(value, cst.Name) and value.value in ("True", "False", "None"):
                return True, {"True": True, "False": False, "None": None}[value.value]
            text = string_value(value)
            return True, text if text is not None else ...
    return False, None


def _parameters(
    function: cst.FunctionDef, positions: NodePositions, skip_first: bool
) -> tuple[tuple[RewardParameter, cst.Param], ...]:
    params = function.params
    ordered: list[tuple[ParameterKind, cst.Param]] = [
        ("positional_only", p) for p in params.posonly_params
    ]
    ordered += [("positional_or_keyword", p) for p in params.params]
    if isinstance(params.star_arg, cst.Param):
        ordered.append(("var_positional", params.star_arg))
    ordered += [("keyword_only", p) for p in params.kwonly_params]
    if params.star_kwarg is not None:
        ordered.append(("var_keyword", params.star_kwarg))
    if skip_first and ordered and ordered[0][0] in ("positional_only", "positional_or_keyword"):
        ordered = ordered[1:]
    result = []
    for kind, param in ordered:
        annotation = None
        if param.annotation is not None:
            annotation = cst.Module([]).code_for_node(param.annotation.annotation)
        result.append(
            (
                RewardParameter(
                    name=param.name.value,
                    kind=kind,
                    has_default=param.default is not None,
                    span=positions.span(param.name),
                    annotation=annotation,
                ),
                param,
            )
        )
    return tuple(result)


def _parameters_span(function: cst.FunctionDef, positions: NodePositions) -> Span:
    """From just after ``(`` to just before ``)``."""
    start_line, start_column = positions.start(function.whitespace_before_params)
    end_line, end_column = positions.end(function.params)
    return Span(start_line, start_column, end_line, end_column)


def _reward_facts(
    function: cst.FunctionDef,
    module: cst.Module,
    positions: NodePositions,
    context: ImportContext,
    *,
    name: str | None,
    class_node: cst.ClassDef | None = None,
    none_as_zero: bool = False,
    auto_register: bool = True,
    own_fields: tuple[tuple[str, str], ...] = (),
) -> RewardFacts:
    """The definition of a reward function (or of a class's ``call``) and its facts, collected."""
    parameters = _parameters(function, positions, skip_first=class_node is not None)
    outer: cst.FunctionDef | cst.ClassDef = class_node if class_node is not None else function
    start = positions.span(outer)
    start_line, start_column = positions.start(outer.decorators[0] if outer.decorators else outer)
    definition = RewardDefinition(
        name=name,
        function_name=function.name.value,
        is_async=function.asynchronous is not None,
        kind="class" if class_node is not None else "function",
        class_name=class_node.name.value if class_node is not None else None,
        span=positions.span(outer.name),
        definition_span=Span(start_line, start_column, start.end_line, start.end_column),
        parameters=tuple(p for p, _ in parameters),
        parameters_span=_parameters_span(function, positions),
        registered=auto_register,
        own_fields=own_fields,
    )
    facts = RewardFacts(
        definition=definition,
        function=function,
        module=module,
        positions=positions,
        context=context,
        parameters=parameters,
        none_as_zero=none_as_zero,
    )
    return collect_facts(facts)


def _nested_blocks(statement: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Statements nested in a compound statement's blocks (not in expressions)."""
    for child in iter_children(statement):
        if isinstance(child, cst.IndentedBlock):
            yield from child.body
        elif isinstance(
            child,
            (
                cst.Else,
                cst.Finally,
                cst.ExceptHandler,
                cst.ExceptStarHandler,
                cst.If,
                cst.MatchCase,
            ),
        ):
            yield child


def find_rewards(module: cst.Module, context: ImportContext) -> ChunkFindings:
    """The reward functions and ``BaseReward`` classes of a chunk, with their facts collected."""
    findings = ChunkFindings()
    candidates: list[tuple[str, cst.CSTNode, Any, bool]] = []
    pending: list[tuple[cst.CSTNode, bool]] = [
        (statement, False) for statement in reversed(module.body)
    ]
    while pending:
        statement, in_function = pending.pop()
        if isinstance(statement, cst.FunctionDef):
            for decorator in statement.decorators:
                target, call = _decorator_target(decorator)
                if target is not None and context.is_reward_decorator(target):
                    candidates.append(("function", statement, call, in_function))
                    break
        elif isinstance(statement, cst.ClassDef) and any(
            (base := dotted_name(arg.value)) is not None
            and arg.keyword is None
            and context.is_base_reward(base)
            for arg in statement.bases
        ):
            candidates.append(("class", statement, None, in_function))
            continue
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            continue
        inner = in_function or isinstance(statement, cst.FunctionDef)
        pending.extend((child, inner) for child in reversed(list(_nested_blocks(statement))))
    if not candidates:
        return findings
    positions = NodePositions(module)
    for kind, node, call, in_function in candidates:
        found = len(findings.rewards)
        if kind == "function":
            findings.rewards.append(_function_facts(node, call, module, positions, context))
        else:
            _class_facts(node, module, positions, context, findings)
        if in_function:
            for facts in findings.rewards[found:]:
                facts.definition = replace(facts.definition, module_level=False)
    return findings


def _function_facts(
    function: cst.FunctionDef,
    call: cst.Call | None,
    module: cst.Module,
    positions: NodePositions,
    context: ImportContext,
) -> RewardFacts:
    name: str | None = function.name.value
    has_name, value = _keyword_literal(call, "name")
    if has_name:
        name = value if isinstance(value, str) else None
    elif call is not None and call.args and call.args[0].keyword is None:
        name = string_value(call.args[0].value)
    _, none_as_zero = _keyword_literal(call, "none_as_zero")
    _, auto_register = _keyword_literal(call, "auto_register")
    has_env, env_cls = _keyword_literal(call, "env_cls")
    return _reward_facts(
        function,
        module,
        positions,
        context,
        name=name,
        none_as_zero=none_as_zero is True,
        auto_register=auto_register is not False,
        own_fields=(("env", ENV_FIELD),) if has_env and env_cls is not None else (),
    )


def _class_facts(
    node: cst.ClassDef,
    module: cst.Module,
    positions: NodePositions,
    context: ImportContext,
    findings: ChunkFindings,
) -> None:
    name: str | None = node.name.value
    has_name = False
    call_method: cst.FunctionDef | None = None
    none_as_zero = False
    statements = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    for statement in statements:
        if isinstance(statement, cst.FunctionDef) and statement.name.value == "call":
            call_method = statement
        elif isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                targets: list[cst.BaseExpression] = []
                value = None
                if isinstance(small, cst.Assign):
                    targets = [t.target for t in small.targets]
                    value = small.value
                elif isinstance(small, cst.AnnAssign) and small.value is not None:
                    targets = [small.target]
                    value = small.value
                for target in targets:
                    if isinstance(target, cst.Name) and target.value == "name":
                        has_name = True
                        name = string_value(value) if value is not None else None
                    elif isinstance(target, cst.Name) and target.value == "none_as_zero":
                        none_as_zero = isinstance(value, cst.Name) and value.value == "True"
    auto_register = True
    for arg in node.bases + node.keywords:
        if arg.keyword is not None and arg.keyword.value == "auto_register":
            auto_register = not (isinstance(arg.value, cst.Name) and arg.value.value == "False")
    findings.classes.append(
        ClassFacts(
            node,
            positions.span(node.name),
            name if has_name else node.name.value,
            has_name,
            call_method,
        )
    )
    if call_method is not None:
        findings.rewards.append(
            _reward_facts(
                call_method,
                module,
                positions,
                context,
                name=name,
                class_node=node,
                none_as_zero=none_as_zero,
                auto_register=auto_register,
            )
        )
