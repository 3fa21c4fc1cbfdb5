"""Read, from a function's source, which keys its ``return`` statements give: a pure ``ast`` reader.

A reward's result schema (``rewardkit.runtime.define.schema``) must be known before its first call. When the
definition does not declare it, this reader works it out from the returns: a number (or a
comparison, arithmetic, ``float(...)``...) gives no extras; a dict display, ``dict(k=...)``,
``RewardResult(x, {...})`` or a local dict built from one with literal subscript stores gives
its keys; a conditional expression, a local name or a call of a plain function or of an
imported module's function (followed into its own source, a few levels deep) gives the union of
what each can be. A parameter annotated as a number or with a number default (verl's
``score=1.0``) is a number, and a ``-> float`` return annotation settles returns it cannot read.
Anything else (a call it cannot follow, an ``await``, another parameter) makes the answer
unknown, with the reason: the caller must then ask for the keys to be declared. It imports nothing of rewardkit, so any layer may use it.

It is deliberately smaller than the checks engine's one-pass walk (``rewardkit.checks``): that
walk serves editor diagnostics, tolerates unknowns and collects much more; this one answers a
single question, must say "unknown" rather than guess, and follows calls across functions.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal

Kind = Literal["number", "text", "other", "any"]
"""What an extra's values are: numbers (bools included), text, other values that are not numbers
(containers), or anything (unknown)."""

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef

NUMBER_CALLS = frozenset(
    {"float", "int", "bool", "round", "abs", "len", "sum", "min", "max", "pow"}
)
"""Builtins whose result, when a reward returns it, is a number (``min``/``max`` of dicts fail)."""
TEXT_CALLS = frozenset({"str", "repr", "format"})
_CONTAINERS = (ast.Dict, ast.List, ast.Tuple, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_SAFE_METHODS = frozenset({"get", "items", "keys", "values", "copy", "__getitem__", "__contains__"})


class Unknown(Exception):
    """The returned keys cannot be known statically; ``reason`` says which return and why."""

    def __init__(self, reason: str, line: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line


@dataclass
class Shape:
    """What one returned expression can be: ``keys`` (ordered extras, ``reward`` excluded) with
    each key's ``kind``; a number has no keys."""

    keys: dict[str, Kind] = field(default_factory=dict)

    def merge(self, other: Shape) -> None:
        """Union with ``other`` (a key's kind becomes ``any`` where the two disagree)."""
        for key, kind in other.keys.items():
            mine = self.keys.get(key)
            self.keys[key] = kind if mine is None else join_kinds({mine, kind})


Follow = Callable[[str, int], "Shape | None"]
"""Resolves a called name (at a depth) to the shape its function returns, ``None`` if it cannot."""


def own_nodes(function: FunctionNode | ast.Lambda) -> Iterator[ast.AST]:
    """Every node of ``function``'s body that runs in its own scope (not in nested functions,
    lambdas or classes)."""
    body = [function.body] if isinstance(function, ast.Lambda) else list(function.body)
    stack: list[ast.AST] = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, _SCOPES):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def string_value(node: ast.AST | None) -> str | None:
    """The value of a plain string literal (``None`` for f-strings, bytes and other nodes)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def dotted_name(expression: ast.AST | None) -> str | None:
    """``a.b.c`` for a ``Name``/``Attribute`` chain, else ``None`` (shared with ``rewardkit.checks``)."""
    parts: list[str] = []
    while isinstance(expression, ast.Attribute):
        parts.append(expression.attr)
        expression = expression.value
    if not isinstance(expression, ast.Name):
        return None
    parts.append(expression.id)
    return ".".join(reversed(parts))


class _Reader:
    """Reads one function: its local bindings, then each return's shape."""

    def __init__(self, function: FunctionNode | ast.Lambda, follow: Follow, depth: int) -> None:
        self.function = function
        self.follow = follow
        self.depth = depth
        self.annotated: Kind = (
            "any" if isinstance(function, ast.Lambda) else annotated_kind(function.returns)
        )
        """The kind of every extra a ``-> dict[str, float]`` (or ``str``) annotation promises."""
        self.number_returns = not isinstance(function, ast.Lambda) and is_number_annotation(
            function.returns
        )
        """``-> float`` (``int``, ``bool``, optional or not): the function says it returns a number."""
        self.parameters = {arg.arg for arg in _all_arguments(function.args)}
        self.number_parameters = number_parameters(function.args)
        """Parameters annotated as a number, or unannotated with a number default (``score=1.0``)."""
        arguments = function.args
        self.packed = {arg.arg for arg in (arguments.vararg, arguments.kwarg) if arg is not None}
        """``*args`` and ``**kwargs``: a tuple and a dict."""
        self.bindings: dict[str, list[ast.expr | None]] = {}
        self.stored_keys: dict[str, dict[str, ast.expr]] = {}
        self.opaque: set[str] = set()
        """Locals whose dict contents cannot be followed (mutated by calls, aliased, deleted)."""
        self._bind()

    def _bind(self) -> None:
        for node in own_nodes(self.function):
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                value = node.value
                for target in targets:
                    self._bind_target(target, value, augmented=isinstance(node, ast.AugAssign))
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                self._bind_target(node.target, None)
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    if item.optional_vars is not None:
                        self._bind_target(item.optional_vars, None)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                self.bindings.setdefault(node.name, []).append(None)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    self.bindings.setdefault((alias.asname or alias.name).split(".")[0], []).append(
                        None
                    )
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                for name in node.names:
                    self.bindings.setdefault(name, []).append(None)
            elif isinstance(node, ast.Delete):
                for target in node.targets:
                    owner = target.value if isinstance(target, ast.Subscript) else target
                    if isinstance(owner, ast.Name):
                        self.opaque.add(owner.id)
            elif isinstance(node, ast.Call):
                self._note_call(node)

    def _bind_target(
        self, target: ast.expr, value: ast.expr | None, *, augmented: bool = False
    ) -> None:
        if isinstance(target, ast.Name):
            if augmented and value is not None and not isinstance(value, ast.Dict):
                # x += number keeps x a number; x |= {...} adds keys: followed as unknown
                self.bindings.setdefault(target.id, []).append(ast.Constant(0.0))
                return
            self.bindings.setdefault(target.id, []).append(None if augmented else value)
            if isinstance(value, ast.Name):
                self.opaque.add(value.id)  # an alias: stores through it are not followed
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            key = string_value(target.slice)
            if key is None:
                self.opaque.add(target.value.id)
            elif value is not None:
                self.stored_keys.setdefault(target.value.id, {}).setdefault(key, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._bind_target(
                    element.value if isinstance(element, ast.Starred) else element, None
                )
        elif isinstance(target, ast.Starred):
            self._bind_target(target.value, None)

    def _note_call(self, call: ast.Call) -> None:
        """A local dict passed to a call, or whose mutating method is called, is opaque."""
        func = call.func
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.attr not in _SAFE_METHODS
        ):
            self.opaque.add(func.value.id)
        for argument in (*call.args, *(keyword.value for keyword in call.keywords)):
            inner = argument.value if isinstance(argument, ast.Starred) else argument
            if isinstance(inner, ast.Name):
                self.opaque.add(inner.id)

    # -- shapes --------------------------------------------------------------------------

    def returns(self) -> Shape:
        """The union of every return's shape; raises ``Unknown`` naming the first unreadable one."""
        if isinstance(self.function, ast.Lambda):
            return self.shape(self.function.body, frozenset())
        shape = Shape()
        for node in own_nodes(self.function):
            if isinstance(node, (ast.Yield, ast.YieldFrom)):
                raise Unknown("it is a generator", getattr(node, "lineno", None))
            if isinstance(node, ast.Return) and node.value is not None:
                try:
                    shape.merge(self.shape(node.value, frozenset()))
                except Unknown:
                    if not self.number_returns:  # `-> float` settles what cannot be read
                        raise
        return shape

    def shape(self, node: ast.expr, seen: frozenset[str]) -> Shape:
        """What ``node``, returned, can be."""
        if is_number(node):
            return Shape()
        if isinstance(node, ast.Constant) and node.value is None:
            return Shape()  # None: the runtime's 0.0 (none_as_zero) or a failed sample
        if isinstance(node, ast.Dict):
            return self.dict_shape(node, seen)
        if isinstance(node, ast.IfExp):
            shape = self.shape(node.body, seen)
            shape.merge(self.shape(node.orelse, seen))
            return shape
        if isinstance(node, ast.Call):
            return self.call_shape(node, seen)
        if (dotted_name(node) or "").rpartition(".")[2] == "NOT_APPLICABLE":
            # rewardkit.runtime.define.results.NOT_APPLICABLE: a row of fills, like a failure
            return Shape()
        if isinstance(node, ast.Name):
            return self.name_shape(node, seen)
        raise Unknown(f"it returns `{_text(node)}`", getattr(node, "lineno", None))

    def dict_shape(
        self, node: ast.Dict, seen: frozenset[str], stores: dict[str, ast.expr] | None = None
    ) -> Shape:
        shape = Shape()
        for key, value in (*zip(node.keys, node.values), *(stores or {}).items()):
            name = key if isinstance(key, str) else string_value(key)
            if name is None:
                raise Unknown(
                    f"a returned dict has a key that is not a string literal: `{_text(node)}`",
                    node.lineno,
                )
            if name != "reward":
                shape.merge(Shape({name: self.kind(value, seen)}))
        return shape

    def call_shape(self, node: ast.Call, seen: frozenset[str]) -> Shape:
        called = dotted_name(node.func)
        if called == "dict" and not node.args and all(keyword.arg for keyword in node.keywords):
            shape = Shape()
            for keyword in node.keywords:
                if keyword.arg != "reward":
                    shape.merge(Shape({keyword.arg: self.kind(keyword.value, seen)}))  # type: ignore[dict-item]
            return shape
        if called is not None and called.rpartition(".")[2] in (
            "RewardResult",
            "not_applicable",
            "NotApplicable",
        ):
            extras = node.args[1] if len(node.args) > 1 else None
            extras = next((k.value for k in node.keywords if k.arg == "extras"), extras)
            if extras is None or (isinstance(extras, ast.Constant) and extras.value is None):
                return Shape()
            if isinstance(extras, ast.Dict):
                return self.dict_shape(extras, seen)
        root = None if called is None else called.split(".")[0]
        if (
            called is not None
            and root not in self.bindings
            and root not in self.parameters
            and self.depth > 0
        ):
            followed = self.follow(called, self.depth - 1)
            if followed is not None:
                return followed
        raise Unknown(
            f"it returns `{_text(node)}`, a call whose result cannot be read", node.lineno
        )

    def name_shape(self, node: ast.Name, seen: frozenset[str]) -> Shape:
        name = node.id
        values = self.bindings.get(name)
        if name in self.number_parameters and not values:
            return Shape()  # `score: float = 1.0`, or `score=1.0`: a number
        if name in seen:
            raise Unknown(f"it returns `{name}`, whose value refers to itself", node.lineno)
        if name in self.parameters and name not in self.number_parameters:
            raise Unknown(
                f"it returns the parameter `{name}`, whose value the caller passes; if it is a number, "
                f"annotate it (`{name}: float`) or the return (`-> float`)",
                node.lineno,
            )
        if not values:
            raise Unknown(
                f"it returns `{name}`, a name not assigned in the function (a global?)", node.lineno
            )
        if any(value is None for value in values):
            raise Unknown(
                f"it returns `{name}`, bound by a loop, an unpacking, `with`, `except`, an import or an "
                "augmented assignment, whose value cannot be read; if it is a number, annotate the return "
                "(`-> float`)",
                node.lineno,
            )
        stores = self.stored_keys.get(name)
        if stores and (
            name in self.opaque or len(values) != 1 or not isinstance(values[0], ast.Dict)
        ):
            raise Unknown(
                f"it returns `{name}`, a dict filled in ways that cannot be followed", node.lineno
            )
        if name in self.opaque and any(isinstance(value, ast.Dict) for value in values):
            raise Unknown(f"it returns `{name}`, a dict changed by calls or aliases", node.lineno)
        shape = Shape()
        for value in values:
            if stores and isinstance(value, ast.Dict):
                shape.merge(self.dict_shape(value, seen | {name}, stores))
            else:
                shape.merge(self.shape(value, seen | {name}))  # type: ignore[arg-type]
        return shape

    def kind(self, value: ast.expr, seen: frozenset[str]) -> Kind:
        """What an extra's value is, as far as the source (or the return annotation) says."""
        kind = self._kind(value, seen)
        return self.annotated if kind == "any" else kind

    def _kind(self, value: ast.expr, seen: frozenset[str]) -> Kind:
        if is_number(value):
            return "number"
        if is_text(value):
            return "text"
        if isinstance(value, _CONTAINERS) or (
            isinstance(value, ast.Name) and value.id in self.packed
        ):
            return "other"
        if isinstance(value, ast.IfExp):
            return join_kinds({self._kind(value.body, seen), self._kind(value.orelse, seen)})
        if (
            isinstance(value, ast.Name)
            and value.id in self.number_parameters
            and not self.bindings.get(value.id)
        ):
            return "number"
        if isinstance(value, ast.Name) and value.id not in seen:
            values = self.bindings.get(value.id)
            if values and None not in values and value.id not in self.parameters:
                return join_kinds({self._kind(item, seen | {value.id}) for item in values})  # type: ignore[arg-type]
        return "any"


def join_kinds(kinds: set[Kind]) -> Kind:
    """The kind of a value that can be any of ``kinds``. A value that is sometimes text or a
    container and never known to be a number (``words[-1] if words else ""``) is ``other``: it is
    no number column, whatever the unknown branch holds."""
    if len(kinds) == 1:
        return next(iter(kinds))
    return "other" if "number" not in kinds and kinds & {"text", "other"} else "any"


def is_number(node: ast.expr) -> bool:
    """Whether ``node`` certainly evaluates to a number (a bool included) when a reward returns it."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (bool, int, float))
    if isinstance(node, (ast.Compare, ast.UnaryOp)):
        return True
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, (ast.BitOr, ast.Add, ast.Mod)):  # dict | dict, str + str, "%s" % x
            return is_number(node.left) and is_number(node.right)
        return not (is_text(node.left) or is_text(node.right))
    if isinstance(node, ast.Call):
        called = dotted_name(node.func)
        if called is None:
            return False
        return called in NUMBER_CALLS or called.startswith("math.") or called.endswith(".item")
    if isinstance(node, ast.IfExp):
        return is_number(node.body) and is_number(node.orelse)
    return False


def is_text(node: ast.expr) -> bool:
    """Whether ``node`` certainly evaluates to a string."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.Call):
        called = dotted_name(node.func)
        return called in TEXT_CALLS or (
            called is not None and called.endswith((".join", ".format", ".strip"))
        )
    if isinstance(node, ast.IfExp):
        return is_text(node.body) and is_text(node.orelse)
    return False


_MAPPINGS = frozenset(
    {"dict", "Dict", "Mapping", "typing.Dict", "typing.Mapping", "collections.abc.Mapping"}
)
_NUMBER_NAMES = frozenset({"float", "int", "bool"})
_OPTIONALS = frozenset({"Optional", "Union", "typing.Optional", "typing.Union"})


def annotated_kind(annotation: ast.expr | None) -> Kind:
    """The kind of every value of a ``dict[str, V]`` return annotation (``V`` a number type or
    ``str``; a string annotation is read too); ``any`` otherwise."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return "any"
    if not isinstance(annotation, ast.Subscript) or dotted_name(annotation.value) not in _MAPPINGS:
        return "any"
    arguments = annotation.slice
    if not isinstance(arguments, ast.Tuple) or len(arguments.elts) != 2:
        return "any"
    value = dotted_name(arguments.elts[1])
    if value in _NUMBER_NAMES:
        return "number"
    return "text" if value == "str" else "any"


def is_number_annotation(annotation: ast.expr | None) -> bool:
    """Whether an annotation says "a number": ``float``, ``int``, ``bool``, optional or in a
    union of them (``float | None``, ``Optional[float]``, ``"float"``)."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return False
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        parts = [annotation.left, annotation.right]
    elif isinstance(annotation, ast.Subscript) and dotted_name(annotation.value) in _OPTIONALS:
        inner = annotation.slice
        parts = list(inner.elts) if isinstance(inner, ast.Tuple) else [inner]
    else:
        return dotted_name(annotation) in _NUMBER_NAMES
    numbers = [
        part for part in parts if not (isinstance(part, ast.Constant) and part.value is None)
    ]
    return bool(numbers) and all(is_number_annotation(part) for part in numbers)


def number_parameters(arguments: ast.arguments) -> set[str]:
    """The parameters that hold a number: annotated so, or unannotated with a number default."""
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults: dict[str, ast.expr | None] = dict.fromkeys(arg.arg for arg in positional)
    defaults.update(
        zip(
            (arg.arg for arg in positional[len(positional) - len(arguments.defaults) :]),
            arguments.defaults,
        )
    )
    defaults.update(zip((arg.arg for arg in arguments.kwonlyargs), arguments.kw_defaults))
    numbers = set()
    for arg in (*positional, *arguments.kwonlyargs):
        default = defaults.get(arg.arg)
        if is_number_annotation(arg.annotation) or (
            arg.annotation is None and isinstance(default, ast.Constant) and is_number(default)
        ):
            numbers.add(arg.arg)
    return numbers


def _all_arguments(arguments: ast.arguments) -> Iterator[ast.arg]:
    yield from arguments.posonlyargs
    yield from arguments.args
    yield from arguments.kwonlyargs
    if arguments.vararg is not None:
        yield arguments.vararg
    if arguments.kwarg is not None:
        yield arguments.kwarg


def _text(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 60 else text[:57] + "..."


def returned_shape(
    function: FunctionNode | ast.Lambda, follow: Follow | None = None, *, depth: int = 3
) -> Shape:
    """The extras keys (and their kinds) ``function``'s returns give, in source order.

    ``follow(name, depth)`` resolves a call of a plain (or ``module.function``) name to the shape of what that function
    returns (``None``: cannot); without it, such calls are unknown. Raises ``Unknown`` with the
    reason and line when any return cannot be read.
    """
    return _Reader(function, follow or (lambda name, depth: None), depth).returns()
