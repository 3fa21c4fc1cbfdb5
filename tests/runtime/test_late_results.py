"""Issue 32, item 5: a result that arrives after its deadline is a timeout, whatever the reward's
kind. An async reward that blocks the event loop (``time.sleep`` in a coroutine) cannot be
interrupted: it used to score its late value; the loop it blocks makes the other rewards on it
late too. A sync reward in a thread is judged by when it returned, not by when the blocked loop
got to its result."""

from __future__ import annotations

import asyncio
import time

import pytest

from rewardkit import calculate_rewards, reward
from rewardkit.adapters import to_verl

SAFETY = 30.0  # seconds: only against a hang, never a performance bound


@reward(name="blocks_then_scores", auto_register=False)
async def blocks_then_scores(final_response: str) -> float:
    time.sleep(0.6)  # noqa: ASYNC251  # rewardkit: ignore[RK303] (blocks the loop on purpose)
    return 1.0


@reward(name="blocks_then_raises", auto_register=False)
async def blocks_then_raises(final_response: str) -> float:
    time.sleep(0.6)  # noqa: ASYNC251  # rewardkit: ignore[RK303]
    raise ValueError("too late to matter")


@reward(name="awaits_briefly", auto_register=False)
async def awaits_briefly(final_response: str) -> float:
    await asyncio.sleep(0.01)
    return 1.0


@reward(name="sleeps_in_its_thread", auto_register=False)
def sleeps_in_its_thread(final_response: str) -> float:
    time.sleep(float(final_response))
    return 1.0


TIMED_OUT = "TimeoutError: reward '{}' on samples[0] took longer than 0.2 s"


@pytest.mark.parametrize("blocking", [blocks_then_scores, blocks_then_raises])
async def test_an_async_reward_that_blocks_past_its_timeout_is_timed_out(blocking: object) -> None:
    results = await asyncio.wait_for(
        calculate_rewards(blocking, [{"final_response": "x"}], timeout=0.2, on_error="record"),
        SAFETY,
    )
    assert results[0].reward == 0.0
    assert results[0]["error"] == TIMED_OUT.format(blocking.name)  # type: ignore[attr-defined]
    with pytest.raises(TimeoutError, match=r"took longer than 0\.2 s"):
        await asyncio.wait_for(
            calculate_rewards(blocking, [{"final_response": "x"}], timeout=0.2), SAFETY
        )


def test_an_adapter_scores_a_blocking_async_reward_as_a_timeout() -> None:
    compute_score = to_verl(blocks_then_scores, timeout=0.2)
    result = asyncio.run(asyncio.wait_for(compute_score("data", "x", "y"), SAFETY))
    assert result["score"] == 0.0
    assert (
        result["error"]
        == "TimeoutError: reward 'blocks_then_scores' on sample 0 took longer than 0.2 s"
    )


async def test_a_blocked_loop_makes_the_other_coroutines_on_it_late_too() -> None:
    """What a blocking coroutine costs: every reward sharing the loop misses its deadline."""
    blocked, brief = await asyncio.wait_for(
        asyncio.gather(
            calculate_rewards(
                blocks_then_scores, [{"final_response": "x"}], timeout=0.2, on_error="record"
            ),
            calculate_rewards(
                awaits_briefly, [{"final_response": "x"}], timeout=0.2, on_error="record"
            ),
        ),
        SAFETY,
    )
    assert blocked[0]["error"] == TIMED_OUT.format("blocks_then_scores")
    assert brief[0]["error"] == TIMED_OUT.format("awaits_briefly")


async def test_a_thread_result_is_judged_by_when_it_returned() -> None:
    """The loop is blocked past both deadlines: the call that returned within its timeout
    scores, the one that returned after it is a timeout (it used to score)."""
    blocked, slow, quick = await asyncio.wait_for(
        asyncio.gather(
            calculate_rewards(
                blocks_then_scores, [{"final_response": "x"}], timeout=5.0, on_error="record"
            ),
            calculate_rewards(
                sleeps_in_its_thread, [{"final_response": "0.3"}], timeout=0.2, on_error="record"
            ),
            calculate_rewards(
                sleeps_in_its_thread, [{"final_response": "0"}], timeout=5.0, on_error="record"
            ),
        ),
        SAFETY,
    )
    assert blocked[0].reward == 1.0  # it blocked for less than its own timeout
    assert slow[0]["error"] == TIMED_OUT.format("sleeps_in_its_thread")
    assert quick[0].reward == 1.0
    assert "error" not in quick[0]
