"""``NOT_APPLICABLE``: a result of its own, neither a score nor a failure."""

from __future__ import annotations

import asyncio
import json
import pickle

import pytest

from rewardkit import (
    NOT_APPLICABLE,
    NotApplicable,
    RewardResult,
    RewardShapeError,
    calculate_rewards,
    compute_data_metrics,
    reward,
)


@reward(name="needs_gold", auto_register=False)
def needs_gold(final_response: str, answer: str | None) -> RewardResult:
    if answer is None:
        return RewardResult.not_applicable("no gold answer", {"checked": False})
    return RewardResult(float(final_response == answer), {"checked": True})


def test_a_reward_says_not_applicable_and_it_is_not_recorded_as_a_failure() -> None:
    samples = [{"final_response": "1", "answer": "1"}, {"final_response": "2", "answer": None}]
    results = asyncio.run(calculate_rewards(needs_gold, samples, on_error="record"))
    assert results[0] == {"reward": 1.0, "checked": True}
    skipped = results[1]
    assert isinstance(skipped, NotApplicable)
    assert not skipped.applicable
    assert skipped.reward is None
    assert skipped.reason == "no gold answer"
    assert "error" not in skipped
    assert skipped.extras == {"checked": False}
    # metrics leave it out of the reward's statistics but keep its extras
    metrics = compute_data_metrics(results)
    assert metrics["reward/mean"] == 1.0
    assert metrics["reward_extra/checked/mean"] == 0.5


def test_none_is_still_an_error_for_a_per_sample_reward() -> None:
    @reward(auto_register=False)
    def forgot_return(final_response: str) -> None:
        pass  # rewardkit: ignore[RK203] (deliberately broken)

    with pytest.raises(RewardShapeError, match="missing `return`"):
        forgot_return(final_response="x")


def test_the_not_applicable_result_reads_as_agentflys_dict_and_survives_pickling_and_json() -> None:
    result = RewardResult.not_applicable("why", {"k": 1})
    assert dict(result) == {"reward": None, "k": 1}
    assert json.loads(json.dumps(result)) == {"reward": None, "k": 1}
    assert pickle.loads(pickle.dumps(result)) == result
    assert result != RewardResult(0.0, {"k": 1})
    assert RewardResult.from_raw(NOT_APPLICABLE) is NOT_APPLICABLE
    assert RewardResult(1.0).applicable
    with pytest.raises(TypeError, match="read-only"):
        result["reward"] = 1.0  # type: ignore[index]
    with pytest.raises(ValueError, match="'reward' key"):
        NotApplicable("x", {"reward": 1.0})


def test_the_result_schema_reads_not_applicable_returns_as_rows_of_fills() -> None:
    from rewardkit.schema import result_schema

    assert result_schema(needs_gold).keys == ("checked",)
    results = asyncio.run(calculate_rewards(needs_gold, [{"final_response": "1", "answer": None}]))
    assert result_schema(needs_gold).conform(results[0].extras) == {"checked": False}
