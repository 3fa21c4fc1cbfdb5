"""Issue 34: a numeric check that cannot tell its sides apart is no evidence of equality.

``(y+1)^{3000}`` against ``(y+1)^{2999}`` once passed as "symbolic": both sides underflowed to 0
(or overflowed) at every sample point. Property: for random polynomials and powers ``p`` and a ``q``
that is not identically zero, ``p`` against ``p + q`` is never accepted, at extreme degrees and
coefficients, in the sandbox and in-process; ``p + q`` against itself rewritten is accepted.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rewardkit.math import compare_answers

PROPERTY = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
VARIABLES = ("x", "y", "t", "b")

coefficients = st.one_of(
    st.integers(-9, 9).filter(bool),
    st.integers(1, 60).map(lambda k: 10**k),  # extreme: up to 10^{60}
    st.integers(1, 40).map(lambda k: Fraction(1, 10**k)),  # and down to 10^{-40}
    st.fractions(min_value=-50, max_value=50, max_denominator=97).filter(bool),
)
exponents = st.one_of(
    st.integers(0, 12), st.integers(250, 9_999)
)  # extreme degrees: the guard stops at 10,000


def _coefficient(value: Fraction | int) -> str:
    value = Fraction(value)
    sign = "-" if value < 0 else ""
    value = abs(value)
    if value.denominator == 1:
        return f"{sign}{value.numerator}"
    return f"{sign}\\frac{{{value.numerator}}}{{{value.denominator}}}"


@st.composite
def monomials(draw: st.DrawFn) -> tuple[Fraction, tuple[tuple[str, int], ...]]:
    powers = draw(st.dictionaries(st.sampled_from(VARIABLES), exponents, max_size=2))
    return Fraction(draw(coefficients)), tuple(sorted((v, e) for v, e in powers.items() if e))


def _monomial_latex(coefficient: Fraction, powers: tuple[tuple[str, int], ...]) -> str:
    factors = "".join(f"{v}^{{{e}}}" if e != 1 else v for v, e in powers)
    return f"{_coefficient(coefficient)}{factors}" if factors else _coefficient(coefficient)


@st.composite
def polynomials(draw: st.DrawFn) -> str:
    """A nonzero polynomial: distinct monomials with nonzero coefficients cannot cancel."""
    terms = draw(st.lists(monomials(), min_size=1, max_size=3, unique_by=lambda m: m[1]))
    return " + ".join(f"({_monomial_latex(*term)})" for term in terms)


@st.composite
def powers(draw: st.DrawFn) -> str:
    """A power of a binomial: ``(y+1)^{3000}``, ``(b-t)^{301}``."""
    first, second = (
        draw(st.sampled_from(VARIABLES)),
        draw(st.sampled_from((*VARIABLES, "1", "2", "\\frac{1}{3}"))),
    )
    sign = draw(st.sampled_from("+-"))
    if first == second:
        second = "1"
    return f"({first}{sign}{second})^{{{draw(exponents)}}}"


expressions = st.one_of(polynomials(), powers(), st.just("0"))


@st.composite
def p_and_q(draw: st.DrawFn) -> tuple[str, str]:
    """``p`` and a ``q`` not identically zero: a polynomial, a nonzero multiple of p, or p times a power."""
    p = draw(expressions)
    q = draw(st.one_of(polynomials(), powers()))
    if p != "0" and draw(st.booleans()):
        factor = draw(
            st.sampled_from(("-2", "10^{-30}", "\\frac{1}{7}", "3", "(x - 1)", "y^{500}"))
        )
        q = f"{factor} \\cdot ({p})"
    return p, q


@PROPERTY
@given(p_and_q(), st.booleans(), st.booleans())
def test_p_is_never_p_plus_q(pq: tuple[str, str], swap: bool, sandbox: bool) -> None:
    p, q = pq
    given_, gold = (f"{p} + {q}", p) if swap else (p, f"{p} + {q}")
    verdict = compare_answers(given_, gold, sandbox=sandbox)
    assert not verdict.correct, (given_, gold, verdict.reason)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions, st.one_of(polynomials(), powers()))
def test_p_plus_q_is_q_plus_p(p: str, q: str) -> None:
    """The control: the same sum written in the other order is accepted, so the test above is not vacuous."""
    verdict = compare_answers(f"{q} + {p}", f"{p} + {q}", sandbox=False)
    assert verdict.correct or verdict.reason == "guard", (p, q, verdict.reason)


@pytest.mark.parametrize("sandbox", [True, False], ids=["sandbox", "in-process"])
@pytest.mark.parametrize(
    ("answer", "gold"),
    [
        ("(y+1)^{3000}", "(y+1)^{2999}"),
        ("(b-t)^{301}", "(t-b)^{301}"),
        ("0", "t^{5000}"),
        ("e^{-5000}", "0"),  # a constant below a double's range is not 0
        ("10^{20}\\sqrt{2}x^2", "10^{20}\\sqrt{2}x^2+1"),  # a difference lost at 1e-9 relative
        ("x^{2}e^{-3000x}", "x^{3}e^{-3000x}"),  # not a polynomial: mpmath's range, not doubles
        ("y = (x+1)^{3000}", "y = (x+1)^{2999}"),  # equations too
    ],
)
def test_void_numeric_checks_are_not_agreement(answer: str, gold: str, sandbox: bool) -> None:
    assert not compare_answers(answer, gold, sandbox=sandbox).correct
