"""Group and batch rewards under ``calculate_rewards``: grouping, results, failures, timeouts."""

from __future__ import annotations

import asyncio
import pickle
import threading
from typing import Any

import pytest

from rewardkit import (
    GroupingError,
    MissingFieldError,
    RewardShapeError,
    calculate_reward,
    calculate_rewards,
    group_reward,
)
from rewardkit.runtime.batch.groups import consecutive_groups, group_indices


@group_reward(name="rank_in_group", auto_register=False)
def rank_in_group(final_response: list[str]) -> list[float]:
    """The completion's rank by length within its group, scaled to [0, 1]; records each call."""
    CALLS.append(list(final_response))
    order = sorted(range(len(final_response)), key=lambda index: len(final_response[index]))
    ranks = [0.0] * len(final_response)
    for rank, index in enumerate(order):
        ranks[index] = rank / max(1, len(final_response) - 1)
    return ranks


CALLS: list[list[str]] = []


@group_reward(name="batch_scorer", over="batch", auto_register=False)
async def batch_scorer(final_response: list[str], answer: list[str]) -> list[Any]:
    """A reward model scoring a batch at once; ``None`` = not applicable (no gold)."""
    await asyncio.sleep(0)
    return [None if gold is None else {"reward": float(text == gold), "seen": len(final_response)} for text, gold in zip(final_response, answer)]


SAMPLES = [
    {"final_response": "aaa", "answer": "aaa", "prompt": "p1"},
    {"final_response": "b", "answer": "aaa", "prompt": "p2"},
    {"final_response": "a", "answer": "aaa", "prompt": "p1"},
    {"final_response": "bb", "answer": None, "prompt": "p2"},
    {"final_response": "aa", "answer": "aa", "prompt": "p1"},
]


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def test_a_group_reward_sees_the_samples_of_one_group_in_order() -> None:
    CALLS.clear()
    results = run(calculate_rewards(rank_in_group, SAMPLES, group_by="prompt"))
    assert sorted(CALLS) == [["aaa", "a", "aa"], ["b", "bb"]]
    assert [result.reward for result in results] == [1.0, 0.0, 0.0, 1.0, 0.5]


def test_a_batch_reward_sees_the_whole_batch_and_none_is_not_applicable() -> None:
    results = run(calculate_rewards(batch_scorer, SAMPLES))
    assert [result.reward for result in results] == [1.0, 0.0, 0.0, None, 1.0]
    assert [result.applicable for result in results] == [True, True, True, False, True]
    assert {result.get("seen") for result in results if result.applicable} == {5}
    grouped = run(calculate_rewards(batch_scorer, SAMPLES, group_by="prompt"))  # the caller may group it
    assert [result.get("seen") for result in grouped] == [3, 2, 3, None, 3]


def test_a_group_reward_without_a_grouping_is_a_clear_error() -> None:
    with pytest.raises(GroupingError, match="group_by='<field>'"):
        run(calculate_rewards(rank_in_group, SAMPLES))
    with pytest.raises(GroupingError, match=r"samples\[1\] has no field 'prompt'"):
        run(calculate_rewards(rank_in_group, [SAMPLES[0], {"final_response": "x"}], group_by="prompt"))
    with pytest.raises(GroupingError, match="cannot identify a group"):
        run(calculate_rewards(rank_in_group, [{"final_response": "x", "prompt": ["a"]}], group_by="prompt"))


def test_one_sample_is_not_a_group() -> None:
    with pytest.raises(TypeError, match="is a group reward"):
        run(calculate_reward(rank_in_group, final_response="x"))


def test_direct_call_with_lists() -> None:
    assert [r.reward for r in rank_in_group(final_response=["ccc", "a"])] == [1.0, 0.0]
    with pytest.raises(ValueError, match="differ in length"):
        batch_scorer(final_response=["a"], answer=["a", "b"])


@group_reward(name="wrong_length", over="batch", auto_register=False)
def wrong_length(final_response: list[str]) -> list[float]:
    return [1.0]


@group_reward(name="bad_value", over="batch", auto_register=False)
def bad_value(final_response: list[str]) -> list[Any]:
    return [1.0, "high"]


@group_reward(name="raises_on_p2", auto_register=False)
def raises_on_p2(final_response: list[str], prompt: list[str]) -> list[float]:
    if prompt[0] == "p2":
        raise RuntimeError("no judge for p2")
    return [1.0] * len(final_response)


def test_a_bad_return_shape_names_the_reward_and_the_sample() -> None:
    with pytest.raises(RewardShapeError, match="returned 1 results for a group of 2"):
        run(calculate_rewards(wrong_length, SAMPLES[:2]))
    with pytest.raises(RewardShapeError, match="sample 1 of the group"):
        run(calculate_rewards(bad_value, SAMPLES[:2]))


def test_a_failing_group_fails_its_samples_only() -> None:
    results = run(calculate_rewards(raises_on_p2, SAMPLES, group_by="prompt", on_error="record"))
    assert [result.reward for result in results] == [1.0, 0.0, 1.0, 0.0, 1.0]
    assert results[1]["error"] == results[3]["error"] == "RuntimeError: no judge for p2"
    with pytest.raises(RuntimeError, match="no judge") as raised:
        run(calculate_rewards(raises_on_p2, SAMPLES, group_by="prompt"))
    assert "samples[1, 3]" in " ".join(raised.value.__notes__)


def test_missing_fields_in_a_group() -> None:
    with pytest.raises(MissingFieldError, match="answer"):  # no sample has it: configuration error
        run(calculate_rewards(batch_scorer, [{"final_response": "a"}], on_error="record"))
    partial = [{"final_response": "a", "answer": "a"}, {"final_response": "b"}]
    results = run(calculate_rewards(batch_scorer, partial, on_error="record"))
    assert all(result["error"].startswith("MissingFieldError") for result in results)


RELEASE = threading.Event()


@group_reward(name="hangs", over="batch", auto_register=False)
def hangs(final_response: list[str]) -> list[float]:
    RELEASE.wait(30)
    return [1.0] * len(final_response)


def test_the_timeout_applies_to_a_group_call() -> None:
    RELEASE.clear()
    try:
        results = run(calculate_rewards(hangs, SAMPLES[:2], timeout=0.2, on_error="record"))
    finally:
        RELEASE.set()
    assert all("took longer than 0.2 s" in result["error"] for result in results)
    assert "the group of samples[0, 1]" in results[0]["error"]


def test_group_indices_and_consecutive_groups() -> None:
    assert group_indices(SAMPLES, "prompt", reward_name="r", over="group") == [[0, 2, 4], [1, 3]]
    assert group_indices(SAMPLES, None, reward_name="r", over="batch") == [[0, 1, 2, 3, 4]]
    assert consecutive_groups(7, 3) == [[0, 1, 2], [3, 4, 5], [6]]


def test_group_rewards_pickle_by_reference() -> None:
    assert pickle.loads(pickle.dumps(rank_in_group)) is rank_in_group
