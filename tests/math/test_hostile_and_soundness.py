"""Adversarial review of the grader: hostile inputs stay verdicts, and the symbolic stage never proves too much.

Latency on these inputs is measured by ``benchmarks/grader_robustness.py --hostile`` (tests do not
time anything); here each input must come back as an ordinary verdict with the expected rule.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hostile_corpus import QUADRATIC_INPUTS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rewardkit.math import (
    FailureTag,
    MathGraderError,
    compare_answers,
    extract_answer,
    grade,
    is_equivalent,
)
from rewardkit.math.normalization import normalize
from rewardkit.math.representation import Expression, parse_value
from rewardkit.math.reward import MathHarnessError, math_reward


@pytest.mark.parametrize("answer", QUADRATIC_INPUTS.values(), ids=QUADRATIC_INPUTS.keys())
def test_pathological_answers_are_plain_wrong_answers(answer: str) -> None:
    verdict = compare_answers(answer, "5")
    assert (verdict.correct, verdict.tag) == (False, FailureTag.WRONG_ANSWER), dict(verdict.detail)


def test_structures_deeper_than_any_real_answer_are_not_parsed() -> None:
    deep = "(1," * 3000 + "1" + ")" * 3000
    assert parse_value(deep) == Expression(deep)  # no recursion per level: the guard decides
    assert compare_answers(deep, "5").reason == "guard"
    assert parse_value("((1, 2), (3, 4))") != Expression("((1, 2), (3, 4))")


@pytest.mark.parametrize(
    "response",
    [
        "\\[" * 5000,
        "\\(" * 5000 + "x",
        "$$" + "x" * 10_000,
        "\\boxed{" + "1+" * 200_000 + "1}",
    ],
    ids=["unclosed-display", "unclosed-inline", "unclosed-dollars", "huge-unclosed-box"],
)
def test_auto_extraction_of_unclosed_math_is_bounded_and_wrong(response: str) -> None:
    verdict = grade(response, "5", extract="auto")
    assert verdict.correct is False
    assert verdict.tag in (FailureTag.NO_ANSWER, FailureTag.WRONG_ANSWER)


def test_auto_extraction_finds_the_last_number_far_back() -> None:
    text = "the total is 12" + " and so on" * 2000
    assert extract_answer(text, "auto") == "12"
    assert extract_answer("1,000 and then 2,000.5 at last", "auto") == "2,000.5"


def test_euler_power_towers_are_refused_before_sympy() -> None:
    verdict = compare_answers("e^{e^{e^{e^{10}}}}", "x+1")
    assert (verdict.correct, verdict.reason) == (False, "guard")
    assert compare_answers("e^{x^{2}}", "e^{x^2}").correct


def test_normalization_of_choice_and_trailing_text_is_unchanged_by_the_rewrites() -> None:
    assert normalize("  (b) 12 ") == "B"
    assert normalize("42.;  ") == "42"
    assert normalize("(A)") == "A"
    assert normalize("x") == "x"


def test_alternating_series_are_not_decided_by_numeric_evaluation() -> None:
    # sympy evaluates this sum to 1 at any x, so two different series "agreed" at every sample point.
    verdict = compare_answers(
        "\\sum_{n=0}^{\\infty}(-1)^{n} x^{3n}", "\\sum_{n=0}^{\\infty}(-1)^{n} x^{2n}", sandbox=False
    )
    assert verdict.correct is False
    assert compare_answers("\\sum_{n=1}^{10} n", "55").correct  # sums that evaluate are still compared


def test_undefined_expressions_never_match() -> None:
    # x*zoo - x*zoo cancels to 0 in sympy: an answer dividing by zero must not equal a like-shaped gold.
    assert compare_answers("\\frac{x}{0}", "\\frac{2x}{0}", sandbox=False).correct is False
    verdict = compare_answers("7", "\\frac{1}{0}")
    assert (verdict.tag, verdict.reason) == (FailureTag.HARNESS_ERROR, "bad_gold")
    assert "gold '\\frac{1}{0}'" in verdict.detail["error"]  # as written: no doubled backslashes


def test_bad_gold_error_names_the_gold_as_given() -> None:
    gold = "$m_{p} c^{2}\\left(\\frac{1}{0}-1\\right)$"
    verdict = compare_answers("m_p c^2", gold)
    assert verdict.reason == "bad_gold"
    assert f"gold '{gold}'" in verdict.detail["error"]


@pytest.mark.parametrize(
    ("answer", "gold", "expected"),
    [
        ("2x=6", "x=3", True),  # a common factor, with a variable
        ("1+1=2", "2=1+1", True),  # constant sides, swapped
        ("1+1=3", "2=1+1", False),  # constant sides: proportionality of differences would accept this
        ("2<3", "3>2", True),
        ("2<4", "3>2", False),
    ],
)
def test_numeric_statements_compare_their_sides(answer: str, gold: str, expected: bool) -> None:
    assert compare_answers(answer, gold).correct is expected


@pytest.mark.parametrize(
    ("options", "name"),
    [({"tolerance": -1e-6}, "tolerance"), ({"tolerance": "1e-6"}, "tolerance"), ({"timeout": "1"}, "timeout")],
)
def test_invalid_numeric_options_raise_a_typed_error(options: dict[str, object], name: str) -> None:
    with pytest.raises(MathGraderError, match=name):
        grade("\\boxed{5}", "5", **options)  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=2, max_value=999), st.integers(min_value=2, max_value=99), st.sampled_from(["\\times", "\\cdot", "*"]))
def test_a_product_is_a_product_not_scientific_notation(left: int, right: int, operator: str) -> None:
    product = f"{left} {operator} {right}"
    assert is_equivalent(product, str(left * right))
    if left * right != left * 10**right:
        assert not is_equivalent(product, str(left * 10**right))
    assert is_equivalent(f"{left} {operator} 10^{{{right}}}", str(left * 10**right))


# Issue 18, item 4: Python refuses to print ints of more than 4,300 digits; such a gold is bad, not a crash.
@pytest.mark.parametrize("gold", [10**5000, -(10**5000), Fraction(10**5000, 3)], ids=["int", "negative", "fraction"])
def test_a_gold_beyond_the_int_string_limit_is_a_bad_gold(gold: object) -> None:
    verdict = grade(r"\boxed{1}", gold)  # type: ignore[arg-type]
    assert (verdict.correct, verdict.tag, verdict.reason) == (False, FailureTag.HARNESS_ERROR, "bad_gold")
    assert "digits" in verdict.detail["error"]
    assert "pass it as a string" in verdict.detail["error"]
    assert compare_answers("1", gold).reason == "bad_gold"  # type: ignore[arg-type]


def test_math_reward_with_a_gold_beyond_the_int_string_limit() -> None:
    with pytest.raises(MathHarnessError) as raised:  # a harness error is recorded, never a silent 0.0
        math_reward(final_response=r"\boxed{1}", answer=10**5000)
    assert (raised.value.verdict.tag, raised.value.verdict.reason) == (FailureTag.HARNESS_ERROR, "bad_gold")


def test_an_answer_beyond_the_int_string_limit_is_a_wrong_answer() -> None:
    verdict = compare_answers(10**5000, "1")  # type: ignore[arg-type]
    assert (verdict.correct, verdict.tag, verdict.reason) == (False, FailureTag.WRONG_ANSWER, "guard")


# Issue 17, item 15: the bad gold's message says once which gold, and why.
@pytest.mark.parametrize(
    ("gold", "message"),
    [
        ("4:30p..", "gold '4:30p..' cannot be parsed: the LaTeX parser stops at character 6 ('.') (normalized: '4:30p.')"),
        # Issue 26, item 9: the gold as written, not Python's repr (no doubled backslashes).
        ("\\frac{1}{0}", "gold '\\frac{1}{0}' is undefined (complex infinity: a division by zero, or a symbol read as a function)"),
        ("__import__('os')", "gold '__import__('os')' is code, not mathematics"),
        ("so \\boxed{\\frac{1}{2}", "gold 'so \\boxed{\\frac{1}{2}' has an unclosed \\boxed{...}: it is truncated"),
        ("", "gold '' is empty"),
    ],
)
@pytest.mark.parametrize("sandbox", [True, False], ids=["sandbox", "in-process"])
def test_a_bad_gold_is_named_once_with_the_reason(gold: str, message: str, sandbox: bool) -> None:
    verdict = grade("\\boxed{1}", gold, sandbox=sandbox)
    assert (verdict.tag, verdict.reason) == (FailureTag.HARNESS_ERROR, "bad_gold")
    assert verdict.detail["error"] == message
    assert verdict.detail["error"].count(f"'{gold}'") == 1


# Issue 18, item 19: redundant grouping is removed before any parsing, so it costs nothing and
# decides nothing: {1} is 1, however deep (the guard's depth limit concerns real structure).
@pytest.mark.parametrize("depth", [1, 12, 25, 60, 2000])
@pytest.mark.parametrize("sandbox", [True, False], ids=["sandbox", "in-process"])
def test_redundant_grouping_is_free(depth: int, sandbox: bool) -> None:
    assert compare_answers("{" * depth + "1" + "}" * depth, "1", sandbox=sandbox).reason == "exact"
    assert grade("\\boxed{" + "{" * depth + "1" + "}" * depth + "}", "1", sandbox=sandbox).correct
    assert compare_answers("(" * depth + "x+1" + ")" * depth, "(x+1)", sandbox=sandbox).reason == "exact"
    assert not compare_answers("{" * depth + "2" + "}" * depth, "1", sandbox=sandbox).correct
