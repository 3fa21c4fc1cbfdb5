"""Stage 1: the last box, balanced braces, fallbacks of extract="auto", gold unwrapping."""

from __future__ import annotations

import pytest

from rewardkit.math import extract_answer, extract_boxed, unwrap_gold


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\\boxed{1} then \\boxed{2}", "2"),
        ("\\fbox{7}", "7"),
        ("so $\\boxed 5$.", "5"),
        ("\\boxed {12}", "12"),
        ("\\boxed{\\frac{a}{b^{2}}}", "\\frac{a}{b^{2}}"),
        ("\\boxed{\\left\\{ 1, 2 \\right\\}}", "\\left\\{ 1, 2 \\right\\}"),
        ("\\boxed{\\{ 1 \\}}", "\\{ 1 \\}"),
        ("\\boxed{\\boxed{5}}", "5"),
        ("echo \\boxed{} then \\boxed{9}", "9"),
        ("\\boxed{9} and the template \\boxed{}", "9"),
        ("\\boxed{3} then \\boxed{4", None),
        ("no box here: 5", None),
        ("\\boxedx", None),
        ("", None),
    ],
)
def test_extract_boxed(text: str, expected: str | None) -> None:
    assert extract_boxed(text) == expected


def test_extract_boxed_is_bounded_on_hostile_text() -> None:
    nested = "\\boxed{" + "{" * 5000 + "1" + "}" * 5000 + "}"
    assert extract_boxed(nested) == "{" * 5000 + "1" + "}" * 5000
    assert extract_boxed("\\boxed{" * 100_000) is None
    assert extract_boxed("x" * 1_000_000 + "\\boxed{4}") == "4"
    assert extract_boxed("\\boxed{" + "a" * 30_000 + "}") is None  # longer than any real answer


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Thus the final answer is $\\frac{1}{2}$.", "\\frac{1}{2}"),
        ("The answer is 42.", "42"),
        ("We find $x=1$ and then \\(y = 3\\)", "y = 3"),
        ("it is 3 then 17", "17"),
        ("nothing numeric", None),
        ("\\boxed{8} although the answer is 9", "8"),
    ],
)
def test_extract_auto(text: str, expected: str | None) -> None:
    assert extract_answer(text, "auto") == expected


@pytest.mark.parametrize(
    ("gold", "expected"),
    [
        ("$5$", "5"),
        ("\\(x+1\\)", "x+1"),
        ("\\[\\frac12\\]", "\\frac12"),
        ("\\boxed{7}", "7"),
        ("\\text{Yes}", "Yes"),
        ("$\\boxed{\\text{(A)}}$", "(A)"),
        ("$x$ or $y$", "$x$ or $y$"),
        ("  3 ", "3"),
    ],
)
def test_unwrap_gold(gold: str, expected: str) -> None:
    assert unwrap_gold(gold) == expected
