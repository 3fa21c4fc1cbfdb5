"""The adapters' own per-call timeout and error policy: fallback, ``error`` extra, counters."""

from __future__ import annotations

import asyncio
import logging

import pytest
from adapter_rewards import exact, picky, picky_async

from rewardkit.adapters import to_agentfly, to_openrlhf, to_trl, to_verl
from rewardkit.runtime.define.errors import RewardValueError


def test_exception_yields_fallback_error_extra_and_is_counted(caplog: pytest.LogCaptureFixture) -> None:
    compute_score = to_verl(picky, fallback=-0.5)
    with caplog.at_level(logging.WARNING, logger="rewardkit.adapters"):
        result = compute_score(data_source="d", solution_str="boom", ground_truth="1", extra_info=None)
    assert result == {"score": -0.5, "error": "RuntimeError: boom in the response"}
    assert compute_score.stats.calls == 1
    assert compute_score.stats.failures == 1
    assert compute_score.stats.timeouts == 0
    assert "boom in the response" in caplog.text
    assert "adapters_picky" in caplog.text


def test_non_finite_reward_is_a_failure() -> None:
    compute_score = to_verl(picky)
    result = compute_score(data_source="d", solution_str="nan", ground_truth="1", extra_info=None)
    assert result["score"] == 0.0
    assert result["error"].startswith("RewardValueError")


def test_on_error_raise_propagates() -> None:
    compute_score = to_verl(picky, on_error="raise")
    with pytest.raises(RuntimeError, match="boom"):
        compute_score(data_source="d", solution_str="boom", ground_truth="1", extra_info=None)
    with pytest.raises(RewardValueError):
        compute_score(data_source="d", solution_str="nan", ground_truth="1", extra_info=None)


def test_sync_reward_timeout() -> None:
    compute_score = to_verl(picky, timeout=0.2, fallback=0.0)
    result = compute_score(data_source="d", solution_str="sleep", ground_truth="1", extra_info=None)
    assert result["score"] == 0.0
    assert result["error"].startswith("TimeoutError")
    assert "0.2 s" in result["error"]
    assert (compute_score.stats.failures, compute_score.stats.timeouts) == (1, 1)
    # The adapter keeps working after a timeout.
    ok = compute_score(data_source="d", solution_str="1", ground_truth="1", extra_info=None)
    assert ok == {"score": 1.0, "error": ""}


def test_batch_timeout_hits_only_the_slow_sample() -> None:
    reward_func = to_trl(picky, timeout=0.3)
    rewards = reward_func(
        prompts=["p"] * 3, completions=["1", "sleep", "boom"], completion_ids=None, answer=["1", "1", "1"]
    )
    assert rewards == [1.0, 0.0, 0.0]
    assert (reward_func.stats.calls, reward_func.stats.failures, reward_func.stats.timeouts) == (3, 2, 1)


async def test_async_reward_timeout_on_the_callers_loop() -> None:
    reward_func = to_trl(picky_async, timeout=0.2)
    rewards = await reward_func(prompts=["p"] * 2, completions=["sleep", "1"], completion_ids=None, answer=["1"] * 2)
    assert rewards == [0.0, 1.0]
    assert reward_func.stats.timeouts == 1


def test_async_reward_timeout_in_the_sync_openrlhf_adapter() -> None:
    reward_func = to_openrlhf(picky_async, timeout=0.2, return_tensors=False)
    info = reward_func(["Q sleep"], ["Q"], ["1"])
    assert info["rewards"] == [0.0]
    assert info["extra_logs"]["error"] == [1.0]
    assert reward_func.stats.timeouts == 1


def test_agentfly_adapter_failure_shape() -> None:
    adapter = to_agentfly(picky_async, timeout=0.2, fallback=0.0)
    result = asyncio.run(adapter(final_response="boom", answer="1", trajectory=[], id="r1"))
    assert result == {"reward": 0.0, "error": "RuntimeError: boom in the response"}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"timeout": 0}, "timeout must be positive"),
        ({"on_error": "ignore"}, "on_error must be 'fallback' or 'raise'"),
        ({"concurrency": 0}, "concurrency must be a positive integer"),
        ({"fallback": float("nan")}, "non-finite"),
    ],
)
def test_bad_options_are_clear_errors(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        to_verl(exact, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("reward", [picky, picky_async], ids=["sync", "async"])
def test_a_timeout_error_the_reward_raises_is_a_failure_not_an_adapter_timeout(reward: object) -> None:
    compute_score = to_verl(reward, asynchronous=False, timeout=5.0)
    result = compute_score(data_source="d", solution_str="upstream", ground_truth="1", extra_info=None)
    assert result == {"score": 0.0, "error": "TimeoutError: upstream API timed out"}
    assert (compute_score.stats.failures, compute_score.stats.timeouts) == (1, 0)
