"""``weighted_sum``: TRL's and verifiers' weighted sum of rewards, each component logged."""

from __future__ import annotations

import asyncio
import pickle
from typing import Any

import pytest

from rewardkit import (
    NOT_APPLICABLE,
    MissingFieldError,
    RewardComponentError,
    calculate_reward,
    calculate_rewards,
    group_reward,
    reward,
    weighted_sum,
)
from rewardkit.composition import WeightedGroupReward, WeightedReward


@reward(name="accuracy", auto_register=False)
def accuracy(final_response: str, answer: str) -> dict[str, Any]:
    if answer is None:
        return NOT_APPLICABLE
    return {"reward": float(final_response == answer), "pred": final_response}


@reward(name="brevity", auto_register=False)
async def brevity(final_response: str, limit: int = 10) -> float:
    if final_response == "boom":
        raise RuntimeError("boom")
    return 1.0 if len(final_response) <= limit else 0.0


@group_reward(name="group_share", auto_register=False)
def group_share(final_response: list[str]) -> list[float]:
    return [1.0 / len(final_response)] * len(final_response)


SAMPLES = [
    {"final_response": "4", "answer": "4", "prompt": "a"},
    {"final_response": "a very long wrong answer", "answer": "4", "prompt": "a"},
    {"final_response": "7", "answer": None, "prompt": "b"},
]


def rewards_of(results: list[Any]) -> list[Any]:
    return [result.reward for result in results]


def test_weighted_sum_of_sync_and_async_rewards_logs_each_component() -> None:
    total = weighted_sum([accuracy, brevity], [1.0, 0.5], name="total")
    assert isinstance(total, WeightedReward)
    assert total.is_async
    assert set(total.parameters) == {"final_response", "answer", "limit"}
    results = asyncio.run(calculate_rewards(total, SAMPLES))
    assert rewards_of(results) == [1.5, 0.0, 0.5]  # accuracy not applicable: left out of the sum
    assert results[0].extras == {"accuracy": 1.0, "accuracy/pred": "4", "brevity": 1.0}
    assert results[2].extras == {"accuracy": None, "brevity": 1.0}


def test_weight_zero_is_a_metric_only() -> None:
    total = weighted_sum([accuracy, brevity], [1.0, 0.0], name="acc_with_brevity_metric")
    results = asyncio.run(calculate_rewards(total, SAMPLES))
    assert rewards_of(results)[:2] == [1.0, 0.0]
    assert [result["brevity"] for result in results] == [1.0, 0.0, 1.0]
    # every weighted component not applicable: the composition is not applicable
    assert not results[2].applicable
    assert results[2]["brevity"] == 1.0


def test_a_failing_component_fails_the_sample_naming_it() -> None:
    total = weighted_sum([accuracy, brevity], name="total")
    results = asyncio.run(calculate_rewards(total, [{"final_response": "boom", "answer": "4"}], on_error="record"))
    assert results[0]["error"] == "RewardComponentError: component 'brevity' of weighted reward 'total' failed: RuntimeError: boom"
    with pytest.raises(RewardComponentError) as raised:
        asyncio.run(calculate_reward(total, final_response="boom", answer="4"))
    assert raised.value.component == "brevity"


def test_a_missing_field_stays_a_configuration_error() -> None:
    total = weighted_sum([accuracy, brevity], name="total")
    with pytest.raises(MissingFieldError, match="answer"):
        asyncio.run(calculate_rewards(total, [{"final_response": "x"}], on_error="record"))


def test_with_a_group_component_the_sum_is_a_group_reward() -> None:
    total = weighted_sum([accuracy, group_share], [1.0, 2.0], name="grouped")
    assert isinstance(total, WeightedGroupReward)
    assert total.over == "group"
    results = asyncio.run(calculate_rewards(total, SAMPLES, group_by="prompt"))
    assert rewards_of(results) == [2.0, 1.0, 2.0]
    assert results[1].extras == {"accuracy": 0.0, "accuracy/pred": "a very long wrong answer", "group_share": 0.5}


def test_labels_weights_and_names_are_checked() -> None:
    with pytest.raises(ValueError, match="labelled 'accuracy'"):
        weighted_sum([accuracy, accuracy], name="twice")
    twice = weighted_sum([accuracy, accuracy], [1.0, -1.0], labels=["plus", "minus"], name="zero")
    assert twice(final_response="4", answer="4").reward == 0.0
    with pytest.raises(ValueError, match="finite number"):
        weighted_sum([accuracy], [float("nan")], name="nan")
    with pytest.raises(ValueError, match="one weight"):
        weighted_sum([accuracy, brevity], [1.0], name="short")
    with pytest.raises(ValueError, match="other than 'reward'"):
        weighted_sum([accuracy], labels=["reward"], name="clash")


def test_components_by_registry_name_and_pickling() -> None:
    total = weighted_sum(["tag_count_reward", "reasoning_steps_reward"], [1.0, 0.5], name="shape")
    text = "<think>\nStep 1: a\nStep 2: b\nStep 3: c\n</think>\n<answer>\n1\n</answer>"
    assert total(final_response=text).reward == 1.5
    restored = pickle.loads(pickle.dumps(total))
    assert restored(final_response=text) == total(final_response=text)
    assert restored.weights == (1.0, 0.5)
    assert restored.labels == ("tag_count_reward", "reasoning_steps_reward")
