"""The hypothesis strategies generate what they promise (checked with the real math grader too)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from rewardkit.math import extract_boxed, grade, is_equivalent
from rewardkit.testing import (
    adversarial_text,
    boxed_responses,
    equivalent_renderings,
    gold_responses,
    hedged_responses,
    latex_numbers,
    number_values,
    renderings,
    trajectories,
)

FEW = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_renderings_of_a_fraction_cover_every_form() -> None:
    assert renderings(Fraction(1, 2)) == [
        "0.5",
        "0.50",
        r"\frac{1}{2}",
        r"\dfrac{1}{2}",
        r"\tfrac{1}{2}",
        "1/2",
        r"\frac12",
        r"\frac{2}{4}",
        r"50\%",
        "50%",
    ]


def test_renderings_of_a_negative_mixed_number() -> None:
    forms = renderings("-7/3")
    assert r"-2\frac{1}{3}" in forms
    assert r"\frac{-7}{3}" in forms
    assert not any("." in form for form in forms), "7/3 has no terminating decimal"


def test_renderings_of_an_integer_and_options() -> None:
    assert renderings(3, unreduced=False) == ["3", "3.0", "3.00"]
    assert r"\frac{6}{2}" in renderings(3)
    assert renderings("0.25")[-2:] == [r"25\%", "25%"]
    assert not any("%" in form for form in renderings("0.25", percent=False))
    assert not any("%" in form for form in renderings(3)), "percent only for sizes up to 1"


def test_renderings_reject_what_is_not_a_plain_number() -> None:
    with pytest.raises(ValueError, match=r"cannot render '\\\\pi'"):
        renderings(r"\pi")
    with pytest.raises(TypeError, match="bool"):
        renderings(True)


@FEW
@given(st.data())
def test_every_rendering_equals_the_value_under_the_math_grader(data: st.DataObject) -> None:
    value = data.draw(number_values())
    rendering = data.draw(equivalent_renderings(value))
    canonical = (
        str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    )
    assert is_equivalent(rendering, canonical), (rendering, canonical)


@FEW
@given(latex_numbers())
def test_latex_numbers_are_latex_strings_the_grader_reads(text: str) -> None:
    assert text
    assert text == text.strip()
    assert is_equivalent(text, text)


@FEW
@given(st.data())
def test_boxed_responses_end_in_the_one_box_holding_the_answer(data: st.DataObject) -> None:
    answer = data.draw(latex_numbers())
    response = data.draw(boxed_responses(answer))
    assert response.count(r"\boxed") == 1
    assert extract_boxed(response) == answer
    assert grade(response, answer).correct


@FEW
@given(st.data())
def test_gold_responses_carry_the_answer_the_grader_accepts(data: st.DataObject) -> None:
    answer = data.draw(latex_numbers())
    response = data.draw(gold_responses(answer))
    if response != answer:  # the bare answer, or a box of it or of an equal rendering
        assert grade(response, answer).correct, response


@FEW
@given(st.data())
def test_hedged_responses_offer_both_values_and_grade_wrong(data: st.DataObject) -> None:
    answer = str(data.draw(st.integers(0, 999)))
    decoy = str(data.draw(st.integers(1000, 1999)))
    response = data.draw(hedged_responses(answer, decoy))
    assert answer in response
    assert decoy in response
    assert not grade(response, answer).correct


FIND = settings(max_examples=2000, database=None, suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize(
    ("what", "condition"),
    [
        ("empty", lambda s: s == ""),
        ("huge", lambda s: len(s) >= 100_000),
        ("deeply nested", lambda s: s.count("{") >= 1000 and s.count("{") == s.count("}")),
        ("unbalanced braces", lambda s: s.count("{") != s.count("}") and len(s) < 200),
        ("control characters", lambda s: any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in s)),
        ("an injection payload", lambda s: "__import__" in s or "__subclasses__" in s),
        ("a power tower", lambda s: "9^{9^{9^{9}}}" in s),
    ],
)
@pytest.mark.filterwarnings("ignore:Generating overly large repr")
def test_adversarial_text_generates(what: str, condition: object) -> None:
    assert find(adversarial_text(), condition, settings=FIND) is not None, what


def test_adversarial_text_respects_max_size() -> None:
    example = find(adversarial_text(max_size=5000), lambda s: len(s) > 4000, settings=FIND)
    assert len(example) <= 5000


@pytest.mark.parametrize(
    ("what", "condition", "smallest"),  # the smallest such text (any of that length will do)
    [
        ("a brace", lambda s: "{" in s, "{"),
        ("an unfinished box", lambda s: "\\boxed{" in s, "\\boxed{"),
        ("a NUL character", lambda s: "\x00" in s, "\x00"),
        ("more than ten characters", lambda s: len(s) > 10, "0" * 11),
    ],
)
def test_adversarial_text_shrinks_to_the_smallest_text(
    what: str, condition: object, smallest: str
) -> None:
    # A contract failure is reported with hypothesis' minimal example: hostile text must
    # shrink to the smallest text that still fails, not to a big example of one branch.
    found = find(adversarial_text(), condition, settings=settings(FIND, derandomize=True))
    assert len(found) == len(smallest), (what, found)


@FEW
@given(trajectories())
def test_trajectories_are_message_lists_ending_with_the_answer(messages: list[dict]) -> None:
    roles = [message["role"] for message in messages]
    assert roles[-1] == "assistant"
    assert "user" in roles
    assert set(roles) <= {"system", "user", "assistant", "tool"}
    assert all(isinstance(message["content"], str) for message in messages)
    for index, message in enumerate(messages):
        if message["role"] == "tool":
            call = messages[index - 1]
            assert call["role"] == "assistant"
            assert call["tool_calls"][0]["id"] == message["tool_call_id"]


@FEW
@given(trajectories(final_response=boxed_responses("42"), system=True, max_tool_calls=0))
def test_trajectories_take_the_final_response_and_options(messages: list[dict]) -> None:
    assert [m["role"] for m in messages] == ["system", "user", "assistant"]
    assert extract_boxed(messages[-1]["content"]) == "42"
