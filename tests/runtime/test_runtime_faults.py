"""Faults from issue 18: hung sync rewards, no thread to start, rewards that swallow their
cancellation, and cancellation during a Context's cleanup. Each loses nothing and leaves nothing."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from rewardkit import Context, ResourceManager, ResourceSpec, RewardError, calculate_rewards, reward
from rewardkit.adapters import to_trl, to_verl
from rewardkit.reward_threads import RewardThreadPool, RewardThreadsUnavailableError
from rewardkit.runtime.run import execution as execution_module

SAFETY = 20.0  # seconds: only against a hang, never a performance bound


@pytest.fixture
def small_pool(monkeypatch: pytest.MonkeyPatch) -> RewardThreadPool:
    """A pool of 6 threads standing in for the process-wide one (runtime and adapters)."""
    pool = RewardThreadPool(max_threads=6, idle_seconds=0.5)
    monkeypatch.setattr(execution_module, "reward_threads", pool)
    return pool


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at the end of the test: lets every hung call return."""
    event = threading.Event()
    yield event
    event.set()


def hanging_reward(release: threading.Event) -> Any:
    @reward(name="hangs", auto_register=False)
    def hangs(final_response: str) -> float:
        release.wait(SAFETY)
        return 1.0

    return hangs


async def test_hung_sync_rewards_hold_a_bounded_number_of_threads_and_are_reported(
    small_pool: RewardThreadPool, release: threading.Event
) -> None:
    threads_before = threading.active_count()
    samples = [{"final_response": str(index)} for index in range(60)]
    results = await calculate_rewards(
        hanging_reward(release), samples, concurrency=4, timeout=0.05, on_error="record"
    )
    # Every sample is a recorded timeout; the threads stayed within the pool's bound.
    assert threading.active_count() - threads_before <= 6
    stats = small_pool.stats()
    assert stats.threads <= 6
    assert 1 <= stats.hung == stats.busy <= 6  # the hung calls hold their threads, counted
    errors = [result.extras["error"] for result in results]
    assert all(error.startswith("TimeoutError: reward 'hangs' on samples[") for error in errors)
    started = [error for error in errors if "took longer than 0.05 s" in error]
    waited = [error for error in errors if "did not start within 0.05 s" in error]
    assert len(started) <= 6
    assert len(started) + len(waited) == 60
    assert "held by calls past their timeout" in waited[-1]
    release.set()
    for _ in range(int(SAFETY / 0.05)):  # the hung calls return and free their threads
        if small_pool.stats().busy == 0:
            break
        await asyncio.sleep(0.05)
    assert small_pool.stats().hung == 0


async def test_the_pool_runs_new_work_once_hung_calls_return(small_pool: RewardThreadPool, release: threading.Event) -> None:
    await calculate_rewards(hanging_reward(release), [{"final_response": "x"}] * 6, timeout=0.05, on_error="record")
    release.set()

    @reward(name="quick", auto_register=False)
    def quick(final_response: str) -> float:
        return 1.0

    results = await calculate_rewards(quick, [{"final_response": "y"}] * 20, concurrency=8)
    assert [result.reward for result in results] == [1.0] * 20
    assert small_pool.stats().threads <= 6


@pytest.fixture
def no_new_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """The system refuses to start threads, as when a process is out of threads or memory."""

    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refuse)


@reward(name="faults_exact", auto_register=False)
def exact(final_response: str, answer: str) -> float:
    return float(final_response == answer)


async def test_when_no_thread_can_start_record_records_and_loses_nothing(
    small_pool: RewardThreadPool, no_new_threads: None
) -> None:
    samples = [{"final_response": "1", "answer": "1"}] * 5
    results = await calculate_rewards(exact, samples, on_error="record")
    assert len(results) == 5
    for result in results:
        assert result.reward == 0.0
        assert result.extras["error"].startswith("RewardThreadsUnavailableError: no thread could run")
        assert "can't start new thread" in result.extras["error"]
    assert small_pool.stats().start_failures >= 5
    with pytest.raises(RewardThreadsUnavailableError):
        await calculate_rewards(exact, samples, on_error="raise")


def test_an_adapter_with_a_timeout_falls_back_when_no_thread_can_start(
    small_pool: RewardThreadPool, no_new_threads: None
) -> None:
    compute_score = to_verl(exact, timeout=5.0)
    result = compute_score(data_source="d", solution_str="1", ground_truth="1", extra_info=None)
    assert result["score"] == 0.0
    assert result["error"].startswith("RewardThreadsUnavailableError")
    assert compute_score.stats.failures == 1


def test_an_adapter_reports_hung_sync_calls_without_starting_more_threads(
    small_pool: RewardThreadPool, release: threading.Event
) -> None:
    compute_score = to_verl(hanging_reward(release), timeout=0.05)
    for _ in range(10):
        assert compute_score(data_source="d", solution_str="x", ground_truth=None)["score"] == 0.0
    assert compute_score.stats.timeouts == 10
    assert small_pool.stats().threads <= 6


# -- async rewards that swallow their cancellation -----------------------------------------


def swallowing_rewards(release: asyncio.Event, finished: list[str]) -> tuple[Any, Any]:
    @reward(name="swallows_and_returns", auto_register=False)
    async def swallows_and_returns(final_response: str) -> float:
        try:
            await asyncio.sleep(SAFETY)
        except asyncio.CancelledError:
            return 1.0  # swallowed: asyncio.wait_for would call this a success
        return 0.5

    @reward(name="swallows_and_runs_on", auto_register=False)
    async def swallows_and_runs_on(final_response: str) -> float:
        with contextlib.suppress(asyncio.CancelledError):  # swallowed; it keeps running past its timeout
            await asyncio.sleep(SAFETY)
        await release.wait()
        finished.append(final_response)
        return 1.0

    return swallows_and_returns, swallows_and_runs_on


async def test_an_async_reward_that_swallows_its_cancellation_is_timed_out() -> None:
    release, finished = asyncio.Event(), []
    samples = [{"final_response": "a"}, {"final_response": "b"}]
    for stubborn in swallowing_rewards(release, finished):
        results = await asyncio.wait_for(
            calculate_rewards(stubborn, samples, timeout=0.05, on_error="record"), SAFETY / 2
        )
        assert [result.reward for result in results] == [0.0, 0.0]
        for result in results:
            assert result.extras["error"] == f"TimeoutError: reward {stubborn.name!r} on samples[{results.index(result)}] took longer than 0.05 s"
        with pytest.raises(TimeoutError, match=r"took longer than 0\.05 s"):
            await asyncio.wait_for(calculate_rewards(stubborn, samples, timeout=0.05), SAFETY / 2)
    # One that kept running past the grace was closed (issue 27, item 9: else asyncio.run()
    # would wait for it forever): released now, it does not run on, and nothing is left running.
    release.set()
    for _ in range(10):
        await asyncio.sleep(0.01)
    assert finished == []
    assert not execution_module._left_running


async def test_adapters_count_a_swallowed_cancellation_as_a_timeout() -> None:
    release, finished = asyncio.Event(), []
    swallows_and_returns, swallows_and_runs_on = swallowing_rewards(release, finished)
    for stubborn in (swallows_and_returns, swallows_and_runs_on):
        reward_func = to_trl(stubborn, timeout=0.05)
        rewards = await asyncio.wait_for(reward_func(prompts=["p"], completions=["c"]), SAFETY / 2)
        assert rewards == [0.0]
        assert (reward_func.stats.failures, reward_func.stats.timeouts) == (1, 1)
    release.set()


# -- cancellation during a Context's cleanup -------------------------------------------------


class ClosingTracker:
    """Three rollout resources whose close takes a while; records the closes that completed."""

    def __init__(self) -> None:
        self.closed: list[str] = []
        self.closing = asyncio.Event()
        self.specs = [
            ResourceSpec(key=f"env{index}", factory=lambda index=index: f"env{index}", close=self.close)
            for index in range(3)
        ]

    async def close(self, instance: str) -> None:
        self.closing.set()
        await asyncio.sleep(0.05)
        self.closed.append(instance)

    async def rollout(self, resources: ResourceManager) -> None:
        async with Context(rollout_id="rollout-1", resources=resources) as context:
            for spec in self.specs:
                await context.acquire_resource(spec=spec)


async def test_cancelling_the_task_during_cleanup_still_closes_every_resource() -> None:
    resources, tracker = ResourceManager(), ClosingTracker()
    task = asyncio.ensure_future(tracker.rollout(resources))
    await tracker.closing.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # The cleanup completed before the cancellation propagated.
    assert sorted(tracker.closed) == ["env0", "env1", "env2"]
    assert resources._slots == {}
    await resources.aclose()
    assert sorted(tracker.closed) == ["env0", "env1", "env2"]  # each closed exactly once


async def test_when_the_cleanup_itself_is_cancelled_the_manager_closes_the_rest() -> None:
    resources, tracker = ResourceManager(), ClosingTracker()
    task = asyncio.ensure_future(tracker.rollout(resources))
    await tracker.closing.wait()
    # As at the loop's shutdown: every task is cancelled, the cleanup too, mid-close of env0.
    for other in asyncio.all_tasks() - {asyncio.current_task()}:
        other.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert tracker.closed == []
    await resources.aclose()
    assert sorted(tracker.closed) == ["env0", "env1", "env2"]  # the interrupted one closed again
    assert resources._slots == {}
    assert resources._interrupted == []


# -- a grader that could not run (a typed RewardError from the reward) ----------------------


class GraderUnavailableError(RewardError):
    """Stands in for the typed error math_reward raises when its grader could not run."""


@reward(name="faults_overloaded_grader", auto_register=False)
def overloaded_grader(final_response: str, answer: str) -> float:
    if final_response == "hard":
        raise GraderUnavailableError("the grader could not run within its budget (machine overloaded)")
    return float(final_response == answer)


async def test_a_typed_reward_error_is_recorded_per_sample_not_raised_as_configuration() -> None:
    samples = [{"final_response": "1", "answer": "1"}, {"final_response": "hard", "answer": "1"}]
    results = await calculate_rewards(overloaded_grader, samples, on_error="record")
    assert results[0] == {"reward": 1.0}
    assert results[1].reward == 0.0
    assert results[1].extras["error"] == (
        "GraderUnavailableError: the grader could not run within its budget (machine overloaded)"
    )


def test_adapters_record_a_typed_reward_error_and_count_it() -> None:
    compute_score = to_verl(overloaded_grader)
    failed = compute_score(data_source="d", solution_str="hard", ground_truth="1")
    assert failed["score"] == 0.0
    assert failed["error"].startswith("GraderUnavailableError: the grader could not run")
    reward_func = to_trl(overloaded_grader, fallback=None)
    assert reward_func(prompts=["p", "p"], completions=["1", "hard"], answer=["1", "1"]) == [1.0, None]
    assert (compute_score.stats.failures, reward_func.stats.failures, reward_func.stats.calls) == (1, 1, 2)


# -- a forked child (verl's prime manager forks its scoring workers) ------------------------


def score_in_child(solution: str) -> Any:
    """Runs in a forked worker: an adapter with a timeout needs a pool thread there."""
    return to_verl(exact, timeout=10.0)(data_source="d", solution_str=solution, ground_truth="1")


def test_a_forked_child_starts_its_own_reward_threads() -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from rewardkit.reward_threads import reward_threads

    assert to_verl(exact, timeout=10.0)(data_source="d", solution_str="1", ground_truth="1")["score"] == 1.0
    assert reward_threads.stats().threads >= 1  # the parent's idle thread, which a child does not inherit
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
        result = pool.submit(score_in_child, "1").result(timeout=SAFETY)
    assert result == {"score": 1.0, "error": ""}


def test_a_call_submitted_while_another_hangs_gets_its_own_thread(release: threading.Event) -> None:
    # The pool counts calls not yet taken by a thread, so a thread that has just taken a (hung)
    # call is never mistaken for an idle one: the next call starts a thread instead of waiting.
    pool = RewardThreadPool(max_threads=64, idle_seconds=5.0)
    for round_ in range(30):
        pool.submit(lambda _: release.wait(SAFETY), None)
        quick = pool.submit(lambda value: value, round_)
        assert quick.result(timeout=SAFETY) == round_
    assert pool.stats().threads >= 30  # one per hung call, each still holding its thread
    release.set()


async def test_a_stop_iteration_in_a_pool_thread_reaches_an_asyncio_waiter(small_pool: RewardThreadPool) -> None:
    """Any user of the pool (group rewards too): asyncio cannot carry StopIteration on a future."""
    job = small_pool.submit(next, iter(()))
    with pytest.raises(RuntimeError, match="raised StopIteration") as caught:
        await asyncio.wait_for(asyncio.wrap_future(job), SAFETY)
    assert isinstance(caught.value.__cause__, StopIteration)
