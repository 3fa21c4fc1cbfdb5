"""calculate_reward and calculate_rewards: normalization, batching, concurrency, timeouts, errors."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading
from typing import Any

import pytest

from rewardkit import (
    BaseReward,
    FieldCollisionError,
    MissingFieldError,
    RewardResult,
    RewardShapeError,
    build_fields,
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
    for on_error in ("raise", "record"):  # a caller's bug, not a sample's failure: never recorded
        with pytest.raises(TypeError, match=r"samples\[1\] is a list"):
            await calculate_rewards(
                lambda final_response: 1.0, [{"final_response": "a"}, ["a"]], on_error=on_error  # type: ignore[list-item]
            )


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
    # A field that other samples supply but this one lacks: a per-sample data gap, recorded.
    assert results[2].reward == 0.0
    assert results[2].extras["error"].startswith(
        "MissingFieldError: reward 'fragile' ("
    )
    assert "which the sample does not supply; available fields: answer" in results[2].extras["error"]


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


@pytest.mark.parametrize("on_error", ["record", "raise"])
async def test_a_field_no_sample_supplies_raises_before_any_call_even_under_record(on_error: str) -> None:
    calls: list[str] = []

    @reward(auto_register=False)
    def typo(final_response: str, answr: str) -> float:  # rewardkit: ignore[RK101]
        calls.append(final_response)
        return 1.0

    samples = [{"final_response": str(i), "answer": "4"} for i in range(3)]
    with pytest.raises(MissingFieldError) as caught:
        await calculate_rewards(typo, samples, on_error=on_error)  # type: ignore[arg-type]
    message = str(caught.value)
    assert "reward 'typo' (" in message
    assert f"{__file__}:" in message  # where the reward is defined
    assert "requires field 'answr', which none of the 3 samples supplies" in message
    assert "available fields of samples[0]: answer, final_response" in message
    assert "Did you mean 'answer'?" in message
    assert (caught.value.parameter, caught.value.suggestion) == ("answr", "answer")
    assert calls == []  # a configuration error: not one silent 0.0 per sample


async def test_the_unsupplied_parameter_is_named_when_others_are_missing_only_here_and_there() -> None:
    @reward(auto_register=False)
    def two(final_response: str, answer: str, rubric: str) -> float:
        return 1.0

    samples = [{"answer": "1"}, {"final_response": "x", "answer": "2"}]
    with pytest.raises(MissingFieldError, match=r"requires field 'rubric', which none of the 2 samples") as caught:
        await calculate_rewards(two, samples, on_error="record")
    assert caught.value.parameter == "rubric"


async def test_a_field_collision_raises_under_record() -> None:
    @reward(auto_register=False)
    def inner(final_response: str, answer: str) -> float:
        return float(final_response == answer)

    @reward(auto_register=False)
    async def judge(final_response: str, task: dict[str, Any]) -> float:
        # Grades with another reward, building its fields from the task data: a task holding
        # a predefined field's name is a data/config error for every sample, not one sample's.
        result = await calculate_reward(inner, **build_fields(task, final_response=final_response))
        assert result is not None
        return result.reward

    good = [{"final_response": "4", "task": {"answer": "4"}}]
    assert [r.reward for r in await calculate_rewards(judge, good, on_error="record")] == [1.0]
    bad = [{"final_response": "4", "task": {"answer": "4", "final_response": "5"}}] * 3
    with pytest.raises(FieldCollisionError, match="task field 'final_response' has the name of a predefined field"):
        await calculate_rewards(judge, bad, on_error="record")


async def test_a_timed_out_sync_call_does_not_make_later_samples_time_out() -> None:
    release = threading.Event()

    @reward(auto_register=False)
    def hangs_once(final_response: str) -> float:
        if final_response == "hang":
            release.wait(30)
        return 1.0

    samples = [{"final_response": "hang"}] + [{"final_response": "ok"}] * 5
    try:
        # One worker: each later sample is only submitted after the hung one timed out, while
        # its thread still runs. Their own timeouts must not be spent waiting for that thread.
        results = await calculate_rewards(hangs_once, samples, concurrency=1, timeout=0.5, on_error="record")
    finally:
        release.set()
    assert [r.reward for r in results] == [0.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    assert results[0].extras["error"].startswith("TimeoutError: reward 'hangs_once' on samples[0]")


def test_a_hung_sync_reward_does_not_block_interpreter_exit() -> None:
    code = textwrap.dedent("""
        import asyncio, threading
        from rewardkit import calculate_rewards, reward

        @reward
        def hangs_forever(final_response):
            threading.Event().wait()

        results = asyncio.run(calculate_rewards(
            hangs_forever, [{"final_response": "x"}], timeout=0.1, on_error="record"))
        print(results[0].extras["error"])
    """)
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "TimeoutError: reward 'hangs_forever' on samples[0] took longer than 0.1 s"


@pytest.mark.parametrize("timeout", [None, 5.0])
async def test_a_timeout_error_the_reward_raises_itself_is_reported_as_its_own(timeout: float | None) -> None:
    @reward(auto_register=False)
    async def judge_api(final_response: str) -> float:
        raise TimeoutError("upstream judge API timed out")

    @reward(auto_register=False)
    def judge_api_sync(final_response: str) -> float:
        raise TimeoutError("upstream judge API timed out")

    for fn in (judge_api, judge_api_sync):
        results = await calculate_rewards(fn, [{"final_response": "x"}], timeout=timeout, on_error="record")
        assert results[0].extras == {"error": "TimeoutError: upstream judge API timed out"}
        with pytest.raises(TimeoutError, match="upstream judge API timed out"):
            await calculate_rewards(fn, [{"final_response": "x"}], timeout=timeout)


async def test_sync_rewards_run_at_most_concurrency_at_once() -> None:
    lock = threading.Lock()
    in_flight = 0
    peak = 0
    all_three = threading.Barrier(3)

    @reward(auto_register=False)
    def counted(index: int) -> float:
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        if index < 3:
            all_three.wait(timeout=10)  # the first three must run at the same time
        with lock:
            in_flight -= 1
        return float(index)

    results = await calculate_rewards(counted, [{"index": i} for i in range(40)], concurrency=3)
    assert [r.reward for r in results] == [float(i) for i in range(40)]
    assert peak == 3
