"""verl adapter: called exactly as verl 0.9's reward managers call ``compute_score``."""

from __future__ import annotations

import asyncio
import inspect
from functools import partial

import pytest
from adapter_rewards import (
    dapo_like,
    echo_fields,
    exact,
    exact_async,
    reserved_extra,
    uneven_extras,
)

from rewardkit.adapters import AsyncVerlReward, VerlReward, to_verl
from rewardkit.runtime.define.errors import FieldCollisionError, MissingFieldError, RewardShapeError


def test_naive_manager_keyword_call_maps_fields_and_keeps_extras() -> None:
    compute_score = to_verl(exact)
    # verl's NaiveRewardManager: compute_score(data_source=, solution_str=, ground_truth=, extra_info=)
    result = compute_score(
        data_source="openai/gsm8k",
        solution_str="42",
        ground_truth="42",
        extra_info={"split": "train", "index": 3, "num_turns": None, "rollout_reward_scores": {}},
    )
    assert result == {"score": 1.0, "matched": True, "length": 2, "error": ""}
    assert isinstance(compute_score, VerlReward)
    assert compute_score.__name__ == "adapters_exact"


def test_prime_manager_positional_call() -> None:
    compute_score = to_verl(exact)
    # verl's prime manager: partial(evaluation_func, task, completion, reference, task_extra_info),
    # then float(result[0]) for anything that is not a number
    result = partial(compute_score, "math", "8", "8", None)()
    assert result["score"] == float(result[0]) == 1.0
    assert 0 not in result
    assert list(result) == ["score", "matched", "length", "error"]


def test_an_acc_extra_passes_through_and_a_failed_samples_acc_is_zero() -> None:
    compute_score = to_verl(dapo_like)
    assert compute_score(data_source="d", solution_str="42", ground_truth="42") == {
        "score": 1.0, "acc": True, "pred": "42", "error": "",
    }
    failed = compute_score(data_source="d", solution_str="boom", ground_truth="42")
    assert failed == {"score": 0.0, "acc": 0.0, "pred": None, "error": "RuntimeError: boom in the response"}
    batch = to_verl(dapo_like)(data_sources=["d"] * 2, solution_strs=["boom", "41"], ground_truths=["42"] * 2)
    # a failure before the first success still gets the batch's keys
    assert [sorted(row) for row in batch] == [["acc", "error", "pred", "score"]] * 2
    assert [row["acc"] for row in batch] == [0.0, False]


def test_fields_the_reward_receives() -> None:
    compute_score = to_verl(echo_fields)
    result = compute_score(
        data_source="gsm8k",
        solution_str="The answer is 4",
        ground_truth="4",
        extra_info={"question": "2+2?", "answer": "raw solution text"},
        sandbox_fusion_url="http://sandbox",  # verl passes reward_kwargs from the config as keywords
    )
    seen = result["seen"]
    assert seen["final_response"] == "The answer is 4"
    assert seen["answer"] == "4"  # ground_truth wins over extra_info's 'answer'
    assert seen["question"] == "2+2?"
    assert seen["data_source"] == "gsm8k"
    assert seen["sandbox_fusion_url"] == "http://sandbox"
    assert seen["trajectory"] == [{"role": "assistant", "content": "The answer is 4"}]


def test_field_map_renames_and_drops() -> None:
    compute_score = to_verl(echo_fields, field_map={"ground_truth": "gold", "question": None})
    seen = compute_score(
        data_source="d", solution_str="x", ground_truth="g", extra_info={"question": "q", "level": 3}
    )["seen"]
    assert seen["gold"] == "g"
    assert "answer" not in seen
    assert "question" not in seen
    assert seen["level"] == 3


def test_missing_field_raises_even_under_fallback_policy() -> None:
    compute_score = to_verl(exact, field_map={"ground_truth": "gold"})
    with pytest.raises(MissingFieldError, match="'answer'"):
        compute_score(data_source="d", solution_str="x", ground_truth="g", extra_info={})


def test_extra_info_key_named_like_a_predefined_field_is_a_clear_error() -> None:
    compute_score = to_verl(exact)
    with pytest.raises(FieldCollisionError, match=r"'trajectory'.*field_map=\{'trajectory'"):
        compute_score(data_source="d", solution_str="x", ground_truth="x", extra_info={"trajectory": []})


def test_batch_manager_plural_lists() -> None:
    compute_score = to_verl(exact)
    # verl's BatchRewardManager: compute_score(data_sources=, solution_strs=, ground_truths=, extra_infos=)
    scores = compute_score(
        data_sources=["a", "b", "c"],
        solution_strs=["1", "2", "3"],
        ground_truths=["1", "0", "3"],
        extra_infos=[{"rollout_reward_scores": {}}, {"rollout_reward_scores": {}}, {"rollout_reward_scores": {}}],
    )
    assert [score["score"] for score in scores] == [1.0, 0.0, 1.0]
    assert {frozenset(score) for score in scores} == {frozenset({"score", "matched", "length", "error"})}


def test_batch_with_mismatched_lists_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="ground_truths has 1 entries but solution_strs has 2"):
        to_verl(exact)(data_sources=["a", "b"], solution_strs=["1", "2"], ground_truths=["1"], extra_infos=None)


def test_same_key_set_on_every_sample() -> None:
    compute_score = to_verl(uneven_extras)
    first = compute_score(data_source="d", solution_str="hi", ground_truth=None, extra_info=None)
    later = compute_score(data_source="d", solution_str="a long response", ground_truth=None, extra_info=None)
    assert set(first) == set(later) == {"score", "length", "short", "error"}
    assert later["short"] is None  # verl's validation metrics skip None


def test_declared_extra_keys_fix_the_key_set() -> None:
    compute_score = to_verl(uneven_extras, extra_keys=["length"], missing_extra=-1)
    assert compute_score(data_source="d", solution_str="hi", ground_truth=None, extra_info=None) == {
        "score": 1.0,
        "length": 2,
        "error": "",
    }


@pytest.mark.parametrize("key", ["score", "uid", "data_source"])
def test_reserved_extra_names_are_rejected(key: str) -> None:
    with pytest.raises(RewardShapeError, match=rf"extra '{key}'.*verl reserves"):
        to_verl(exact, extra_keys=[key])
    with pytest.raises(RewardShapeError, match="cannot hold 'reward'"):
        to_verl(exact, extra_keys=["reward"])


def test_reserved_extra_in_the_rewards_returns_raises_when_the_adapter_is_built() -> None:
    with pytest.raises(RewardShapeError, match=r"'adapters_reserved': extra 'uid' in its returns .*groups GRPO's samples"):
        to_verl(reserved_extra)


def test_async_reward_gives_an_async_adapter_verl_awaits() -> None:
    compute_score = to_verl(exact_async)
    assert isinstance(compute_score, AsyncVerlReward)
    # verl's reward loop decides with inspect.iscoroutinefunction(compute_score)
    assert inspect.iscoroutinefunction(compute_score)
    assert asyncio.iscoroutinefunction(compute_score)
    assert list(inspect.signature(compute_score).parameters) == [
        "data_source",
        "solution_str",
        "ground_truth",
        "extra_info",
        "kwargs",
    ]
    # verl's reward loop (naive manager) with a reward router configured:
    result = asyncio.run(
        compute_score(
            data_source="d",
            solution_str=" 5 ",
            ground_truth="5",
            extra_info={"num_turns": 2, "rollout_reward_scores": {}},
            reward_router_address="127.0.0.1:8000",
            reward_model_tokenizer=object(),
        )
    )
    assert result == {"score": 1.0, "matched": True, "length": 3, "error": ""}


def test_sync_adapter_is_not_mistaken_for_async() -> None:
    assert not inspect.iscoroutinefunction(to_verl(exact))


def test_async_reward_under_a_classic_manager() -> None:
    compute_score = to_verl(exact_async, asynchronous=False)
    assert not inspect.iscoroutinefunction(compute_score)
    assert compute_score(data_source="d", solution_str="5", ground_truth="5", extra_info=None)["score"] == 1.0
    batch = compute_score(data_sources=["d", "d"], solution_strs=["5", "6"], ground_truths=["5", "5"], extra_infos=None)
    assert [item["score"] for item in batch] == [1.0, 0.0]


async def test_async_adapter_batch_on_a_running_loop() -> None:
    compute_score = to_verl(exact_async)
    results = await compute_score(
        data_sources=["d"] * 3, solution_strs=["1", "2", "3"], ground_truths=["1", "2", "0"], extra_infos=[{}] * 3
    )
    assert [item["score"] for item in results] == [1.0, 1.0, 0.0]


async def test_sync_adapter_called_inside_a_running_loop_runs_an_async_reward() -> None:
    compute_score = to_verl(exact_async, asynchronous=False)
    assert compute_score(data_source="d", solution_str="1", ground_truth="1", extra_info=None)["score"] == 1.0


def test_registry_name_is_accepted() -> None:
    assert to_verl("adapters_exact")(data_source="d", solution_str="1", ground_truth="1")["score"] == 1.0


def test_fallback_none_is_rejected_for_verl() -> None:
    with pytest.raises(RewardShapeError, match="fallback=None is not allowed for verl"):
        VerlReward(exact, fallback=None)
