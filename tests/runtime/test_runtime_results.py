"""RewardResult.from_raw: what a reward may return, and the errors for what it may not."""

from __future__ import annotations

import copy
import json
import math
import pickle
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rewardkit import (
    RewardError,
    RewardResult,
    RewardShapeError,
    RewardValueError,
    calculate_reward,
    calculate_rewards,
    reward,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (0.5, 0.5),
        (3, 3.0),
        (True, 1.0),
        (False, 0.0),
        (Fraction(1, 4), 0.25),
        (np.float64(0.25), 0.25),
        (np.float32(0.5), 0.5),
        (np.int64(2), 2.0),
        (np.bool_(True), 1.0),
        (np.array(0.75), 0.75),  # a 0-d array
        ({"reward": np.bool_(False)}, 0.0),
    ],
)
def test_numbers_become_float_rewards(raw: object, expected: float) -> None:
    result = RewardResult.from_raw(raw)
    assert result == RewardResult(expected, {})
    assert type(result.reward) is float


def test_dict_with_reward_key_keeps_other_keys_as_extras() -> None:
    result = RewardResult.from_raw({"reward": 1, "f1": 0.5, "note": "ok"})
    assert result.reward == 1.0
    assert result.extras == {"f1": 0.5, "note": "ok"}


def test_reward_result_passes_through_unchanged() -> None:
    original = RewardResult(0.3, {"a": 1})
    assert RewardResult.from_raw(original) is original


def test_none_is_rejected_unless_legacy_none_as_zero() -> None:
    with pytest.raises(RewardShapeError, match=r"reward 'length' returned None .*none_as_zero=True"):
        RewardResult.from_raw(None, reward_name="length")
    assert RewardResult.from_raw(None, none_as_zero=True) == RewardResult(0.0)


def test_dict_without_reward_lists_its_keys() -> None:
    with pytest.raises(RewardShapeError) as caught:
        RewardResult.from_raw({"score": 1.0, "f1": 0.2}, reward_name="qa")
    message = str(caught.value)
    assert "reward 'qa'" in message
    assert "without a 'reward' key" in message
    assert "'score', 'f1'" in message


@pytest.mark.parametrize("bad", ["0.5", None, [1.0], {"nested": 1}, 1 + 2j])
def test_non_numeric_reward_value_is_named(bad: object) -> None:
    with pytest.raises(RewardShapeError) as caught:
        RewardResult.from_raw({"reward": bad}, reward_name="judge")
    message = str(caught.value)
    assert "reward 'judge'" in message
    assert repr(bad)[:20] in message
    assert type(bad).__name__ in message


@pytest.mark.parametrize("bad", ["1.0", b"1", [0.5], (0.5, {}), object(), 1 + 0j])
def test_other_types_are_rejected_naming_the_type(bad: object) -> None:
    with pytest.raises(RewardShapeError) as caught:
        RewardResult.from_raw(bad, reward_name="r")
    assert f"of type {type(bad).__name__}" in str(caught.value)
    assert "reward 'r'" in str(caught.value)


def test_array_gets_an_item_hint() -> None:
    with pytest.raises(RewardShapeError, match=r"\.item\(\)"):
        RewardResult.from_raw(np.array([0.5]), reward_name="r")


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, np.float64("nan"), {"reward": math.inf}])
def test_non_finite_rewards_raise_value_error(bad: object) -> None:
    with pytest.raises(RewardValueError, match=r"reward 'r' returned a non-finite reward .*poison"):
        RewardResult.from_raw(bad, reward_name="r")


def test_constructor_validates_too() -> None:
    with pytest.raises(RewardValueError):
        RewardResult(math.nan)
    with pytest.raises(RewardShapeError):
        RewardResult("1")  # type: ignore[arg-type]
    assert RewardResult(1).reward == 1.0


def test_every_error_is_a_reward_error() -> None:
    for error in (RewardShapeError, RewardValueError):
        assert issubclass(error, RewardError)


def test_result_is_frozen_and_picklable() -> None:
    result = RewardResult(0.5, {"f1": 0.5})
    with pytest.raises(AttributeError):
        result.reward = 1.0  # type: ignore[misc]
    with pytest.raises(TypeError, match="read-only"):
        result["reward"] = math.nan  # type: ignore[index]
    assert pickle.loads(pickle.dumps(result)) == result
    assert type(pickle.loads(pickle.dumps(result))) is RewardResult
    assert type(copy.deepcopy(result)) is RewardResult
    assert result.as_dict() == {"reward": 0.5, "f1": 0.5}
    assert type(result.as_dict()) is dict
    assert result == {"reward": 0.5, "f1": 0.5}  # equal to the same flat dict, as AgentFly's result is
    assert repr(result) == "RewardResult(reward=0.5, extras={'f1': 0.5})"


async def test_calling_the_reward_and_calculate_reward_both_validate() -> None:
    @reward(auto_register=False)
    def broken(final_response: str) -> dict[str, float]:
        return {"score": 1.0}  # rewardkit: ignore[RK201] (deliberately broken)

    with pytest.raises(RewardShapeError, match="reward 'broken'"):
        broken(final_response="x")
    with pytest.raises(RewardShapeError, match="reward 'broken'"):
        await calculate_reward(broken, final_response="x")

    @reward(auto_register=False)
    async def nan_async(final_response: str) -> float:
        return math.nan

    with pytest.raises(RewardValueError, match="reward 'nan_async'"):
        await nan_async(final_response="x")
    with pytest.raises(RewardValueError, match="reward 'nan_async'"):
        await calculate_reward(nan_async, final_response="x")


async def test_legacy_none_as_zero_on_the_decorator() -> None:
    @reward(auto_register=False, none_as_zero=True)
    def legacy(final_response: str) -> None:
        return None

    assert await calculate_reward(legacy, final_response="x") == RewardResult(0.0)


@given(st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(10**6), 10**6) | st.booleans())
def test_any_finite_number_round_trips(value: float) -> None:
    assert RewardResult.from_raw(value).reward == float(value)
    assert RewardResult.from_raw({"reward": value, "x": 1}).extras == {"x": 1}


def test_an_int_too_large_for_a_float_is_a_value_error_naming_the_reward() -> None:
    with pytest.raises(RewardValueError, match=r"reward 'huge' returned 1000.*too large for a float"):
        RewardResult.from_raw(10**400, reward_name="huge")
    with pytest.raises(RewardValueError, match=r"returned 'reward' = 1000.*too large"):
        RewardResult.from_raw({"reward": 10**400})


def test_results_are_read_by_name_like_agentflys_result_dict() -> None:
    result = RewardResult.from_raw({"reward": 0.5, "f1": 0.25})
    assert isinstance(result, dict)
    assert result["reward"] == 0.5
    assert result["f1"] == 0.25
    assert "reward" in result
    assert "f1" in result
    assert "em" not in result
    assert result.get("em", 0.0) == 0.0
    assert dict(result) == {"reward": 0.5, "f1": 0.25} == result
    assert json.loads(json.dumps(result)) == {"reward": 0.5, "f1": 0.25}
    assert list(result) == ["reward", "f1"]  # the reward first, then the extras in the order returned
    with pytest.raises(KeyError, match="em"):
        result["em"]


def test_a_bad_shape_is_both_a_type_error_and_a_value_error() -> None:
    # AgentFly's runtime raises ValueError for a bad return shape; code written for it catches ours too.
    for bad in (None, {"score": 1.0}, "0.5"):
        with pytest.raises(ValueError, match="reward 'r'"):
            RewardResult.from_raw(bad, reward_name="r")
        with pytest.raises(TypeError, match="reward 'r'"):
            RewardResult.from_raw(bad, reward_name="r")


def test_extras_cannot_hold_a_second_reward() -> None:
    with pytest.raises(ValueError, match="cannot hold a 'reward' key"):
        RewardResult(1.0, {"reward": 0.0})


@pytest.mark.parametrize(
    "huge",
    [10**5000, -(10**5000), Fraction(10**5000, 3), {"reward": 10**5000}],
    ids=["int", "negative", "fraction", "in-dict"],
)
def test_an_int_past_pythons_digit_limit_is_a_reward_value_error_naming_the_reward(huge: object) -> None:
    # repr() of an int over 4,300 digits raises ValueError itself: the message must not need it.
    with pytest.raises(RewardValueError, match=r"reward 'huge' returned .*too large for a float"):
        RewardResult.from_raw(huge, reward_name="huge")


async def test_a_reward_returning_a_5000_digit_int_is_recorded_as_reward_value_error() -> None:
    @reward(name="huge", auto_register=False)
    def huge(final_response: str) -> int:
        return 10**5000

    [result] = await calculate_rewards(huge, [{"final_response": "x"}], on_error="record")
    assert result.reward == 0.0
    assert result.extras["error"].startswith("RewardValueError: reward 'huge' returned an int of about 5000 digits")
