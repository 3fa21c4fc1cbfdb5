"""Identity tests for the symbolic backend: are two sympy expressions the same function?

Rational functions with rational coefficients (polynomials, powers, quotients: ``(y+1)^{3000}``)
are evaluated exactly at rational sample points: exact evidence, whatever the degree. Other
expressions are evaluated at 30 digits with mpmath's unbounded exponent range, so a value never
underflows to 0 or overflows to infinity (``0.3^{3000}`` is ``1e-1569``, not ``0.0``); a point
where either side cannot be evaluated (NaN, infinity, an unevaluated integral) is void, never an
agreement. Imported by ``symbolic`` inside the sandbox worker (or in-process with ``sandbox=False``).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from typing import Any

import mpmath
import sympy

PRECISION = 30
_BITS = 110  # PRECISION decimal digits, in bits
# Small and large magnitudes of both signs: floor(x/5) and floor(x/6) agree on every point in (-2, 3).
_SAMPLE_POINTS = (0.3712, 1.2345, -0.6789, 2.7183, -1.4142, 7.3891, -12.3457)
# Unevaluated sums, products, integrals, limits and derivatives: sympy's numeric evaluation of them is
# not reliable (an alternating series evaluates to 1 at any x), so only proofs decide them.
UNEVALUATED = (sympy.Sum, sympy.Product, sympy.Integral, sympy.Limit, sympy.Derivative)
#: The tolerance of the identity test between exact expressions (no decimal on either side):
#: at 30 digits, equal functions agree far closer; closer values that differ are not seen.
EXACT_TOLERANCE = 1e-20
#: The precision (digits) of the confirming evaluation, and how far below the terms' size the
#: difference must then be: far beyond the noise of the first (30-digit) evaluation.
_CONFIRM_PRECISION = 60
_CONFIRM_TOLERANCE = 1e-45
#: A difference below this fraction of the terms' size at 30 digits may be cancellation noise.
_CANCELLATION = 1e-15
#: Exact evaluation is used while the values it computes stay below about this many bits.
_EXACT_BITS = 4_000_000
_POINT_DENOMINATOR = 10**6


def numeric(expression: Any, substitution: dict[Any, Any] | None = None) -> Any | None:
    """The value at ``substitution`` as a finite mpmath number (no underflow, no overflow), or None
    when it cannot be trusted (NaN, infinity, an unevaluated construct, an evaluation error)."""
    if expression.has(*UNEVALUATED):
        return None
    try:
        value = (
            sympy.N(expression, PRECISION, subs=substitution)
            if substitution
            else sympy.N(expression, PRECISION)
        )
        if not value.is_number or value.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
            return None
        number = value._to_mpmath(_BITS)
    except (TypeError, ValueError, ArithmeticError, RecursionError, AttributeError):
        return None
    return number if mpmath.isfinite(number) else None


def close(a: Any, b: Any, tolerance: float) -> bool:
    """Relative closeness; two zeros are equal, and a zero is close to nothing else."""
    return bool(abs(a - b) <= tolerance * max(abs(a), abs(b)))


def _term_size(expressions: tuple[Any, ...], substitution: dict[Any, Any] | None) -> Any | None:
    """The sum of the absolute values of the expressions' terms (what a cancellation is measured against)."""
    total = mpmath.mpf(0)
    for expression in expressions:
        for term in sympy.Add.make_args(expression):
            value = numeric(term, substitution)
            if value is None:
                return None
            total += abs(value)
    return total


def _vanishes(difference: Any, substitution: dict[Any, Any] | None, size: Any) -> bool:
    """Whether ``difference`` is zero to ``_CONFIRM_PRECISION`` digits next to ``size`` (bounded precision)."""
    if difference.has(*UNEVALUATED):
        return False
    try:
        options = {"subs": substitution} if substitution else {}
        value = sympy.N(difference, _CONFIRM_PRECISION, maxn=4 * _CONFIRM_PRECISION, **options)
        if not value.is_number or value.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
            return False
        magnitude = abs(value._to_mpmath(4 * _BITS))
    except (TypeError, ValueError, ArithmeticError, RecursionError, AttributeError):
        return False
    return bool(mpmath.isfinite(magnitude) and magnitude <= _CONFIRM_TOLERANCE * size)


def agree(
    answer: Any, gold: Any, substitution: dict[Any, Any] | None, tolerance: float
) -> bool | None:
    """Whether two expressions have the same value (at ``substitution``), None when it cannot be evaluated.

    Values closer than ``tolerance`` (relative) agree. Values that differ only by cancellation noise
    next to the size of their terms (``\\sin^2 x + \\cos^2 x - 1`` against 0; relative tests divide by
    the gold, and zero needs its own test) are confirmed at 60 digits: they agree only when the
    difference vanishes far beyond the first evaluation's noise.
    """
    a, g = numeric(answer, substitution), numeric(gold, substitution)
    if a is None or g is None:
        return None
    if close(a, g, tolerance):
        return True
    size = _term_size((answer, gold), substitution)
    if size is None or not size or abs(a - g) > _CANCELLATION * size:
        return False
    return _vanishes(answer - gold, substitution, size)


def is_zero(difference: Any) -> bool:
    """A proof that ``difference`` is zero: structurally, by expansion, or by ``simplify``."""
    if difference == 0:
        return True
    for transform in (sympy.expand, sympy.simplify):
        try:
            if transform(difference) == 0:
                return True
        except (TypeError, ValueError, ArithmeticError, RecursionError, AttributeError):
            return False
    return False


def _sample_values(symbols: list[Any]) -> Iterator[dict[Any, float]]:
    """Fixed pseudo-random points (negative and positive, never integers), one value per symbol."""
    rng = random.Random(len(symbols))
    for base in _SAMPLE_POINTS:
        yield {symbol: base + rng.random() / 7 for symbol in symbols}


def _sample_points(symbols: list[Any]) -> list[dict[Any, Any]]:
    return [
        {s: sympy.Float(v, PRECISION) for s, v in point.items()}
        for point in _sample_values(symbols)
    ]


def _exact_points(symbols: list[Any]) -> list[dict[Any, Any]]:
    """The sample points as exact rationals (six decimals)."""
    return [
        {
            s: sympy.Rational(round(v * _POINT_DENOMINATOR), _POINT_DENOMINATOR)
            for s, v in point.items()
        }
        for point in _sample_values(symbols)
    ]


def _symbols(*expressions: Any) -> list[Any]:
    return sorted(set().union(*(e.free_symbols for e in expressions)), key=lambda s: s.name)


def _exact_bits(expression: Any) -> float:
    """An upper bound on the bits of ``expression``'s exact value at a rational sample point (inf: not exact)."""
    if expression.is_Symbol:
        return 2 * _POINT_DENOMINATOR.bit_length() + 8
    if expression.is_Rational:
        return expression.p.bit_length() + expression.q.bit_length() + 1
    if expression.is_Add or expression.is_Mul:
        return sum(_exact_bits(arg) for arg in expression.args) + len(expression.args)
    if expression.is_Pow and expression.exp.is_Integer:
        return _exact_bits(expression.base) * (abs(int(expression.exp)) + 1)
    return float("inf")  # a function, a constant such as pi, a root: not a rational function


def is_exact(*expressions: Any) -> bool:
    """Whether every expression is a rational function with rational coefficients, cheap to evaluate exactly."""
    try:
        return sum(_exact_bits(e) for e in expressions) <= _EXACT_BITS
    except RecursionError:
        return False


def _exact_value(expression: Any, point: dict[Any, Any]) -> Any | None:
    value = expression.xreplace(point)
    return value if value.is_Rational else None  # a pole (zoo, nan) is void


def _exact_pairs(answer: Any, gold: Any) -> Iterator[tuple[Any, Any]]:
    """The values of ``answer`` and ``gold`` at the exact points where both are defined."""
    for point in _exact_points(_symbols(answer, gold)):
        a, g = _exact_value(answer, point), _exact_value(gold, point)
        if a is not None and g is not None:
            yield a, g


def _all_agree(agreements: Iterable[bool | None]) -> bool | None:
    """False at the first disagreement, True if some point agreed, None if none decided."""
    decided = False
    for agreement in agreements:
        if agreement is None:
            continue
        if not agreement:
            return False
        decided = True
    return True if decided else None


def agree_exactly(answer: Any, gold: Any) -> bool | None:
    """Exact evaluation at rational sample points: False on a difference, None if every point is a pole."""
    return _all_agree(a == g for a, g in _exact_pairs(answer, gold))


def agree_at_points(answer: Any, gold: Any, tolerance: float) -> bool | None:
    """Identity test at the sample points (exact for rational functions): False on a difference,
    None if no point can be evaluated (then only a proof, ``is_zero``, may decide)."""
    if is_exact(answer, gold):
        return agree_exactly(answer, gold)
    points = _sample_points(_symbols(answer, gold))
    return _all_agree(agree(answer, gold, substitution, tolerance) for substitution in points)


def _ratios(values: Iterable[tuple[Any, Any, bool, bool]]) -> list[Any] | None:
    """``a / g`` for each (a, g, a vanishes, g vanishes): points where both vanish say nothing;
    None when one vanishes and the other not."""
    ratios = []
    for a, g, a_zero, g_zero in values:
        if a_zero or g_zero:
            if a_zero != g_zero:
                return None
            continue
        ratios.append(a / g)
    return ratios


def _numeric_values(answer: Any, gold: Any) -> Iterator[tuple[Any, Any, bool, bool]]:
    """At the sample points where both evaluate: their values and whether each vanishes (is
    below the cancellation noise of its terms)."""
    for substitution in _sample_points(_symbols(answer, gold)):
        a, g = numeric(answer, substitution), numeric(gold, substitution)
        if a is None or g is None:
            continue
        a_size, g_size = _term_size((answer,), substitution), _term_size((gold,), substitution)
        if a_size is None or g_size is None:
            continue
        yield a, g, abs(a) <= _CANCELLATION * a_size, abs(g) <= _CANCELLATION * g_size


def proportional(answer: Any, gold: Any, *, positive_only: bool) -> bool:
    """``answer = c \\cdot gold`` for a constant c != 0 (c > 0 for inequalities), at the sample points."""
    exact = is_exact(answer, gold)
    if exact:
        ratios = _ratios((a, g, a == 0, g == 0) for a, g in _exact_pairs(answer, gold))
    else:
        ratios = _ratios(_numeric_values(answer, gold))
    if ratios is None:
        return False
    if not ratios:
        return is_zero(answer) and is_zero(gold)
    first = ratios[0]
    if exact:
        return all(ratio == first for ratio in ratios) and (bool(first > 0) or not positive_only)
    if not first or not all(close(ratio, first, EXACT_TOLERANCE) for ratio in ratios):
        return False
    if positive_only:
        return bool(abs(mpmath.im(first)) <= _CANCELLATION * abs(first) and mpmath.re(first) > 0)
    return True
