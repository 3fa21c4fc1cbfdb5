"""math_reward through the runtime: registered, fields final_response/answer, stable extras."""

from __future__ import annotations

import pytest

from rewardkit import RewardResult, calculate_reward, calculate_rewards, get_reward
from rewardkit.adapters import to_verl
from rewardkit.math import FailureTag, grading
from rewardkit.math.comparison import Outcome
from rewardkit.math.reward import MathHarnessError, math_reward
from rewardkit.runtime.define.errors import RewardError


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


class _OverloadedSandbox:
    """Stands for a machine too busy to give the symbolic budget."""

    outcome = Outcome(False, "overloaded", "the symbolic work did not finish within the 10 s wall ceiling")

    def start_in_background(self) -> None:
        pass

    def run(self, *args: object, **kwargs: object) -> Outcome:
        return self.outcome


class _TimeoutSandbox(_OverloadedSandbox):
    """Stands for an answer that used up its CPU budget."""

    outcome = Outcome(False, "timeout")


def test_a_timeout_is_a_wrong_answer_not_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grading, "default_sandbox", _TimeoutSandbox)
    result = math_reward(final_response="\\boxed{(q+19)^2}", answer="q^2+38q+361")
    assert (result.reward, result.extras) == (0.0, {"correct": False, "tag": "WRONG_ANSWER", "reason": "timeout"})


@pytest.mark.parametrize(
    ("response", "gold", "reason"),
    [("\\boxed{4}", "", "bad_gold"), ("\\boxed{(q+16)^2}", "q^2+32q+256", "overloaded")],
)
def test_a_harness_error_raises_a_typed_error_never_a_silent_zero(
    monkeypatch: pytest.MonkeyPatch, response: str, gold: str, reason: str
) -> None:
    monkeypatch.setattr(grading, "default_sandbox", _OverloadedSandbox)
    with pytest.raises(MathHarnessError) as caught:
        math_reward(final_response=response, answer=gold)
    assert isinstance(caught.value, RewardError)
    assert (caught.value.verdict.tag, caught.value.verdict.reason) == (FailureTag.HARNESS_ERROR, reason)
    assert f"({reason})" in str(caught.value)


async def test_calculate_rewards_records_a_harness_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grading, "default_sandbox", _OverloadedSandbox)
    samples = [
        {"final_response": "\\boxed{2}", "answer": "2"},
        {"final_response": "\\boxed{(q+17)^2}", "answer": "q^2+34q+289"},
        {"final_response": "\\boxed{3}", "answer": "2"},
    ]
    results = await calculate_rewards(math_reward, samples, on_error="record")
    assert [result.reward for result in results] == [1.0, 0.0, 0.0]
    assert "error" not in results[0].extras
    assert "error" not in results[2].extras
    assert results[1].extras["error"].startswith("MathHarnessError: math_reward could not grade this sample (overloaded)")


def test_to_verl_reports_a_harness_error_and_counts_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grading, "default_sandbox", _OverloadedSandbox)
    compute_score = to_verl("math_reward")
    good = compute_score(data_source="math", solution_str="\\boxed{2}", ground_truth="2", extra_info={})
    busy = compute_score(data_source="math", solution_str="\\boxed{(q+18)^2}", ground_truth="q^2+36q+324", extra_info={})
    assert (good["score"], good["error"]) == (1.0, "")
    assert busy["score"] == 0.0
    assert "MathHarnessError" in busy["error"]
    assert "overloaded" in busy["error"]
    assert (compute_score.stats.calls, compute_score.stats.failures) == (2, 1)
