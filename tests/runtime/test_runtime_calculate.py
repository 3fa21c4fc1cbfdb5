"""calculate_reward and calculate_rewards: normalization, batching, concurrency, timeouts, errors."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from rewardkit import (
    BaseReward,
    MissingFieldError,
    RewardResult,
    RewardShapeError,
    calculate_reward,
    calculate_rewards,
    reward,
)


async def test_none_reward_gives_none() -> None:
    assert await calculate_reward(None, final_response="x") is None


async def test_plain_callables_are_normalized_and_validated() -> None:
    def plain(final_response: str, answer: str) -> bool:
        return final_response == answer

    async def plain_async(final_response: str) -> dict[str, Any]:
        return {"reward": 0.5, "tag": "ok"}

    assert await calculate_reward(plain, final_response="4", answer="4", trajectory=[]) == RewardResult(1.0)
    assert await calculate_reward(plain_async, final_response="x") == RewardResult(0.5, {"tag": "ok"})
    with pytest.raises(RewardShapeError, match="reward '<lambda>' returned None"):
        await calculate_reward(lambda final_response: None, final_response="x")
    with pytest.raises(MissingFieldError, match="reward 'plain'"):
        await calculate_reward(plain, final_response="x")


async def test_callable_object_with_async_call_is_awaited() -> None:
    class Scorer:
        async def __call__(self, final_response: str) -> float:
            return 0.75

    assert await calculate_reward(Scorer(), final_response="x") == RewardResult(0.75)


async def test_a_field_called_reward_fn_does_not_clash() -> None:
    @reward(auto_register=False)
    def uses_odd_field(reward_fn: str) -> float:
        return float(len(reward_fn))

    assert (await calculate_reward(uses_odd_field, reward_fn="abc")).reward == 3.0


async def test_batch_keeps_order_and_bounds_concurrency() -> None:
    in_flight = 0
    peak = 0

    @reward(auto_register=False)
    async def slow_echo(final_response: str, delay: float) -> float:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(delay)
        in_flight -= 1
        return float(final_response)

    samples = [{"final_response": str(i), "delay": 0.001 * ((7 * i) % 5)} for i in range(50)]
    results = await calculate_rewards(slow_echo, samples, concurrency=4)
    assert [r.reward for r in results] == [float(i) for i in range(50)]
    assert peak == 4


async def test_empty_batch_and_bad_arguments() -> None:
    assert await calculate_rewards(lambda final_response: 1.0, []) == []
    with pytest.raises(ValueError, match="on_error must be 'raise' or 'record'"):
        await calculate_rewards(lambda final_response: 1.0, [{}], on_error="ignore")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="concurrency must be a positive integer"):
        await calculate_rewards(lambda final_response: 1.0, [{}], concurrency=0)
    with pytest.raises(TypeError, match=r"samples\[1\] is a list"):
        await calculate_rewards(lambda final_response: 1.0, [{"final_response": "a"}, ["a"]])  # type: ignore[list-item]


async def test_sync_rewards_run_off_the_event_loop() -> None:
    loop_thread = threading.get_ident()
    threads: set[int] = set()
    release = threading.Event()

    @reward(auto_register=False)
    def blocking(final_response: str) -> float:
        threads.add(threading.get_ident())
        # Blocks until a coroutine on the event loop sets the event: only possible if the
        # loop is free while this runs.
        return 1.0 if release.wait(timeout=10) else 0.0

    async def set_soon() -> None:
        await asyncio.sleep(0.01)
        release.set()

    setter = asyncio.ensure_future(set_soon())
    results = await calculate_rewards(blocking, [{"final_response": "a"}, {"final_response": "b"}])
    await setter
    assert [r.reward for r in results] == [1.0, 1.0]
    assert loop_thread not in threads


async def test_timeout_applies_to_async_and_sync_rewards_and_is_recorded() -> None:
    @reward(auto_register=False)
    async def sleepy(final_response: str) -> float:
        if final_response == "slow":
            await asyncio.sleep(30)
        return 1.0

    stop = threading.Event()

    @reward(auto_register=False)
    def sleepy_sync(final_response: str) -> float:
        if final_response == "slow":
            stop.wait(30)
        return 1.0

    samples = [{"final_response": "fast"}, {"final_response": "slow"}, {"final_response": "fast"}]
    for fn in (sleepy, sleepy_sync):
        results = await calculate_rewards(fn, samples, timeout=0.2, on_error="record")
        assert [r.reward for r in results] == [1.0, 0.0, 1.0]
        assert results[1].extras == {
            "error": f"TimeoutError: reward {fn.name!r} on samples[1] took longer than 0.2 s"
        }
        with pytest.raises(TimeoutError, match=r"samples\[1\] took longer than 0.2 s"):
            await calculate_rewards(fn, samples, timeout=0.2)
    stop.set()


async def test_record_turns_errors_into_zero_rewards_with_the_message() -> None:
    @reward(auto_register=False)
    def fragile(final_response: str) -> float:
        if final_response == "boom":
            raise ValueError("cannot grade 'boom'")
        return 1.0

    samples = [{"final_response": "ok"}, {"final_response": "boom"}, {"answer": "no response"}]
    results = await calculate_rewards(fragile, samples, on_error="record")
    assert results[0] == RewardResult(1.0)
    assert results[1] == RewardResult(0.0, {"error": "ValueError: cannot grade 'boom'"})
    assert results[2].reward == 0.0
    assert results[2].extras["error"].startswith("MissingFieldError: reward 'fragile'")


async def test_raise_propagates_the_first_error_after_cancelling_the_rest() -> None:
    cancelled: list[int] = []
    started: list[int] = []

    @reward(auto_register=False)
    async def one_fails(index: int) -> float:
        started.append(index)
        if index == 2:
            await asyncio.sleep(0.01)
            raise RuntimeError("grader crashed on 2")
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(index)
            raise
        return 1.0

    with pytest.raises(RuntimeError, match="grader crashed on 2") as caught:
        await calculate_rewards(one_fails, [{"index": i} for i in range(100)], concurrency=5)
    assert sorted(started) == [0, 1, 2, 3, 4]  # nothing beyond the first workers' samples started
    assert sorted(cancelled) == [0, 1, 3, 4]
    assert "while computing reward 'one_fails' on samples[2]" in "".join(getattr(caught.value, "__notes__", []))


async def test_batch_of_base_reward_instances_and_plain_mappings() -> None:
    class Counter(BaseReward, auto_register=False):
        name = "counter"

        def __init__(self) -> None:
            self.seen = 0
            self.lock = threading.Lock()

        def call(self, final_response: str) -> float:
            with self.lock:
                self.seen += 1
            return float(len(final_response))

    counter = Counter()
    results = await calculate_rewards(counter, [{"final_response": "x" * i} for i in range(20)], concurrency=3)
    assert [r.reward for r in results] == [float(i) for i in range(20)]
    assert counter.seen == 20


async def test_large_batch_uses_a_fixed_number_of_tasks() -> None:
    tasks_seen: set[asyncio.Task[Any]] = set()

    @reward(auto_register=False)
    async def trivial(final_response: str) -> float:
        task = asyncio.current_task()
        assert task is not None
        tasks_seen.add(task)
        await asyncio.sleep(0)
        return 1.0

    samples = [{"final_response": "x"}] * 5000
    results = await calculate_rewards(trivial, samples, concurrency=8)
    assert len(results) == 5000
    assert all(r.reward == 1.0 for r in results)
    assert len(tasks_seen) == 8


async def test_sync_error_propagates_with_raise() -> None:
    @reward(auto_register=False)
    def picky(final_response: str) -> float:
        if final_response == "bad":
            raise LookupError("no such product")
        return 1.0

    samples = [{"final_response": "ok"}] * 3 + [{"final_response": "bad"}]
    with pytest.raises(LookupError, match="no such product"):
        await calculate_rewards(picky, samples, concurrency=2)
