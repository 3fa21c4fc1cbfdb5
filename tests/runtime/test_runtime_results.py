"""RewardResult.from_raw: what a reward may return, and the errors for what it may not."""

from __future__ import annotations

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
    assert pickle.loads(pickle.dumps(result)) == result
    assert result.as_dict() == {"reward": 0.5, "f1": 0.5}
    assert result != (0.5, {"f1": 0.5})  # not equal to a plain tuple
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
    assert result["reward"] == 0.5
    assert result["f1"] == 0.25
    assert result[0] == 0.5  # still a tuple by position
    assert result[1] == {"f1": 0.25}
    with pytest.raises(KeyError, match="em"):
        result["em"]
