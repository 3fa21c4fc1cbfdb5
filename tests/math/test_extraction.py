"""Stage 1: the final boxes, balanced braces, fallbacks of extract="auto", the answer a gold states."""

from __future__ import annotations

import pytest

from rewardkit.math import extract_answer, extract_boxed, unwrap_gold
from rewardkit.math.extraction import UnreadableGold, gold_answer


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


@pytest.mark.parametrize(
    ("text", "expected", "last_box"),
    [
        ("\\boxed{(2, 2)} \\text{ and } \\boxed{(6, 2)}", "(2, 2), (6, 2)", "(6, 2)"),
        ("$$\\boxed{1}, \\boxed{2}, \\boxed{3}$$", "1, 2, 3", "3"),
        ("\\boxed{3} or \\boxed{4}", "3, 4", "4"),
        ("\\boxed{1}\\boxed{2}", "1, 2", "2"),
        ("\\boxed{(3, 3)} \\text{ for part (a) and } \\boxed{(1, 1)}", "(3, 3), (1, 1)", "(1, 1)"),
        ("\\(y_1 = \\boxed{5}\\) and \\(y_2 = \\boxed{7}\\)", "y_1 = 5, y_2 = 7", "7"),
        ("\\boxed{3} chairs and \\boxed{5} tables", "3, 5", "5"),
        ("$\\boxed{5}$. $\\boxed{5}$", "5", "5"),
        ("\\boxed{3}. Wait, no: \\boxed{4}", "4", "4"),
        ("\\boxed{3} not \\boxed{4}", "4", "4"),
        ("\\boxed{3}\n\n**Final Answer**\n\\boxed{3}", "3", "3"),
        ("\\boxed{1} and \\boxed{2", None, None),
    ],
)
def test_final_boxes_joined_by_and_commas_or_spacing_are_one_answer(
    text: str, expected: str | None, last_box: str | None
) -> None:
    assert extract_answer(text, "boxed") == expected
    assert extract_boxed(text) == last_box


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\\frac{10}{9}", "\\frac{10}{9}"),
        ("1 000", "1 000"),
        ("The answer is .4", ".4"),
        ("QWERTY7Z", None),
        ("Answer $ \n 9 \n $", "9"),
        ("Answer $ 9 \n\n $ 10", "10"),
        ("Answer $ \\frac{1}{3} \\$ = \\frac{7}{5} $", "\\frac{1}{3} \\$ = \\frac{7}{5}"),
        ("Therefore $x \\geq 5$ is the solution.", "x \\geq 5"),
        ("So $k = 3$ here. Therefore, there are 14 pairs. I hope it is correct.", "14"),
        ("So $k = 3$ for each of the 14 pairs", "k = 3"),
        ("Final Answer: The area of $PQRS$ is 48. I hope it is correct.", "48"),
        ("The final answer is \\\"$14 $ and $15 $\\\". I hope it is correct.", "14, 15"),
        ("so \\boxed{310}. Final Answer: The final answer is $10,610$.", "10,610"),
        ("\\boxed{255}. We checked that the answer is correct.", "255"),
        ("\\boxed{255}. I am confident the final answer is correct.", "255"),
        ("\\boxed{B}. Final answer: (C)", "(C)"),
        ("It grows by 40%.", "40%"),
    ],
)
def test_auto_extraction_of_unboxed_answers(text: str, expected: str | None) -> None:
    assert extract_answer(text, "auto") == expected


@pytest.mark.parametrize(
    ("gold", "expected"),
    [
        ("$\\boxed{7}$", "7"),
        ("$$\\boxed{7}, \\boxed{11}$$", "7, 11"),
        ("the answer should be \\boxed{004}.\n\nBut let me check. So \\boxed{004} is correct.\n**Final Answer**\n\\boxed{004}", "004"),
        ("x \\in \\boxed{\\{-2\\} \\cup [1,5)}.$", "\\{-2\\} \\cup [1,5)"),
        ("\\(\\boxed{\\text{D}}\\).", "\\text{D}"),
        ("Final Answer: The final answer is $35 \\%$. I hope it is correct.", "35 \\%"),
        ("The answer is 5.", "5"),
        ("The tank holds 40 liters after 3 hours of filling.", "The tank holds 40 liters after 3 hours of filling."),
        ("$x$ or $y$", "$x$ or $y$"),
    ],
)
def test_gold_answer_takes_the_answer_a_gold_states(gold: str, expected: str) -> None:
    assert gold_answer(gold) == expected


def test_a_gold_whose_last_box_is_not_closed_is_unreadable() -> None:
    with pytest.raises(UnreadableGold, match="unclosed"):
        gold_answer("so the answer is \\boxed{\\frac{1}{2}")
