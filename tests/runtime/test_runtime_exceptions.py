"""Issue 27, items 4, 5, 6, 8 and 9: whatever a reward raises, every sample gets a result or a
recorded error, the batch ends, and the event loop can close.

Real rewards (``exception_rewards``) raise each kind, sync and async, under ``calculate_rewards``
(every execution mode) and the adapters' per-sample path.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import exception_rewards as rewards
import pytest

from rewardkit import calculate_reward, calculate_rewards
from rewardkit.adapters import to_agentfly, to_trl
from rewardkit.reward_processes import reward_processes
from rewardkit.runtime.define.errors import MAX_ERROR_TEXT, RewardAbortedError

SAFETY = 60.0  # seconds: only against a hang, never a performance bound
HERE = Path(__file__).resolve().parent

# What the recorded error of each kind starts with.
RECORDED = {
    "asyncio-cancelled": "CancelledError: (no message) (raised by the reward itself",
    "futures-cancelled": "CancelledError: (no message) (raised by the reward itself",
    "exit": "SystemExit: 7 (the reward called sys.exit()",
    "argparse": "SystemExit: 2 (the reward called sys.exit()",
    "generator-exit": "GeneratorExit: (no message)",
    "library": "LibraryTimeout: 5 seconds",
    "stop-iteration": "StopIteration: (no message) (next() on an exhausted iterator?)",
}
# In a coroutine, Python turns an escaping StopIteration into a RuntimeError (PEP 479).
RECORDED_ASYNC = {**RECORDED, "stop-iteration": "RuntimeError: coroutine raised StopIteration"}

SYNC_MODES = ["thread", "inline", "process"]


@pytest.fixture(autouse=True)
def released() -> Iterator[None]:
    """A blocked ``__str__`` blocks during the test and returns after it."""
    rewards.RELEASE.clear()
    yield
    rewards.RELEASE.set()


@pytest.fixture
def processes() -> Iterator[None]:
    """Stop the worker processes a test started."""
    yield
    reward_processes.shutdown()


def batch(kinds: list[str], every: int = 1) -> list[dict[str, str]]:
    """Samples cycling through ``kinds``, each raising one, with ``every - 1`` good ones between."""
    samples = []
    for kind in kinds:
        samples += [{"kind": "ok"}] * (every - 1) + [{"kind": kind}]
    return samples


def check_recorded(
    results: list, samples: list[dict[str, str]], expected: dict[str, str], key: str = "kind"
) -> None:
    """Each sample scored, or failed with the error its ``key`` (its kind, or its group's) names."""
    assert len(results) == len(samples)
    for sample, result in zip(samples, results):
        assert result is not None
        if sample[key] == "ok":
            assert result.reward == 1.0, result
            assert "error" not in result.extras, result
        else:
            assert result.reward == 0.0
            assert result.extras["error"].startswith(expected[sample[key]]), (sample, result)


@pytest.mark.parametrize("execution", SYNC_MODES)
@pytest.mark.usefixtures("processes")
async def test_a_sync_reward_raising_any_kind_is_recorded_per_sample(execution: str) -> None:
    samples = batch(list(rewards.KINDS), every=3)
    results = await asyncio.wait_for(
        calculate_rewards(rewards.raising_sync, samples, on_error="record", execution=execution), SAFETY
    )
    check_recorded(results, samples, RECORDED)


@pytest.mark.parametrize("timeout", [None, 30.0])
async def test_an_async_reward_raising_any_kind_is_recorded_per_sample(timeout: float | None) -> None:
    kinds = [*rewards.KINDS, "awaited-cancelled"]
    expected = {**RECORDED_ASYNC, "awaited-cancelled": RECORDED["asyncio-cancelled"]}
    samples = batch(kinds, every=3)
    results = await asyncio.wait_for(
        calculate_rewards(rewards.raising_async, samples, on_error="record", timeout=timeout), SAFETY
    )
    check_recorded(results, samples, expected)


@pytest.mark.usefixtures("processes")
async def test_an_async_reward_in_a_worker_process_is_recorded_per_sample() -> None:
    samples = batch(list(rewards.KINDS), every=2)
    results = await asyncio.wait_for(
        calculate_rewards(rewards.raising_async, samples, on_error="record", execution="process"), SAFETY
    )
    check_recorded(results, samples, RECORDED_ASYNC)


@pytest.mark.parametrize("reward", [rewards.raising_sync, rewards.raising_async], ids=["sync", "async"])
async def test_one_sample_in_ten_cancelling_itself_loses_no_result(reward: object) -> None:
    # The case: 934 of 1,000 results came back None.
    samples = batch(["asyncio-cancelled"] * 100, every=10)
    results = await asyncio.wait_for(
        calculate_rewards(reward, samples, on_error="record", concurrency=16), SAFETY
    )
    assert None not in results
    assert sum(result.reward for result in results) == 900
    assert sum("error" in result.extras for result in results) == 100


@pytest.mark.parametrize("kind", list(rewards.KINDS))
@pytest.mark.parametrize("reward", [rewards.raising_sync, rewards.raising_async], ids=["sync", "async"])
async def test_under_raise_the_batch_raises_a_reward_error_never_the_base_exception(kind: str, reward: object) -> None:
    coroutine_stop = kind == "stop-iteration" and reward is rewards.raising_async
    # In a coroutine, Python has made a RuntimeError of the StopIteration already (PEP 479).
    expected = RuntimeError if coroutine_stop else RewardAbortedError
    with pytest.raises(expected, match="StopIteration" if coroutine_stop else r"on samples\[1\] raised") as caught:
        await asyncio.wait_for(calculate_rewards(reward, [{"kind": "ok"}, {"kind": kind}]), SAFETY)
    error = caught.value
    if coroutine_stop:
        return
    assert type(error.__cause__).__name__ in RECORDED[kind].split(":")[0]


async def test_a_cancellation_of_the_caller_still_cancels_the_batch() -> None:
    """The caller's cancellation is not the reward's: it propagates and records nothing."""
    task = asyncio.ensure_future(
        calculate_rewards(rewards.swallows_cancellation, [{"kind": "ok"}] * 4, on_error="record")
    )
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, SAFETY)


async def test_calculate_reward_raises_a_reward_error_for_sys_exit() -> None:
    with pytest.raises(RewardAbortedError, match="SystemExit: 7") as caught:
        await calculate_reward(rewards.raising_sync, kind="exit")
    assert isinstance(caught.value.__cause__, SystemExit)
    with pytest.raises(RewardAbortedError, match="CancelledError"):
        await calculate_reward(rewards.raising_async, kind="asyncio-cancelled")
    with pytest.raises(ValueError, match="bad sample"):  # an ordinary exception is raised as itself
        await calculate_reward(rewards.raising_sync, kind="value")


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync-adapter", "async-adapter"])
@pytest.mark.parametrize("timeout", [None, 30.0])
@pytest.mark.parametrize("reward", [rewards.raising_sync, rewards.raising_async], ids=["sync", "async"])
def test_the_adapters_per_sample_path_falls_back_for_every_kind(
    reward: object, timeout: float | None, asynchronous: bool
) -> None:
    adapter = to_trl(reward, timeout=timeout, asynchronous=asynchronous, field_map={"completion": None})
    kinds = list(rewards.KINDS)
    scored = adapter(prompts=["p"] * len(kinds), completions=["c"] * len(kinds), kind=kinds)
    scores = asyncio.run(asyncio.wait_for(scored, SAFETY)) if asynchronous else scored
    assert scores == [0.0] * len(kinds)
    assert adapter.stats.failures == len(kinds)


async def test_the_agentfly_adapter_falls_back_for_sys_exit_and_its_own_cancellation() -> None:
    adapter = to_agentfly(rewards.raising_async)
    for kind in ("exit", "asyncio-cancelled", "library"):
        result = await adapter(kind=kind)
        assert result["reward"] == 0.0
        assert result["error"].startswith(RECORDED[kind])


@pytest.mark.parametrize("reward", [rewards.raising_sync, rewards.raising_async], ids=["sync", "async"])
def test_keyboard_interrupt_still_propagates(reward: object) -> None:
    with pytest.raises(KeyboardInterrupt):
        asyncio.run(calculate_rewards(reward, [{"kind": "keyboard"}], on_error="record"))


@pytest.mark.parametrize("execution", SYNC_MODES)
@pytest.mark.usefixtures("processes")
async def test_a_sync_stop_iteration_is_recorded_at_once_not_after_the_timeout(execution: str) -> None:
    # The timeout is far longer than SAFETY: a StopIteration lost in a future would hang the
    # batch until then, and wait_for would fail the test.
    results = await asyncio.wait_for(
        calculate_rewards(
            rewards.raising_sync,
            [{"kind": "stop-iteration"}],
            on_error="record",
            timeout=None if execution == "inline" else 3600.0,
            execution=execution,
        ),
        SAFETY,
    )
    assert results[0].extras["error"].startswith(RECORDED["stop-iteration"])


@pytest.mark.parametrize("execution", SYNC_MODES)
@pytest.mark.usefixtures("processes")
async def test_a_message_that_cannot_be_read_is_described_without_it(execution: str) -> None:
    results = await asyncio.wait_for(
        calculate_rewards(
            rewards.raising_sync, batch(["unreadable", "huge"], every=2), on_error="record", execution=execution
        ),
        SAFETY,
    )
    unreadable, huge = results[1].extras["error"], results[3].extras["error"]
    assert unreadable == "UnreadableMessage: (the message could not be read: str() raised RuntimeError)"
    assert huge.startswith("ValueError: xxx")
    assert huge.endswith("(20,000,000 characters in all)")
    assert len(huge) < MAX_ERROR_TEXT + 100


async def test_an_async_reward_whose_message_cannot_be_read_is_described_without_it() -> None:
    results = await calculate_rewards(rewards.raising_async, [{"kind": "unreadable"}], on_error="record")
    assert results[0].extras["error"].startswith("UnreadableMessage: (the message could not be read")


@pytest.mark.parametrize(
    ("reward", "execution"),
    [(rewards.raising_sync, "thread"), (rewards.raising_sync, "process"), (rewards.raising_async, None)],
    ids=["sync-thread", "sync-process", "async"],
)
@pytest.mark.usefixtures("processes")
async def test_a_message_that_blocks_is_bounded_by_the_timeout(reward: object, execution: str | None) -> None:
    samples = [{"kind": "blocking"}, {"kind": "ok"}]
    results = await asyncio.wait_for(
        calculate_rewards(reward, samples, on_error="record", timeout=2.0, execution=execution), SAFETY
    )
    assert results[0].extras["error"].startswith("TimeoutError: reward")
    assert results[1].reward == 1.0


def test_the_adapters_bound_a_message_that_blocks() -> None:
    adapter = to_trl(rewards.raising_sync, timeout=2.0, field_map={"completion": None})
    assert adapter(prompts=["p"] * 2, completions=["c"] * 2, kind=["blocking", "ok"]) == [0.0, 1.0]
    assert adapter.stats.timeouts == 1


def test_asyncio_run_returns_when_a_reward_swallows_its_cancellation(tmp_path: Path) -> None:
    """The README's pattern, in a process of its own: before, it never returned."""
    done = run_script(
        tmp_path,
        """
        import asyncio
        from rewardkit import calculate_rewards
        from exception_rewards import swallows_cancellation

        results = asyncio.run(
            calculate_rewards(swallows_cancellation, [{"kind": "ok"}] * 3, timeout=0.2, on_error="record")
        )
        print([result.extras["error"][:12] for result in results])
        """,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(["TimeoutError"] * 3)
    assert "Task was destroyed" not in done.stderr
    assert "unhandled exception" not in done.stderr


def run_script(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    """Run ``body`` as a script in a fresh interpreter that imports ``exception_rewards``."""
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(body))
    return subprocess.run(
        [sys.executable, str(script)],
        cwd=HERE,
        env={"PYTHONPATH": str(HERE), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=SAFETY,
        check=False,
    )


def test_a_reward_ignoring_even_generator_exit_is_abandoned_with_a_warning(tmp_path: Path) -> None:
    done = run_script(
        tmp_path,
        """
        import asyncio
        from rewardkit import calculate_rewards
        from exception_rewards import STOP_IGNORING, ignores_everything

        async def main():
            try:
                return await calculate_rewards(ignores_everything, [{"kind": "ok"}], timeout=0.2, on_error="record")
            finally:
                STOP_IGNORING.set()  # lets the abandoned coroutine end when it is collected

        print(asyncio.run(main())[0].extras["error"][:12])
        """,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "TimeoutError"
    assert "RuntimeWarning: reward 'ignores_everything' ignored its cancellation and GeneratorExit" in done.stderr


def grouped_batch() -> list[dict[str, str]]:
    """A group of two per kind (the kind, then a good sample), and a group of good ones; each
    group named after the kind it raises."""
    samples = [{"kind": "ok", "group": "ok"}, {"kind": "ok", "group": "ok"}]
    for kind in rewards.KINDS:
        samples += [{"kind": kind, "group": kind}, {"kind": "ok", "group": kind}]
    return samples


GROUP_CASES = [
    *[(rewards.raising_group_sync, {"execution": mode}) for mode in SYNC_MODES],
    *[(rewards.raising_group_async, {"timeout": timeout}) for timeout in (None, 30.0)],
]


@pytest.mark.parametrize(
    ("reward", "options"),
    GROUP_CASES,
    ids=[*(f"sync-{mode}" for mode in SYNC_MODES), "async", "async-timeout"],
)
@pytest.mark.usefixtures("processes")
async def test_a_group_reward_raising_any_kind_fails_its_group_only(reward: object, options: dict) -> None:
    samples = grouped_batch()
    results = await asyncio.wait_for(
        calculate_rewards(reward, samples, group_by="group", on_error="record", **options), SAFETY
    )
    expected = RECORDED_ASYNC if reward is rewards.raising_group_async else RECORDED
    check_recorded(results, samples, expected, key="group")


@pytest.mark.parametrize("kind", list(rewards.KINDS))
@pytest.mark.parametrize(
    "reward", [rewards.raising_group_sync, rewards.raising_group_async], ids=["sync", "async"]
)
async def test_under_raise_a_group_raises_a_reward_error_never_the_base_exception(kind: str, reward: object) -> None:
    samples = [{"kind": "ok", "group": "a"}, {"kind": kind, "group": "a"}]
    with pytest.raises((RewardAbortedError, RuntimeError)) as caught:
        await asyncio.wait_for(calculate_rewards(reward, samples, group_by="group"), SAFETY)
    if isinstance(caught.value, RewardAbortedError):
        assert "on the group of samples[0, 1]" in str(caught.value)
    else:  # an async reward's StopIteration reaches us as PEP 479's RuntimeError
        assert reward is rewards.raising_group_async, caught.value
        assert kind == "stop-iteration", caught.value


def test_trls_adapter_falls_back_for_a_group_raising_sys_exit() -> None:
    adapter = to_trl(rewards.raising_group_sync)
    scored = adapter(prompts=["p", "p", "q", "q"], completions=["a"] * 4, kind=["ok", "exit", "ok", "ok"])
    assert scored == [0.0, 0.0, 1.0, 1.0]
    assert adapter.stats.failures == 2
