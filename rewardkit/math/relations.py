"""Relations compared by what they say: the alternatives an answer or a gold states, as relations.

``x^2=9``, ``x=3 \\text{ or } x=-3`` and ``x=\\pm 3`` state the same solutions; ``uv=0`` and
``u=0 \\text{ or } v=0`` too; ``y \\in [\\sqrt{3}, \\infty)`` and ``y \\geq \\sqrt{3}`` describe the same
set. This module (pure Python, no sympy) reads a value as a *system*: a tuple of alternatives,
each a ``Relation`` (a chain such as ``a \\leq x < b`` is one alternative, its links all holding).
The symbolic backend (``solution_sets``) decides whether two systems have the same solutions.
"""

from __future__ import annotations

import re
from typing import Literal

from rewardkit.math.representation import (
    Assignment,
    Expression,
    Infinity,
    Number,
    Power,
    Relation,
    Sequence,
    Union,
    Value,
)

System = tuple[Relation, ...]

_ORDER = ("<", ">", "\\leq", "\\geq", "=", "\\neq")
_PLUS_MINUS = re.compile(r"\\(?:pm|mp)(?![A-Za-z])")


def _latex(value: Value) -> str | None:
    """The LaTeX of a scalar end or value (exact for numbers), else None."""
    if isinstance(value, Number):
        fraction = value.value
        if fraction.denominator == 1:
            return str(fraction.numerator)
        sign = "-" if fraction < 0 else ""
        return f"{sign}\\frac{{{abs(fraction.numerator)}}}{{{fraction.denominator}}}"
    if isinstance(value, Expression):
        return value.latex
    if isinstance(value, Power):
        return f"{'-' if value.negative else ''}{value.base}^{{{value.exponent}}}"
    return None


def _bound(end: Value, infinite_sign: int, closed: bool) -> tuple[str, str] | Literal[False] | None:
    """(LaTeX, operator) of an interval's end; None for an open infinite end, False when unreadable."""
    if isinstance(end, Infinity):
        return None if end.sign == infinite_sign else False
    latex = _latex(end)
    if latex is None:
        return False
    return latex, "\\leq" if closed else "<"


def _interval_relation(variable: str, interval: Sequence) -> Relation | None:
    """``x \\in [a, b)`` as ``a \\leq x < b``; an infinite end drops its link."""
    if (
        len(interval.items) != 2
        or interval.opener not in "(["
        or interval.closer not in ")]"
        or not interval.opener
    ):
        return None  # after "\\in", brackets of two items are an interval: [-2, 7] is not a point
    low, high = interval.items
    lower, upper = _bound(low, -1, interval.opener == "["), _bound(high, 1, interval.closer == "]")
    if lower is False or upper is False:
        return None
    sides = [*([lower[0]] if lower else []), variable, *([upper[0]] if upper else [])]
    operators = [bound[1] for bound in (lower, upper) if bound]
    if not operators:
        return None  # (-\\infty, \\infty): every value, not a relation
    return Relation(tuple(sides), tuple(operators))


def _membership(variable: str, value: Value) -> System | None:
    """``x \\in [1,2) \\cup (3, \\infty)`` as alternatives ``1 \\leq x < 2``, ``3 < x``."""
    parts = value.parts if isinstance(value, Union) else (value,)
    relations = []
    for part in parts:
        relation = _interval_relation(variable, part) if isinstance(part, Sequence) else None
        if relation is None:
            return None
        relations.append(relation)
    return tuple(relations)


def _single(value: Value) -> System | None:
    """One relation, an assignment (``x = \\pm 3`` is two), or a membership in intervals."""
    if isinstance(value, Union) and isinstance(value.parts[0], Assignment):
        # "x \\in (-\\infty, 2] \\cup [5, \\infty)" is read as "(x \\in (-\\infty, 2]) \\cup [5, \\infty)"
        first = value.parts[0]
        value = Assignment(
            first.variable, Union((first.value, *value.parts[1:])), first.value_latex, first.label
        )
    if isinstance(value, Relation):
        if not all(op in _ORDER for op in value.operators):
            return None
        if len(value.operators) > 1 and "=" in value.operators:
            return None  # a chain of working ("w = 2 + 3 = 5") is compared side by side
        return (value,)
    if not isinstance(value, Assignment) or value.label:
        return None
    if isinstance(value.value, (Number, Expression, Power)):
        return (Relation((value.variable, value.value_latex), ("=",)),)
    if (
        isinstance(value.value, Sequence)
        and value.value.solutions
        and _PLUS_MINUS.search(value.value_latex)
    ):
        items = [_latex(item) for item in value.value.items]
        if any(item is None for item in items):
            return None
        return tuple(Relation((value.variable, item), ("=",)) for item in items)  # type: ignore[misc]
    if isinstance(value.value, (Sequence, Union)) and re.fullmatch(r"[A-Za-z]", value.variable):
        return _membership(value.variable, value.value)
    return None


def system(value: Value) -> System | None:
    """The alternatives a value states, or None when it is not (only) relations.

    A bare list is alternatives when its items were joined by "or" (``;``) or all assign the same
    variable (``x = 3, x = -3``: one variable cannot take two values at once); ``x=1, y=2`` is a
    point (both hold), not alternatives.
    """
    single = _single(value)
    if single is not None:
        return single
    if not isinstance(value, Sequence) or value.opener or len(value.items) < 2:
        return None
    systems = [_single(item) for item in value.items]
    if any(part is None for part in systems):
        return None
    if not value.alternatives:
        names = {item.variable if isinstance(item, Assignment) else None for item in value.items}
        if len(names) != 1 or None in names:
            return None
    return tuple(relation for part in systems for relation in part)  # type: ignore[union-attr]
