"""The PRM800K-style API: same names, the documented semantics, no parse_expr."""

from __future__ import annotations

import pytest

from rewardkit.math import (
    are_equal_under_sympy,
    count_unknown_letters_in_expr,
    grade_answer,
    should_allow_eval,
    split_tuple,
)


@pytest.mark.parametrize(
    ("given", "truth", "expected"),
    [
        ("\\frac{1}{2}", "\\frac12", True),
        ("0.5", "\\frac{1}{2}", True),
        ("\\frac{2}{4}", "\\frac{1}{2}", False),
        ("2^{10}", "1024", False),
        ("1024", "1024", True),
        ("1,024", "1024", True),
        ("(1,2)", "(1, 2)", True),
        ("[1,2]", "(1,2)", False),
        ("(2,1)", "(1,2)", False),
        ("3 \\text{ or } 4", "3", False),
        ("\\frac{\\sqrt{2}}{2}", "\\frac{1}{\\sqrt2}", True),
        ("x = 3", "3", True),
        (None, "3", False),
    ],
)
def test_grade_answer_is_the_strict_policy(given: str | None, truth: str, expected: bool) -> None:
    assert grade_answer(given, truth) is expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("expr", "count"),
    [("x+y", 2), ("\\sqrt{x}", 1), ("\\frac{a}{b}+c", 3), ("sqrt(2)", 0), ("2\\pi", 0), ("xyx", 2)],
)
def test_count_unknown_letters_in_expr(expr: str, count: int) -> None:
    assert count_unknown_letters_in_expr(expr) == count


@pytest.mark.parametrize(
    ("expr", "allowed"),
    [("x+1", True), ("a+b+c", False), ("2^{3}", True), ("2^{10}", False), ("2^3^4", False), ("2^(3)", False), ("2^99", False)],
)
def test_should_allow_eval(expr: str, allowed: bool) -> None:
    assert should_allow_eval(expr) is allowed


@pytest.mark.parametrize(
    ("truth", "given", "equal"),
    [("x^2+2x+1", "(x+1)^2", True), ("\\frac{1}{2}", "0.5", True), ("x", "y", False), ("a+b+c", "c+b+a", False)],
)
def test_are_equal_under_sympy(truth: str, given: str, equal: bool) -> None:
    assert are_equal_under_sympy(truth, given) is equal


@pytest.mark.parametrize(
    ("expr", "elements"),
    [
        ("(1,2)", ["1", "2"]),
        ("[1, 2)", ["1", "2"]),
        ("(1,000, 2)", ["1000", "2"]),
        ("((1,2),3)", ["(1,2)", "3"]),
        ("5", ["5"]),
        ("", []),
        ("(1)(2)", ["(1)(2)"]),
    ],
)
def test_split_tuple(expr: str, elements: list[str]) -> None:
    assert split_tuple(expr) == elements
