"""Set algebra on exact values: unions, intersections and differences of finite sets and intervals.

``\\{1,2\\} \\cup \\{2,5\\}`` is ``\\{1,2,5\\}``, ``[0,3] \\cap (1,4)`` is ``(1,3]``, ``[1,2] \\cup [2,4]`` is
``[1,4]`` and ``\\mathbb{R} \\setminus \\{0\\}`` is ``(-\\infty,0) \\cup (0,\\infty)``: the lenient policy
evaluates such answers (and golds) into one canonical form before comparing (``canonical_set``).
Only exact rational endpoints and elements are evaluated (ordering ``\\sqrt{2}`` would need sympy);
unions of finite sets of any elements are merged, without duplicates.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction

from rewardkit.math.representation import (
    Expression,
    Infinity,
    Number,
    NumberForm,
    Sequence,
    SetOperation,
    Text,
    Union,
    Value,
)

Point = Fraction | float  # a Fraction, or -inf / inf for an unbounded end

EMPTY_SET = "\\emptyset"


@dataclass(frozen=True)
class _Piece:
    """An interval of the real line (a point when ``low == high``, both ends closed)."""

    low: Point
    low_closed: bool
    high: Point
    high_closed: bool


_Pieces = list[_Piece]


def _point(value: Value) -> Point | None:
    if isinstance(value, Number) and not value.percent:
        return value.value
    if isinstance(value, Infinity):
        return math.inf * value.sign
    return None


def _as_pieces(value: Value) -> _Pieces | None:
    """The pieces a value denotes, or None when it is not an exact set of reals."""
    if isinstance(value, Expression) and value.latex == EMPTY_SET:
        return []
    if isinstance(value, Union):
        return _fold([_as_pieces(part) for part in value.parts], ["\\cup"] * (len(value.parts) - 1))
    if isinstance(value, SetOperation):
        return _fold([_as_pieces(operand) for operand in value.operands], list(value.operators))
    if not isinstance(value, Sequence):
        return None
    if value.opener == "{":
        points = [_point(item) for item in value.items]
        if any(point is None or math.isinf(point) for point in points):
            return None
        return _union([_Piece(point, True, point, True) for point in points])  # type: ignore[arg-type]
    if len(value.items) == 2 and value.opener in "([" and value.closer in ")]" and value.opener:
        low, high = _point(value.items[0]), _point(value.items[1])
        if low is None or high is None or low > high:
            return None
        piece = _Piece(low, value.opener == "[" and not math.isinf(low), high, value.closer == "]" and not math.isinf(high))
        return [piece] if _nonempty(piece) else []
    return None


def _nonempty(piece: _Piece) -> bool:
    return piece.low < piece.high or (piece.low == piece.high and piece.low_closed and piece.high_closed)


def _union(pieces: _Pieces) -> _Pieces:
    """Sorted, disjoint, merged pieces (touching pieces merge when the shared end belongs to one)."""
    merged: _Pieces = []
    for piece in sorted(pieces, key=lambda p: (p.low, not p.low_closed)):
        if merged:
            last = merged[-1]
            if last.high > piece.low or (last.high == piece.low and (last.high_closed or piece.low_closed)):
                if piece.high > last.high or (piece.high == last.high and piece.high_closed):
                    merged[-1] = _Piece(last.low, last.low_closed, piece.high, piece.high_closed)
                continue
        merged.append(piece)
    return merged


def _intersection(left: _Pieces, right: _Pieces) -> _Pieces:
    pieces = []
    for a in left:
        for b in right:
            low, low_open = max((a.low, not a.low_closed), (b.low, not b.low_closed))
            high, high_closed = min((a.high, a.high_closed), (b.high, b.high_closed))
            piece = _Piece(low, not low_open, high, high_closed)
            if _nonempty(piece):
                pieces.append(piece)
    return _union(pieces)


def _complement(pieces: _Pieces) -> _Pieces:
    gaps: _Pieces = []
    low, low_closed = -math.inf, False
    for piece in pieces:
        gap = _Piece(low, low_closed, piece.low, not piece.low_closed)
        if _nonempty(gap):
            gaps.append(gap)
        low, low_closed = piece.high, not piece.high_closed
    last = _Piece(low, low_closed, math.inf, False)
    if _nonempty(last):
        gaps.append(last)
    return gaps


_OPERATIONS = {
    "\\cup": lambda a, b: _union(a + b),
    "\\cap": _intersection,
    "\\setminus": lambda a, b: _intersection(a, _complement(b)),
}


def _fold(operands: list[_Pieces | None], operators: list[str]) -> _Pieces | None:
    """Apply the operators left to right (``A \\cup B \\setminus C`` is ``(A \\cup B) \\setminus C``)."""
    if any(operand is None for operand in operands) or any(op not in _OPERATIONS for op in operators):
        return None
    result: _Pieces = operands[0]  # type: ignore[assignment]
    for operator, operand in zip(operators, operands[1:]):
        result = _OPERATIONS[operator](result, operand)
    return result


def _number(point: Point) -> Value:
    if math.isinf(point):
        return Infinity(1 if point > 0 else -1)
    fraction = Fraction(point)
    return Number(fraction, NumberForm.INTEGER if fraction.denominator == 1 else NumberForm.FRACTION)


def _as_value(pieces: _Pieces) -> Value:
    points = tuple(_number(piece.low) for piece in pieces if piece.low == piece.high)
    intervals = [
        Sequence((_number(p.low), _number(p.high)), "[" if p.low_closed else "(", "]" if p.high_closed else ")", interval=True)
        for p in pieces
        if p.low != p.high
    ]
    parts: list[Value] = [*intervals, Sequence(points, "{", "}")] if points else list(intervals)
    if not parts:
        return Sequence((), "{", "}")
    return parts[0] if len(parts) == 1 else Union(tuple(parts))


_NAME = re.compile(r"^(?:[A-Za-z]|\\[A-Za-z]+)(?:_\{?\w+\}?)?$")


def _element_key(item: Value) -> tuple[str, object] | None:
    """What makes two elements of a finite set the same, when the text decides: a number's value, a
    text, a name (``a``, ``\\alpha``, ``x_1``: distinct names are distinct elements); else None."""
    if isinstance(item, Number) and not item.percent:
        return ("number", item.value)
    if isinstance(item, Text):
        return ("text", item.text)
    if isinstance(item, Expression) and _NAME.match(item.latex):
        return ("name", item.latex)
    return None


def _finite_operation(operands: tuple[Value, ...], operators: tuple[str, ...]) -> Value | None:
    """``\\{a, b\\} \\cap \\{b, c\\}`` -> ``\\{b\\}``: operations on finite sets of numbers, texts and names
    (left to right); None when an element is an expression whose equality only sympy could tell."""
    if not all(isinstance(operand, Sequence) and operand.opener == "{" for operand in operands):
        return None
    keyed: list[dict[tuple[str, object], Value]] = []
    for operand in operands:
        keys = {_element_key(item): item for item in operand.items}  # type: ignore[union-attr]
        if None in keys:
            return None
        keyed.append(keys)  # type: ignore[arg-type]
    result = dict(keyed[0])
    for operator, other in zip(operators, keyed[1:]):
        if operator == "\\cup":
            result |= {key: item for key, item in other.items() if key not in result}
        elif operator == "\\cap":
            result = {key: item for key, item in result.items() if key in other}
        else:
            result = {key: item for key, item in result.items() if key not in other}
    return Sequence(tuple(result.values()), "{", "}")


def _merged_finite_sets(value: Value) -> Value | None:
    """``\\{a\\} \\cup \\{a, b\\}`` -> ``\\{a, b\\}``: a union of finite sets of any elements, without repeats;
    intersections and differences of finite sets whose elements the text tells apart."""
    operands = value.parts if isinstance(value, Union) else value.operands if isinstance(value, SetOperation) else ()
    if isinstance(value, SetOperation) and set(value.operators) != {"\\cup"}:
        return _finite_operation(value.operands, value.operators)
    if not operands or not all(isinstance(operand, Sequence) and operand.opener == "{" for operand in operands):
        return None
    items = tuple(dict.fromkeys(item for operand in operands for item in operand.items))  # type: ignore[union-attr]
    return Sequence(items, "{", "}")


def canonical_set(value: Value) -> Value:
    """The evaluated set a set expression denotes (one canonical form), or ``value`` unchanged.

    A union of disjoint intervals and points becomes the intervals in order, then the set of the
    isolated points; one interval or one finite set stands alone; the empty set is ``\\{\\}``.
    """
    if not isinstance(value, (Union, SetOperation, Sequence, Expression)):
        return value
    pieces = _as_pieces(value)
    if pieces is not None:
        return _as_value(pieces)
    return _merged_finite_sets(value) or value
