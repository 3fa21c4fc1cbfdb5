"""math_reward through the runtime: registered, fields final_response/answer, stable extras."""

from __future__ import annotations

import pytest

from rewardkit import RewardResult, calculate_reward, get_reward
from rewardkit.math.reward import math_reward


def test_math_reward_is_registered_with_its_fields() -> None:
    assert get_reward("math_reward") is math_reward
    assert math_reward.name == "math_reward"
    assert math_reward.parameters == ("final_response", "answer")
    assert not math_reward.is_async


@pytest.mark.parametrize(
    ("response", "gold", "reward", "tag", "reason"),
    [
        ("so \\boxed{\\frac{1}{2}}", "0.5", 1.0, "", "rational"),
        ("so \\boxed{3}", "4", 0.0, "WRONG_ANSWER", "rational"),
        ("no box", "4", 0.0, "NO_ANSWER", "no_answer"),
        ("\\boxed{3 \\text{ or } 4}", "4", 0.0, "WRONG_ANSWER", "hedge"),
        ("\\boxed{4}", "", 0.0, "HARNESS_ERROR", "bad_gold"),
    ],
)
def test_math_reward_result(response: str, gold: str, reward: float, tag: str, reason: str) -> None:
    result = math_reward(final_response=response, answer=gold)
    assert isinstance(result, RewardResult)
    assert result.reward == reward
    assert result.extras == {"correct": reward == 1.0, "tag": tag, "reason": reason}
    assert {key: type(value) for key, value in result.extras.items()} == {"correct": bool, "tag": str, "reason": str}


async def test_math_reward_through_calculate_reward() -> None:
    result = await calculate_reward(math_reward, final_response="\\boxed{2\\sqrt2}", answer="\\sqrt8")
    assert result is not None
    assert (result.reward, result.extras["reason"]) == (1.0, "symbolic")


def test_positional_arguments_are_refused() -> None:
    with pytest.raises(TypeError):
        math_reward("\\boxed{1}", "1")  # type: ignore[call-arg]
