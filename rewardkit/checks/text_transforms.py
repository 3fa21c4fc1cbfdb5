"""Fixes that change a few words at places the :mod:`ast` knows, applied as plain text where that
gives the very text their libcst transformation (:mod:`rewardkit.checks.transforms`) gives, so
that most fixes never parse with libcst.

A rename replaces the parameter and each ``Name`` of it in the function's body when the body
binds neither the old nor the new name any other way (no assignment, ``del``, nested parameter,
definition, import, ``global``/``nonlocal``, ``except ... as``, match capture) and reads the new
name nowhere: then those are exactly the uses libcst's scope analysis resolves to the parameter.
``await``, ``float(...)`` and ``async`` are edits at a node with no parentheses of its own (libcst
would find its node inside them and write around them). Anything else gives ``None``, and the
caller runs the libcst transformation. Either way the statement must parse on its own, as libcst
parses it.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable, Iterator

from rewardkit.checks.fix_source import FixSource, Replacements
from rewardkit.checks.fixes import AWAIT, FLOAT, MAKE_ASYNC, PLACEHOLDER_MARKER, RENAME
from rewardkit.checks.model import Span, Transform

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef

_FSTRING_POSITIONS_EXACT = sys.version_info >= (3, 12)
"""Before Python 3.12 the positions of names inside f-strings are not always right."""
_DECIMAL = re.compile(r"[0-9][0-9_]*")
_CONVERTED = re.compile(r"(?:int|bool)(?=[ \t]*\()")
_DEF = re.compile(r"[ \t\f]*(?=def[ \t]+$)")


def text_replacements(file: FixSource, transform: Transform) -> Replacements | None:
    """The changes that apply ``transform`` as plain text, or ``None`` when they are not certain
    to give what its libcst transformation gives."""
    function = _TEXT_TRANSFORMS.get(transform.kind)
    if function is None or PLACEHOLDER_MARKER in file.text:
        return None
    statement = file.statement(transform.span.line)
    if statement is None or file.statement_tree(*statement) is None:
        return None
    return function(file, transform, statement)


def _arguments(function: FunctionNode | ast.Lambda) -> Iterator[ast.arg]:
    arguments = function.args
    yield from (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)
    yield from (a for a in (arguments.vararg, arguments.kwarg) if a is not None)


def _binds(node: ast.AST, names: set[str]) -> bool:
    """Whether ``node`` binds one of ``names`` other than by a ``Name`` (those are checked by
    their context)."""
    if isinstance(node, ast.arg):
        return node.arg in names
    if isinstance(node, ast.alias):
        return (node.asname or node.name.split(".", 1)[0]) in names
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return not names.isdisjoint(node.names)
    if isinstance(node, ast.MatchMapping):
        return node.rest in names
    return getattr(node, "name", None) in names  # def, class, except-as, captures, type params


def _uses(function: FunctionNode, name: str, new_name: str) -> list[ast.Name] | None:
    """The ``Name`` nodes of ``name`` in the function's body when all are reads of its
    parameter and ``new_name`` is nowhere in it (``None`` otherwise)."""
    names = {name, new_name}
    if any(argument.arg == new_name for argument in _arguments(function)):
        return None
    uses = []
    for statement in function.body:
        for node in ast.walk(statement):
            if type(node) is ast.Name:
                if node.id == new_name or (node.id == name and type(node.ctx) is not ast.Load):
                    return None
                if node.id == name:
                    uses.append(node)
            elif type(node) is ast.JoinedStr and not _FSTRING_POSITIONS_EXACT:
                if any(
                    isinstance(inner, ast.Name) and inner.id in names for inner in ast.walk(node)
                ):
                    return None
            elif _binds(node, names):
                return None
    return uses


def _is_word(character: str) -> bool:
    return character.isalnum() or character == "_"


def _rename(
    file: FixSource, transform: Transform, statement: tuple[int, int]
) -> Replacements | None:
    """Rename a parameter and its uses (see the module's docstring for when)."""
    name, new_name = str(transform.option("name")), str(transform.option("to"))
    function_name = transform.option("function")
    start, end = statement
    tree, positions = file.statement_tree(start, end)  # type: ignore[misc]
    shift = file.positions.position(start)[0] - 1
    wanted = (transform.span.line - shift, transform.span.column)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function_name:
            parameter = next(
                (a for a in _arguments(node) if a.arg == name and positions.start(a) == wanted),
                None,
            )
            if parameter is not None:
                uses = _uses(node, name, new_name)
                break
    else:
        return None
    if uses is None:
        return None
    text = positions.text
    offsets = sorted({positions.start_offset(n) for n in (parameter, *uses)})
    if len(offsets) != len(uses) + 1:
        return None
    for offset in offsets:
        after = offset + len(name)
        if (
            text[offset:after] != name
            or (offset > 0 and _is_word(text[offset - 1]))
            or (after < len(text) and _is_word(text[after]))
        ):
            return None
    return tuple((start + offset, start + offset + len(name), new_name) for offset in offsets)


def _bare_node(file: FixSource, span: Span, statement: tuple[int, int]) -> tuple[int, int] | None:
    """(start, end) offsets of the expression at ``span`` when its text there is certainly it
    (it parses back to the same tree: positions inside f-strings are not always right before
    Python 3.12) and it has no parentheses of its own: code before it on its line that does not
    end with ``(``, or a statement it begins."""
    tree, positions = file.statement_tree(*statement)  # type: ignore[misc]
    shift = file.positions.position(statement[0])[0] - 1
    start = file.positions.offset(span.line, span.column)
    end = file.positions.offset(span.end_line, span.end_column)
    try:
        written = ast.dump(ast.parse(file.text[start:end], mode="eval").body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    local = Span(span.line - shift, span.column, span.end_line - shift, span.end_column)
    nodes = [node for node in ast.walk(tree) if isinstance(node, (ast.expr, ast.stmt))]
    if not any(
        isinstance(n, ast.expr) and positions.span(n) == local and ast.dump(n) == written
        for n in nodes
    ):
        return None
    before = file.text[file.positions.offset(span.line, 0) : start].rstrip(" \t\f")
    head = (local.line, local.column)
    if before.endswith("(") or (
        not before
        and not any(isinstance(n, ast.stmt) and positions.start(n) == head for n in nodes)
    ):
        return None
    return start, end


def _around(
    file: FixSource, transform: Transform, statement: tuple[int, int], before: str, after: str = ""
) -> Replacements | None:
    """Insert ``before`` and ``after`` around the bare node at the transform's span."""
    found = _bare_node(file, transform.span, statement)
    if found is None:
        return None
    start, end = found
    return ((start, start, before), (end, end, after)) if after else ((start, start, before),)


def _await(
    file: FixSource, transform: Transform, statement: tuple[int, int]
) -> Replacements | None:
    """``await`` before a call (``(await call)`` when its result is used further)."""
    if transform.option("parenthesize"):
        return _around(file, transform, statement, "(await ", ")")
    return _around(file, transform, statement, "await ")


def _float(
    file: FixSource, transform: Transform, statement: tuple[int, int]
) -> Replacements | None:
    """A returned ``int``/``bool`` made a float: ``1.0``, ``float(x)`` or ``float(...)``."""
    mode = transform.option("mode")
    if mode == "wrap":
        return _around(file, transform, statement, "float(", ")")
    found = _bare_node(file, transform.span, statement)
    if found is None:
        return None
    start, end = found
    if mode == "literal" and _DECIMAL.fullmatch(file.text, start, end):
        return ((end, end, ".0"),)
    converted = _CONVERTED.match(file.text, start, end) if mode == "convert" else None
    return None if converted is None else ((start, converted.end(), "float"),)


def _make_async(
    file: FixSource, transform: Transform, statement: tuple[int, int]
) -> Replacements | None:
    """``def`` -> ``async def`` (a ``def`` that only indentation precedes on its line)."""
    span = transform.span
    line_start = file.positions.offset(span.line, 0)
    start = file.positions.offset(span.line, span.column)
    name = str(transform.option("name"))
    match = _DEF.match(file.text, line_start, start)
    if match is None or file.text[start : start + len(name)] != name:
        return None
    return ((match.end(), match.end(), "async "),)


_TEXT_TRANSFORMS: dict[
    str, Callable[[FixSource, Transform, tuple[int, int]], Replacements | None]
] = {
    RENAME: _rename,
    AWAIT: _await,
    FLOAT: _float,
    MAKE_ASYNC: _make_async,
}
