"""The libcst transformations behind the rules' fixes: concrete syntax trees that keep every
comment, blank line, quote and trailing comma of the code they do not change.

Only the top-level statement that holds a fix's node is parsed (a reward's definition, found by
:func:`rewardkit.checks.splitter.statement_starts`), so applying a fix costs a parse of that
definition, not of the module, and once for all the fixes of a file (:class:`FixSource`).
Renames, ``await``, ``float`` and ``async`` are mostly applied as plain text instead
(:mod:`rewardkit.checks.text_transforms`, where that gives the same text). Each transform finds its node by the span the :mod:`ast`
analysis recorded (libcst gives the same code-point positions) and returns the statement's new
text; :func:`apply_transform` splices it back. Importing this module imports libcst: the rest of
the checks engine never does (:mod:`rewardkit.checks.fixer` imports it when a fix is asked for).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from functools import cached_property

import libcst as cst
from libcst.metadata import (
    CodeRange,
    ExpressionContextProvider,
    MetadataWrapper,
    PositionProvider,
    Scope,
    ScopeProvider,
)

from rewardkit.checks.fix_source import FixSource
from rewardkit.checks.fixes import (
    ADD_REWARD_KEY,
    AWAIT,
    FLOAT,
    MAKE_ASYNC,
    PLACEHOLDER_MARKER,
    RENAME,
    REWARD_PLACEHOLDER,
)
from rewardkit.checks.model import Span, Transform
from rewardkit.checks.positions import LINE_BREAK

_VISITOR_NAMES: dict[type, tuple[str, ...]] = {}


class _VisitorsFoundOnce:
    """libcst finds a batchable provider's ``visit_*``/``leave_*`` methods with
    ``inspect.getmembers`` at every resolve: half the cost of the scope analysis of a small
    definition. A class's methods do not change: find them once per class."""

    def get_visitors(self) -> Mapping[str, Callable[..., object]]:
        names = _VISITOR_NAMES.get(type(self))
        if names is None:
            names = tuple(super().get_visitors())  # type: ignore[misc]
            _VISITOR_NAMES[type(self)] = names
        return {name: getattr(self, name) for name in names}


class _ExpressionContexts(_VisitorsFoundOnce, ExpressionContextProvider):
    """libcst's expression contexts (load, store, del), its visitor methods found once."""


class _Scopes(_VisitorsFoundOnce, ScopeProvider):
    """libcst's scope analysis over :class:`_ExpressionContexts`."""

    METADATA_DEPENDENCIES = (_ExpressionContexts,)

    @classmethod
    def get_inherited_dependencies(cls) -> Collection[type]:  # type: ignore[override]
        """Not libcst's own expression contexts too (computing them twice)."""
        return frozenset(cls.METADATA_DEPENDENCIES)

    def get_metadata(self, key: type, node: cst.CSTNode, default: object = None) -> object:  # type: ignore[override]
        if key is ExpressionContextProvider:  # what libcst's scope visitor asks for
            return self.metadata[_ExpressionContexts].get(node, default)
        return super().get_metadata(key, node, default)


class TransformError(Exception):
    """A fix that cannot be applied to this text (its node is not where the analysis saw it, or
    libcst does not parse the definition)."""


class _Statement:
    """The top-level statement(s) holding a line, or one simple statement in them (after a
    ``prefix`` that opens a block at its indentation), parsed by libcst, with their positions."""

    def __init__(
        self, file: FixSource, start: int, end: int, prefix: str = "", value: Span | None = None
    ) -> None:
        self.start, self.end, self.prefix = start, end, prefix
        self.value = value
        """Where the value of the one simple statement parsed is (a ``return`` or assignment's)."""
        self.first_line = file.positions.position(start)[0] - prefix.count("\n")
        self.source = source = file.text
        text = prefix + source[self.start : self.end]
        try:
            self.module = cst.parse_module(text)
        except (cst.ParserSyntaxError, RecursionError) as error:
            raise TransformError(f"libcst cannot parse this definition: {error}") from None
        code = self.module.code
        if not text.startswith(code):
            raise TransformError("libcst does not give this definition back byte for byte")
        self.lost = text[len(code) :]  # libcst drops a CR-only file's last "\r": put back
        self.wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)

    @cached_property
    def positions(self) -> dict[cst.CSTNode, CodeRange]:
        """Where each node is (computed on first use: a pass as costly as writing the code out)."""
        return dict(self.wrapper.resolve(PositionProvider))

    @cached_property
    def _small(self) -> cst.BaseSmallStatement | None:
        """The one small statement of a simple statement parsed alone (``None`` otherwise)."""
        block = self.module.body[0].body if self.prefix and len(self.module.body) == 1 else None
        lines = getattr(block, "body", ())
        if len(lines) != 1 or not isinstance(lines[0], cst.SimpleStatementLine):
            return None
        return lines[0].body[0] if len(lines[0].body) == 1 else None

    def _value(self, span: Span) -> cst.CSTNode | None:
        """The value of the one small statement when it is at ``span``: the outermost
        expression there, found without computing positions."""
        if self.value != span or self._small is None:
            return None
        return getattr(self._small, "value", None)

    def find(self, span: Span, kinds: tuple[type[cst.CSTNode], ...]) -> cst.CSTNode:
        """The outermost node of one of ``kinds`` exactly at ``span`` (module coordinates)."""
        value = self._value(span)
        if isinstance(value, kinds):
            return value
        shift = self.first_line - 1
        wanted = ((span.line - shift, span.column), (span.end_line - shift, span.end_column))
        found = [
            node
            for node, where in self.positions.items()
            if isinstance(node, kinds)
            and ((where.start.line, where.start.column), (where.end.line, where.end.column))
            == wanted
        ]
        if not found:
            names = "/".join(kind.__name__ for kind in kinds)
            raise TransformError(f"no {names} at {span.line}:{span.column + 1}")
        return _outermost(found)

    def spliced(self, module: cst.Module) -> str:
        """The whole source with this statement replaced by ``module``'s code."""
        code = (module.code + self.lost)[len(self.prefix) :]
        return self.source[: self.start] + code + self.source[self.end :]


def _outermost(nodes: Sequence[cst.CSTNode]) -> cst.CSTNode:
    """The node among ``nodes`` (all at the same range) that contains the others."""
    if len(nodes) == 1:
        return nodes[0]
    inner: set[int] = set()
    for node in nodes:
        for child in node.children:
            inner.add(id(child))
    outer = [node for node in nodes if id(node) not in inner]
    return outer[0] if outer else nodes[0]


class _Replace(cst.CSTTransformer):
    """Replace nodes (found by identity) by what ``replace`` makes of their updated version."""

    def __init__(self, targets: set[int], replace: Callable[[cst.CSTNode], cst.CSTNode]) -> None:
        super().__init__()
        self.targets = targets
        self.replace = replace

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> cst.CSTNode:  # type: ignore[override]
        if id(original_node) in self.targets:
            return self.replace(updated_node)
        return updated_node


def _replace_one(
    statement: _Statement, node: cst.CSTNode, replace: Callable[[cst.CSTNode], cst.CSTNode]
) -> str:
    small = statement._small
    if small is not None and node is getattr(small, "value", None):  # no visit of the tree
        if_block = statement.module.body[0]
        line = if_block.body.body[0]  # type: ignore[attr-defined]
        line = line.with_changes(body=[small.with_changes(value=replace(node))])
        block = if_block.body.with_changes(body=[line])  # type: ignore[attr-defined]
        module = statement.module.with_changes(body=[if_block.with_changes(body=block)])
    else:
        module = statement.module.visit(_Replace({id(node)}, replace))
    return statement.spliced(module)


# -- the transforms ---------------------------------------------------------------------------


def _parameter(
    statement: _Statement, scopes: Mapping[cst.CSTNode, Scope | None], transform: Transform
) -> cst.Param:
    """The parameter a rename is about: the only one of its name in a function of its name
    (found from the scope analysis, without computing positions), else the one at its span."""
    name, function = transform.option("name"), transform.option("function")
    candidates = [
        node
        for node, scope in scopes.items()
        if isinstance(node, cst.Param)
        and node.name.value == name
        and isinstance(getattr(scope, "node", None), cst.FunctionDef)
        and scope.node.name.value == function  # type: ignore[union-attr]
    ]
    if len(candidates) == 1:
        return candidates[0]
    target = statement.find(transform.span, (cst.Name,))
    for node in statement.positions:
        if isinstance(node, cst.Param) and node.name is target and target.value == name:  # type: ignore[attr-defined]
            return node
    raise TransformError(f"no parameter `{name}` at {transform.span.line}")


def rename(statement: _Statement, transform: Transform) -> str:
    """Rename a parameter and the uses of it that libcst's scope analysis resolves to it."""
    name, new_name = str(transform.option("name")), str(transform.option("to"))
    scopes = statement.wrapper.resolve(_Scopes)
    parameter = _parameter(statement, scopes, transform)
    scope = scopes.get(parameter)
    if scope is None:
        raise TransformError(f"no scope for parameter `{name}`")
    if _binds_or_reads(scopes, scope, new_name):
        raise TransformError(
            f"`{new_name}` is already a name in this function: the rename would merge two variables"
        )
    targets = {id(parameter.name)}
    for assignment in scope.assignments[name]:
        if getattr(assignment, "node", None) is parameter:
            targets.update(
                id(access.node)
                for access in assignment.references
                if isinstance(access.node, cst.Name) and access.node.value == name
            )
    module = statement.module.visit(
        _Replace(targets, lambda node: node.with_changes(value=new_name))  # type: ignore[attr-defined]
    )
    return statement.spliced(module)


def _binds_or_reads(scopes: Mapping[cst.CSTNode, Scope | None], function: Scope, name: str) -> bool:
    """Whether ``name`` is bound or read in ``function``'s scope or a scope nested in it."""
    for scope in set(scopes.values()):
        inner = scope
        while inner is not None and inner is not function:
            parent = inner.parent
            inner = None if parent is inner else parent
        if inner is function and (name in scope.assignments or name in scope.accesses):
            return True
    return False


def _separator(
    first: cst.BaseParenthesizableWhitespace,
) -> tuple[cst.BaseParenthesizableWhitespace, cst.BaseParenthesizableWhitespace]:
    """(the whitespace after the opening bracket, the whitespace after the new entry's comma)
    that put a new first entry in the style of the existing ones: on a line of its own in a
    multi-line display (comments above the old first entry stay with it), else ``, ``."""
    if isinstance(first, cst.ParenthesizedWhitespace):
        after_bracket = first.with_changes(empty_lines=())
        after_comma = first.with_changes(first_line=cst.TrailingWhitespace())
        return after_bracket, after_comma
    return first, cst.SimpleWhitespace(" ")


def _quote(elements: Sequence[cst.BaseDictElement]) -> str:
    """The quote the dict's string keys use (``"`` when it has none)."""
    for element in elements:
        key = getattr(element, "key", None)
        if isinstance(key, cst.SimpleString):
            return key.quote[0]
    return '"'


def _plain(whitespace: cst.BaseParenthesizableWhitespace) -> cst.BaseParenthesizableWhitespace:
    """``whitespace`` without the comment ending its first line and the blank lines after it."""
    if isinstance(whitespace, cst.ParenthesizedWhitespace):
        return whitespace.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=())
    return whitespace


def _inserted_after(
    items: Sequence[cst.CSTNode],
    index: int,
    entry: cst.CSTNode,
    opening: cst.BaseParenthesizableWhitespace,
) -> list[cst.CSTNode]:
    """``items`` (dict elements or call arguments) with ``entry`` right after ``items[index]``,
    separated as the others are (a comment ending the line of ``items[index]`` stays there)."""
    before, rest = items[index], list(items[index + 1 :])
    comma = before.comma  # type: ignore[attr-defined]
    if rest and isinstance(comma, cst.Comma):
        separator = comma.with_changes(whitespace_after=_plain(comma.whitespace_after))
        return [*items[:index], before, entry.with_changes(comma=separator), *rest]
    others = [item.comma for item in items[:index] if isinstance(item.comma, cst.Comma)]  # type: ignore[attr-defined]
    if others:
        separator = cst.Comma(whitespace_after=_plain(others[-1].whitespace_after))
    else:
        separator = cst.Comma(whitespace_after=_plain(_separator(opening)[1]))
    return [*items[:index], before.with_changes(comma=separator), entry.with_changes(comma=comma)]


def _with_reward_entry(
    node: cst.CSTNode, value: cst.BaseExpression, after: int | None
) -> cst.CSTNode:
    """``node`` (a dict display or ``dict(...)`` call) with a ``reward`` entry valued ``value``:
    right after entry ``after`` (the one it copies), else first."""
    if isinstance(node, cst.Dict):
        elements = list(node.elements)
        key = cst.SimpleString(f"{_quote(elements)}reward{_quote(elements)}")
        if not elements:
            return node.with_changes(elements=[cst.DictElement(key, value)])
        template = next((e for e in elements if isinstance(e, cst.DictElement)), None)
        entry = cst.DictElement(key, value)
        if template is not None:
            entry = entry.with_changes(
                whitespace_before_colon=template.whitespace_before_colon,
                whitespace_after_colon=template.whitespace_after_colon,
            )
        if after is not None and 0 <= after < len(elements):
            opening = node.lbrace.whitespace_after
            return node.with_changes(elements=_inserted_after(elements, after, entry, opening))
        after_brace, after_comma = _separator(node.lbrace.whitespace_after)
        entry = entry.with_changes(comma=cst.Comma(whitespace_after=after_comma))
        return node.with_changes(
            lbrace=node.lbrace.with_changes(whitespace_after=after_brace),
            elements=[entry, *elements],
        )
    assert isinstance(node, cst.Call)
    arguments = list(node.args)
    template = next((a for a in arguments if a.keyword is not None), None)
    equal = (
        template.equal
        if template is not None
        else cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
        )
    )
    entry = cst.Arg(value=value, keyword=cst.Name("reward"), equal=equal)
    if not arguments:
        return node.with_changes(args=[entry])
    if after is not None and 0 <= after < len(arguments):
        opening = node.whitespace_before_args
        return node.with_changes(args=_inserted_after(arguments, after, entry, opening))
    after_paren, after_comma = _separator(node.whitespace_before_args)
    entry = entry.with_changes(comma=cst.Comma(whitespace_after=after_comma))
    return node.with_changes(whitespace_before_args=after_paren, args=[entry, *arguments])


def add_reward_key(statement: _Statement, transform: Transform) -> str:
    """Add ``"reward": value`` to a dict display or ``dict(...)`` call: after the entry it
    copies (option ``after``, its index), or first with the placeholder."""
    target = statement.find(transform.span, (cst.Dict, cst.Call))
    text = transform.option("value")
    if isinstance(text, str):
        try:
            value = cst.parse_expression(text)
        except cst.ParserSyntaxError as error:
            raise TransformError(f"cannot parse the value `{text}`: {error}") from None
    else:
        value = cst.Name(PLACEHOLDER_MARKER)
    index = transform.option("after")
    after = int(index) if isinstance(index, str) and index.isdigit() else None
    return _replace_one(statement, target, lambda node: _with_reward_entry(node, value, after))


def await_call(statement: _Statement, transform: Transform) -> str:
    """Put ``await`` before a call, in parentheses when its result is used further."""
    target = statement.find(transform.span, (cst.Call,))
    if transform.option("parenthesize"):
        parentheses = {"lpar": [cst.LeftParen()], "rpar": [cst.RightParen()]}
    else:
        parentheses = {}
    return _replace_one(
        statement,
        target,
        lambda node: cst.Await(expression=node, **parentheses),  # type: ignore[arg-type]
    )


def make_async(statement: _Statement, transform: Transform) -> str:
    """``def`` -> ``async def``."""
    name = statement.find(transform.span, (cst.Name,))
    function = next(
        (
            node
            for node in statement.positions
            if isinstance(node, cst.FunctionDef) and node.name is name
        ),
        None,
    )
    if function is None:
        raise TransformError(f"no function `{transform.option('name')}` at {transform.span.line}")
    return _replace_one(
        statement, function, lambda node: node.with_changes(asynchronous=cst.Asynchronous())
    )


def _as_float(node: cst.CSTNode, mode: str) -> cst.CSTNode:
    if mode == "literal" and isinstance(node, cst.Integer):
        return cst.Float(f"{node.value}.0", lpar=node.lpar, rpar=node.rpar)
    if mode == "convert" and isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
        return node.with_changes(func=node.func.with_changes(value="float"))
    if mode == "wrap" and isinstance(node, cst.BaseExpression):
        return cst.Call(func=cst.Name("float"), args=[cst.Arg(value=node)])
    raise TransformError(f"cannot make a float of this {type(node).__name__} ({mode})")


def float_value(statement: _Statement, transform: Transform) -> str:
    """A returned ``int``/``bool`` made a float: ``1.0``, ``float(x)`` or ``float(...)`` around it."""
    target = statement.find(transform.span, (cst.BaseExpression,))
    mode = str(transform.option("mode"))
    return _replace_one(statement, target, lambda node: _as_float(node, mode))


TRANSFORMS: dict[str, Callable[[_Statement, Transform], str]] = {
    RENAME: rename,
    ADD_REWARD_KEY: add_reward_key,
    AWAIT: await_call,
    MAKE_ASYNC: make_async,
    FLOAT: float_value,
}
"""Each transform kind a rule names (:data:`rewardkit.checks.fixes.TRANSFORM_KINDS`) -> the
function that applies it."""


_LOCAL = frozenset({ADD_REWARD_KEY, AWAIT, FLOAT})
"""Transforms that change one node and nothing around it: the simple statement holding the
node is all they parse (a rename needs the function's scopes, ``async`` its ``def``)."""


def _statement(file: FixSource, transform: Transform) -> _Statement:
    """What ``transform`` parses: the top-level statement holding its node, or for a local
    transform the simple statement holding it, inside a block opened at its indentation (the
    same text comes out: libcst writes a node's code the same in either). Each is parsed once
    per file (a file's fixes share it: a libcst tree is never changed, each transformation
    makes a new one)."""
    line = transform.span.line
    found = file.statement(line)
    if found is None:
        raise TransformError(f"line {line} is not in the module")
    unit = file.simple_statement(*found, transform.span) if transform.kind in _LOCAL else None
    if unit is not None:
        start, end, value = unit
        statement = file.parsed.get(start)
        if statement is None:
            newline = LINE_BREAK.search(file.text, found[0], found[1])
            prefix = "if 1:" + (newline.group() if newline else "\n")
            try:
                statement = _Statement(file, start, end, prefix, value)
            except TransformError:
                statement = False  # parse the whole statement instead
            file.parsed[start] = statement
        if isinstance(statement, _Statement):
            return statement
    statement = file.parsed.get(found[0])
    if not isinstance(statement, _Statement):
        statement = file.parsed[found[0]] = _Statement(file, *found)
    return statement


def apply_transform(
    source: str, transform: Transform, file: FixSource | None = None
) -> tuple[str, tuple[int, int] | None]:
    """``source`` with ``transform`` applied, and the (start, end) offsets in the result of a
    placeholder to select (``None`` when the fix inserted none). ``file``: what resolving the
    other fixes of ``source`` already computed.

    Raises :class:`TransformError` when the transform does not apply to this text."""
    function = TRANSFORMS.get(transform.kind)
    if function is None:
        raise TransformError(f"unknown transform {transform.kind!r}")
    if PLACEHOLDER_MARKER in source:
        raise TransformError(f"the module contains {PLACEHOLDER_MARKER}")
    file = file if file is not None and file.text == source else FixSource(source)
    result = function(_statement(file, transform), transform)
    marker = result.find(PLACEHOLDER_MARKER)
    if marker < 0:
        return result, None
    end = marker + len(PLACEHOLDER_MARKER)
    result = result[:marker] + REWARD_PLACEHOLDER + result[end:]
    return result, (marker, marker + len(REWARD_PLACEHOLDER))
