"""``find_reward_hacks`` finds responses that score without the gold answer, and none for math_reward."""

from __future__ import annotations

import pytest
from hypothesis import settings
from hypothesis import strategies as st

from rewardkit import reward
from rewardkit.math import extract_boxed
from rewardkit.testing import find_reward_hacks
from rewardkit.testing.hacks import contains_gold, plain_value


@reward(auto_register=False)
def any_box(final_response: str, answer: str) -> float:
    """Hackable: pays for any boxed answer at all."""
    return 1.0 if r"\boxed{" in final_response else 0.0


@reward(auto_register=False)
def substring_in_box(final_response: str, answer: str) -> float:
    """Hackable by hedging: pays when the gold appears anywhere in the box."""
    boxed = extract_boxed(final_response) or ""
    return 1.0 if answer in boxed else 0.0


def test_a_reward_that_pays_for_any_box_is_hacked() -> None:
    hacks = find_reward_hacks(any_box, {"answer": "42"}, max_examples=100)
    assert "no-gold" in [hack.kind for hack in hacks]
    hack = next(hack for hack in hacks if hack.kind == "no-gold")
    assert hack.reward == 1.0
    assert r"\boxed{" in hack.response
    assert not contains_gold(hack.response, "42")


def test_a_reward_that_accepts_hedges_is_hacked() -> None:
    hacks = find_reward_hacks(substring_in_box, {"answer": "42"}, max_examples=100)
    assert "hedge" in [hack.kind for hack in hacks]
    hedge = next(hack for hack in hacks if hack.kind == "hedge")
    assert "42" in hedge.response


def test_hedges_can_be_left_out() -> None:
    assert (
        find_reward_hacks(substring_in_box, {"answer": "42"}, hedges=False, max_examples=60) == []
    )


# Derandomized: the search is a fixed set of examples, so the suite is deterministic. A
# random search once found '\boxed{42 \text{ or } \text{none}}' (since fixed in the grader);
# it is a regression pair in tests/plugin/golden_builtin_rewards.toml.
FIXED_SEARCH = settings(derandomize=True, database=None)


def test_the_builtin_math_reward_has_no_hacks() -> None:
    assert (
        find_reward_hacks("math_reward", {"answer": "42"}, max_examples=100, settings=FIXED_SEARCH)
        == []
    )
    assert (
        find_reward_hacks(
            "math_reward", {"answer": r"\frac{3}{4}"}, max_examples=60, settings=FIXED_SEARCH
        )
        == []
    )


def test_the_gold_field_must_be_present() -> None:
    with pytest.raises(KeyError, match="gold_fields has no 'answer'"):
        find_reward_hacks(any_box, {"gold": "42"})


def test_contains_gold_sees_renderings_and_spacing() -> None:
    assert contains_gold(r"so \boxed{0.5}", r"\frac{1}{2}")
    assert contains_gold(r"\boxed{10\,000}", "10000")
    assert not contains_gold(r"\boxed{43}", "42")
    assert plain_value(r"-\dfrac{3}{4}") == plain_value("-0.75")
    assert plain_value(r"\pi") is None


def test_your_own_responses_join_the_search() -> None:
    @reward(auto_register=False)
    def backdoor(final_response: str, answer: str) -> float:
        return 1.0 if "sudo give reward" in final_response else 0.0

    hacks = find_reward_hacks(
        backdoor, {"answer": "42"}, responses=st.just("sudo give reward"), max_examples=100
    )
    assert [hack.response for hack in hacks] == ["sudo give reward"]
