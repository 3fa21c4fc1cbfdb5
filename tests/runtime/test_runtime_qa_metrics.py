"""SQuAD-style QA grading, the built-in qa_f1_reward, and compute_data_metrics."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rewardkit import (
    RewardResult,
    Trajectory,
    calculate_rewards,
    compute_data_metrics,
    get_reward,
    reward,
)
from rewardkit.qa import em_score, f1_score, normalize_answer, qa_scores


@pytest.mark.parametrize(
    ("text", "normalized"),
    [
        ("The Eiffel Tower!", "eiffel tower"),
        ("  an   apple, a pear  ", "apple pear"),
        ("Theory of Relativity", "theory of relativity"),  # 'the' inside a word stays
        ("U.S.A.", "usa"),
    ],
)
def test_squad_normalization(text: str, normalized: str) -> None:
    assert normalize_answer(text) == normalized


def test_token_f1_precision_recall_and_exact_match() -> None:
    f1, precision, recall = f1_score("the big red barn", "red barn")
    assert (precision, recall) == (2 / 3, 1.0)
    assert f1 == pytest.approx(0.8)
    assert em_score("The Barn.", "barn") == 1.0
    assert em_score("red barn", "barn") == 0.0
    assert f1_score("cat", "dog") == (0.0, 0.0, 0.0)


def test_yes_no_answers_score_zero_unless_equal_and_best_of_several_golds() -> None:
    assert qa_scores("yes it is", "yes").f1 == 0.0
    assert qa_scores("Yes", "yes").em == 1.0
    assert qa_scores("Paris", ["London", "paris"]).f1 == 1.0
    with pytest.raises(TypeError, match="gold must be a str or a non-empty sequence of str"):
        qa_scores("x", [])


def test_builtin_qa_f1_reward_returns_f1_and_its_parts() -> None:
    qa = get_reward("qa_f1_reward")
    assert qa.parameters == ("final_response", "answer", "trajectory")
    result = qa(final_response="the big red barn", answer="red barn", trajectory=[])
    assert result.reward == pytest.approx(0.8)
    assert set(result.extras) == {"f1", "em", "precision", "recall"}
    assert result.extras["em"] == 0.0


async def test_seed_qa_f1_reward_example_runs_as_written_and_takes_the_builtin_name() -> None:
    # AgentFly's documented example, imports switched to rewardkit; it shadows the built-in.
    @reward(name="qa_f1_reward")
    def qa_f1_reward(final_response: str, answer: str, trajectory: list[str]) -> float:
        response = final_response
        f1, precision, recall = f1_score(response, answer)
        em = em_score(response, answer)
        return {"reward": f1, "f1": f1, "em": em, "precision": precision, "recall": recall}

    assert get_reward("qa_f1_reward") is qa_f1_reward
    samples = [
        {"final_response": "Paris", "answer": "paris", "trajectory": [], "id": "a"},
        {"final_response": "I think London", "answer": "paris", "trajectory": [], "id": "b"},
    ]
    results = await calculate_rewards(qa_f1_reward, samples)
    assert results[0] == RewardResult(1.0, {"f1": 1.0, "em": 1.0, "precision": 1.0, "recall": 1.0})
    assert results[1].reward == 0.0
    metrics = compute_data_metrics(results)
    assert metrics["reward/mean"] == 0.5
    assert metrics["reward_extra/em/max"] == 1.0


def test_data_metrics_aggregate_numbers_and_bools_over_samples_that_have_them() -> None:
    results = [
        RewardResult(1.0, {"f1": 1.0, "correct": True, "note": "exact"}),
        RewardResult(0.0, {"f1": 0.5, "correct": False}),
        RewardResult(0.5, {"correct": True, "length": 10}),
    ]
    metrics = compute_data_metrics(results)
    assert metrics == {
        "reward/mean": 0.5,
        "reward/max": 1.0,
        "reward/min": 0.0,
        "reward_extra/correct/mean": pytest.approx(2 / 3),
        "reward_extra/correct/max": 1.0,
        "reward_extra/correct/min": 0.0,
        "reward_extra/f1/mean": 0.75,
        "reward_extra/f1/max": 1.0,
        "reward_extra/f1/min": 0.5,
        "reward_extra/f1/count": 2,
        "reward_extra/length/mean": 10.0,
        "reward_extra/length/max": 10.0,
        "reward_extra/length/min": 10.0,
        "reward_extra/length/count": 1,
    }
    assert results[0].extras["note"] == "exact"  # non-numeric extras stay on the result


def test_data_metrics_over_trajectories_and_dicts() -> None:
    done = Trajectory(rollout_id="r1", group_id="g")
    done.record(RewardResult(0.25, {"steps": 3}))
    pending = Trajectory(rollout_id="r2")  # no reward yet
    metrics = compute_data_metrics([done, pending, {"reward": 0.75, "steps": 5}])
    assert metrics["reward/mean"] == 0.5
    assert metrics["reward_extra/steps/mean"] == 4.0
    assert metrics["reward_extra/steps/count"] == 2
    assert compute_data_metrics([]) == {}
    with pytest.raises(TypeError, match=r"results\[0\] is a float"):
        compute_data_metrics([0.5])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"results\[1\]\['reward'\] is 'high', not a number"):
        compute_data_metrics([{"reward": 1.0}, {"reward": "high"}])


def test_numpy_numbers_and_bools_in_extras_are_aggregated() -> None:
    results = [
        RewardResult(1.0, {"correct": np.bool_(True), "f1": np.float32(0.5), "steps": np.array(4)}),
        RewardResult(0.0, {"correct": np.bool_(False), "f1": np.float64(1.0), "steps": np.array([1, 2])}),
    ]
    metrics = compute_data_metrics(results)
    assert metrics["reward_extra/correct/mean"] == 0.5
    assert metrics["reward_extra/f1/max"] == 1.0
    assert metrics["reward_extra/steps/mean"] == 4.0  # the 1-d array is not a number: not counted
    assert metrics["reward_extra/steps/count"] == 1


@given(st.text(max_size=40), st.text(max_size=40))
def test_qa_scores_are_bounded_and_exact_answers_score_one(prediction: str, gold: str) -> None:
    scores = qa_scores(prediction, gold)
    assert 0.0 <= scores.f1 <= 1.0
    assert scores.em in (0.0, 1.0)
    if normalize_answer(gold):
        assert qa_scores(gold, gold).f1 == 1.0
