"""Hypothesis properties: renderings of one value are equal, perturbations are wrong, grade never raises."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from rewardkit.math import MathVerdict, compare_answers, grade, is_equivalent
from rewardkit.math.verdict import REASONS

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _thousands(n: int) -> str:
    return f"{n:,}".replace(",", "{,}")


def integer_renderings(n: int) -> list[str]:
    renderings = [str(n), f"{n}.0", f"\\frac{{{2 * n}}}{{2}}", f"{n}/1", f"\\text{{{n}}}", f"${n}$", _thousands(n)]
    if n >= 0:
        renderings += [f"{n:,}", f"00{n}", f"{n}."]
    return renderings


def fraction_renderings(value: Fraction) -> list[str]:
    sign = "-" if value < 0 else ""
    p, q = abs(value.numerator), value.denominator
    renderings = [f"{sign}\\frac{{{p}}}{{{q}}}", f"{sign}\\dfrac{{{p}}}{{{q}}}", f"{sign}\\tfrac{{{p}}}{{{q}}}", f"{sign}{p}/{q}"]
    if p < 10 and q < 10:
        renderings.append(f"{sign}\\dfrac{p}{q}")
    if p > q:
        whole, rest = divmod(p, q)
        if rest:
            renderings.append(f"{sign}{whole}\\frac{{{rest}}}{{{q}}}")  # a mixed number
    twos_and_fives = q
    for prime in (2, 5):
        while twos_and_fives % prime == 0:
            twos_and_fives //= prime
    if twos_and_fives == 1:  # a terminating decimal
        decimal = format((Decimal(p) / Decimal(q)).normalize(), "f")
        renderings.append(f"{sign}{decimal}")
    return renderings


@FAST
@given(st.integers(min_value=-10**9, max_value=10**9))
def test_integer_renderings_are_equal(n: int) -> None:
    gold = str(n)
    for rendering in integer_renderings(n):
        assert is_equivalent(rendering, gold), rendering


@FAST
@given(st.fractions(min_value=-1000, max_value=1000, max_denominator=1000))
def test_fraction_decimal_and_mixed_renderings_are_equal(value: Fraction) -> None:
    assume(value.denominator > 1)
    renderings = fraction_renderings(value)
    for gold in renderings[:2] + renderings[-1:]:
        for rendering in renderings:
            assert is_equivalent(rendering, gold), (rendering, gold)


@FAST
@given(st.integers(min_value=-10**6, max_value=10**6), st.data())
def test_changing_a_digit_or_the_sign_is_wrong(n: int, data: st.DataObject) -> None:
    text = str(abs(n))
    position = data.draw(st.integers(0, len(text) - 1))
    digit = data.draw(st.sampled_from([d for d in "0123456789" if d != text[position]]))
    changed = text[:position] + digit + text[position + 1 :]
    sign = "-" if n < 0 else ""
    assume(not (position == 0 and digit == "0" and len(text) > 1 and int(changed) == int(text)))
    assert not is_equivalent(sign + changed, str(n))
    if n != 0:
        assert not is_equivalent(str(-n), str(n))


@FAST
@given(st.fractions(min_value=-100, max_value=100, max_denominator=50))
def test_negating_a_fraction_is_wrong(value: Fraction) -> None:
    assume(value != 0)
    gold = f"\\frac{{{value.numerator}}}{{{value.denominator}}}"
    negated = f"\\frac{{{-value.numerator}}}{{{value.denominator}}}"
    assert not is_equivalent(negated, gold)


@FAST
@given(
    st.integers(-50, 50),
    st.integers(-50, 50),
    st.sampled_from(["(", "["]),
    st.sampled_from([")", "]"]),
    st.booleans(),
)
def test_changing_an_interval_bracket_is_wrong(low: int, high: int, opener: str, closer: str, change_left: bool) -> None:
    assume(low < high)
    gold = f"{opener}{low}, {high}{closer}"
    if change_left:
        answer = f"{'[' if opener == '(' else '('}{low}, {high}{closer}"
    else:
        answer = f"{opener}{low}, {high}{']' if closer == ')' else ')'}"
    for policy in ("lenient", "strict"):
        assert not is_equivalent(answer, gold, policy=policy)
        assert is_equivalent(gold, gold, policy=policy)


@FAST
@given(st.lists(st.integers(-20, 20), min_size=2, max_size=5, unique=True))
def test_tuple_order_matters_and_set_order_does_not(items: list[int]) -> None:
    swapped = [items[1], items[0], *items[2:]]
    as_tuple = "(" + ", ".join(map(str, items)) + ")"
    swapped_tuple = "(" + ", ".join(map(str, swapped)) + ")"
    assert not is_equivalent(swapped_tuple, as_tuple)
    assert is_equivalent(", ".join(map(str, swapped)), ", ".join(map(str, items)))


_LATEX_PIECES = st.sampled_from(
    ["\\boxed{", "}", "{", "\\frac", "\\sqrt", "^", "_", "\\left(", "\\right)", "\\text{", "\\\\", "$", "9",
     "x", "=", ",", "\\pm", "\\infty", "!", "\\cup", "(", "]", "\\begin{pmatrix}", "&", "\\end{pmatrix}",
     "\u2212", "\x00", "\\cdot", ".", "%", "\\$", " or ", "e", "\\pi"]
)


@SLOW
@given(st.one_of(st.text(max_size=200), st.lists(_LATEX_PIECES, max_size=40).map("".join)), st.text(max_size=30))
def test_grade_never_raises_and_reports_a_known_reason(response: str, gold: str) -> None:
    verdict = grade(response, gold, timeout=0.5)
    assert isinstance(verdict, MathVerdict)
    assert verdict.reason in REASONS
    assert verdict.reason != "crash", dict(verdict.detail)


@SLOW
@given(st.lists(_LATEX_PIECES, min_size=1, max_size=60).map("".join), st.sampled_from(["1", "x+1", "(1,2)", "\\frac{1}{2}"]))
def test_compare_never_raises_within_the_budget(answer: str, gold: str) -> None:
    verdict = compare_answers(answer, gold, timeout=0.3)
    assert verdict.reason in REASONS
    assert verdict.reason != "crash", dict(verdict.detail)
    assert verdict.tag is None or verdict.tag.value in ("NO_ANSWER", "WRONG_ANSWER")
