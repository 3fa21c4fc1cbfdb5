"""Whether two systems of relations (``relations.System``) have the same solutions, when decidable.

Equations only (any number of variables): each alternative ``l = r`` holds where the numerator
of ``l - r`` (after cancelling common factors) vanishes, so a system is the zero set of the product
of its numerators, and two systems agree when the products of their distinct irreducible factors
are proportional (``x^2 = 9`` and ``x = 3 \\text{ or } x = -3``: ``x^2 - 9`` against ``(x-3)(x+3)``;
``ka = b`` and ``a = \\frac{b}{k}``: ``ka - b`` against ``ak - b``). Compared where both sides are
defined (``k \\neq 0`` above), over the complex numbers. Inequalities in one variable: the sets of
real solutions, from ``sympy.solveset``. Anything else (several variables with an inequality,
functions other than polynomials and quotients, degrees above ``MAX_DEGREE``) is undecided, and
said so: ``reason="undecided"``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sympy

from rewardkit.math.comparison import BadGold, Outcome
from rewardkit.math.identity import proportional
from rewardkit.math.relations import System
from rewardkit.math.verdict import quoted

#: The largest total degree of one relation's sides that is factored or solved.
MAX_DEGREE = 8
_SYMPY_RELATIONS = {
    "=": sympy.Eq,
    "\\neq": sympy.Ne,
    "<": sympy.Lt,
    ">": sympy.Gt,
    "\\leq": sympy.Le,
    "\\geq": sympy.Ge,
}
_SET_TYPES = (sympy.Interval, sympy.FiniteSet, sympy.Union, sympy.Intersection, sympy.Complement)


class Undecided(Exception):
    """The systems are outside what this module decides."""


def _degree(expression: Any) -> float:
    """An upper bound on the total degree (numerator and denominator); inf when not a rational function."""
    if expression.is_Symbol:
        return 1
    if not expression.free_symbols:
        return 0
    if expression.is_Add:
        return max(_degree(arg) for arg in expression.args)
    if expression.is_Mul:
        return sum(_degree(arg) for arg in expression.args)
    if expression.is_Pow and expression.exp.is_Integer:
        return _degree(expression.base) * abs(int(expression.exp))
    return float("inf")


Parsed = list[tuple[list[Any], tuple[str, ...]]]


def _parse(system: System, parse: Callable[[str], Any], *, gold: bool) -> Parsed:
    """Each relation's sides as sympy (``parse`` raises ``ValueError`` on text it cannot read)."""
    parsed = []
    for relation in system:
        sides = []
        for side in relation.sides:
            try:
                sides.append(parse(side))
            except ValueError as error:
                if gold:
                    raise BadGold(f"{error} (in its side {quoted(side)})") from None
                raise Undecided from None
        parsed.append((sides, relation.operators))
    return parsed


def _numerator(difference: Any) -> Any:
    numerator, _ = sympy.fraction(sympy.cancel(sympy.together(difference)))
    return numerator


def _radical(system: Parsed, symbols: list[Any]) -> Any:
    """The product of the distinct irreducible factors of the system's numerators (its zero set)."""
    factors: list[Any] = []
    for sides, _ in system:
        numerator = _numerator(sides[0] - sides[1])
        if not numerator.free_symbols:
            if numerator == 0:
                raise Undecided  # an identity (0 = 0): every value
            continue  # no solution: adds nothing to the alternatives
        # Factored over the field of its radicals: (x-\\sqrt3)^2(x+\\sqrt3) has the factors x \\mp \\sqrt3.
        radicals = [
            p for p in numerator.atoms(sympy.Pow) if not p.free_symbols and not p.exp.is_Integer
        ]
        options = {"extension": radicals} if radicals else {}
        _, pairs = sympy.factor_list(numerator, *symbols, **options)
        for factor, _multiplicity in pairs:
            if factor.free_symbols and not any(
                proportional(factor, f, positive_only=False) for f in factors
            ):
                factors.append(factor)
    if not factors:
        raise Undecided
    return sympy.Mul(*factors)


def _real_set(system: Parsed, symbol: Any) -> Any:
    """The real solutions of a system in one variable (alternatives united, a chain's links intersected)."""
    union = sympy.S.EmptySet
    for sides, operators in system:
        solutions = sympy.S.Reals
        for left, operator, right in zip(sides, operators, sides[1:]):
            relation = _SYMPY_RELATIONS[operator](left, right)
            link = sympy.solveset(relation, symbol, sympy.S.Reals)
            if operator == "=" and link != sympy.solveset(relation, symbol, sympy.S.Complexes):
                raise Undecided  # complex solutions: the real sets would drop them
            solutions = solutions.intersect(link)
        union = union.union(solutions)
    if not isinstance(union, (*_SET_TYPES, sympy.sets.sets.EmptySet)) or union.has(
        sympy.ConditionSet, sympy.ImageSet
    ):
        raise Undecided
    return union


class NotApplicable(Exception):
    """Statements about numbers (no variable): the side-by-side rules decide those."""


def _decide(answer: System, gold: System, parse: Callable[[str], Any]) -> bool:
    gold_parsed, answer_parsed = _parse(gold, parse, gold=True), _parse(answer, parse, gold=False)
    symbols = {s for sides, _ in gold_parsed for side in sides for s in side.free_symbols}
    answer_symbols = {s for sides, _ in answer_parsed for side in sides for s in side.free_symbols}
    if not symbols or not answer_symbols:
        raise NotApplicable
    if symbols != answer_symbols:
        return False  # relations about different variables
    if any(
        _degree(side) > MAX_DEGREE for sides, _ in (*gold_parsed, *answer_parsed) for side in sides
    ):
        raise Undecided
    ordered = sorted(symbols, key=lambda s: s.name)
    if all(operators == ("=",) for _, operators in (*gold_parsed, *answer_parsed)):
        return proportional(
            _radical(answer_parsed, ordered), _radical(gold_parsed, ordered), positive_only=False
        )
    if len(ordered) != 1:
        raise Undecided
    difference = _real_set(answer_parsed, ordered[0]).symmetric_difference(
        _real_set(gold_parsed, ordered[0])
    )
    empty = difference.is_empty
    if empty is None:
        raise Undecided
    return bool(empty)


def compare_systems(answer: System, gold: System, parse: Callable[[str], Any]) -> Outcome | None:
    """Same solutions (``reason="equation"``), ``reason="undecided"`` when this cannot be decided, None
    for statements about numbers (no variable on a side: not a question of solutions)."""
    try:
        return Outcome(_decide(answer, gold, parse), "equation")
    except NotApplicable:
        return None
    except Undecided:
        return Outcome(False, "undecided")
    except (
        sympy.PolynomialError,
        NotImplementedError,
        TypeError,
        ValueError,
        ArithmeticError,
        RecursionError,
    ):
        return Outcome(False, "undecided")
