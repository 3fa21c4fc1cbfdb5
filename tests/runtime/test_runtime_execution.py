"""Issue 23, item 2: execution modes. A reward whose grader uses signals (real math_verify: its
default timeouts call ``signal.alarm``) works with a timeout under ``execution="process"``, in
``calculate_rewards``, ``calculate_reward`` and TRL's adapter; run in a thread it fails on every
sample with an error that names the mode. A worker past its timeout is killed and replaced."""

from __future__ import annotations

import asyncio
import os
import pickle
import sys
import time
import types
from collections.abc import Iterator
from pathlib import Path

import execution_rewards as rewards
import pytest

from rewardkit import calculate_reward, calculate_rewards, reward
from rewardkit.adapters import to_trl, to_verl
from rewardkit.reward_processes import reward_processes
from rewardkit.runtime.define.errors import RewardLoadError, SignalInThreadError

SAFETY = 120.0  # seconds: only against a hang, never a performance bound

SAMPLES = [
    {"final_response": "The answer is $\\frac{1}{2}$", "answer": "$0.5$"},
    {"final_response": "$3$", "answer": "$4$"},
    {"final_response": "So $\\boxed{\\sqrt{4}}$", "answer": "$2$"},
    {"final_response": "no idea", "answer": "$7$"},
]
EXPECTED = [1.0, 0.0, 1.0, 0.0]


@pytest.fixture(autouse=True)
def processes() -> Iterator[None]:
    """Stop the worker processes each test started."""
    yield
    reward_processes.shutdown()


def assert_names_the_mode(text: str, mode: str = "thread") -> None:
    assert "SignalInThreadError" in text or "signal" in text
    assert f"execution={mode!r}" in text
    assert "execution='process'" in text


async def test_math_verify_in_a_reward_thread_fails_on_every_sample_naming_the_mode() -> None:
    results = await asyncio.wait_for(
        calculate_rewards(rewards.math_verify_accuracy, SAMPLES, on_error="record", timeout=60.0), SAFETY
    )
    assert [result.reward for result in results] == [0.0] * len(SAMPLES)
    for result in results:
        assert result.extras["error"].startswith("SignalInThreadError: reward 'math_verify_accuracy' on samples[")
        assert_names_the_mode(result.extras["error"])
    with pytest.raises(SignalInThreadError) as caught:  # also a ValueError, as the original was
        await asyncio.wait_for(calculate_rewards(rewards.math_verify_accuracy, SAMPLES), SAFETY)
    assert isinstance(caught.value, ValueError)
    assert "doesn't support threaded environment" in str(caught.value.__cause__)


@pytest.mark.parametrize("timeout", [None, 60.0])
async def test_math_verify_in_worker_processes_scores_right(timeout: float | None) -> None:
    results = await asyncio.wait_for(
        calculate_rewards(
            rewards.math_verify_accuracy, SAMPLES, on_error="record", timeout=timeout, execution="process"
        ),
        SAFETY,
    )
    assert [result.reward for result in results] == EXPECTED, results
    assert {result.extras["pid"] for result in results}.isdisjoint({os.getpid()})


@pytest.mark.parametrize(
    "declared", [rewards.math_verify_in_process, rewards.MathVerifyReward()], ids=["@reward", "BaseReward"]
)
async def test_a_reward_declaring_process_runs_there_by_default(declared: object) -> None:
    results = await asyncio.wait_for(calculate_rewards(declared, SAMPLES), SAFETY)
    assert [result.reward for result in results] == EXPECTED
    single = await asyncio.wait_for(calculate_reward(declared, **SAMPLES[0]), SAFETY)
    assert single.reward == 1.0


async def test_the_callers_mode_overrides_the_rewards_own() -> None:
    results = await asyncio.wait_for(
        calculate_rewards(rewards.math_verify_in_process, SAMPLES[:1], execution="thread", on_error="record"),
        SAFETY,
    )
    assert_names_the_mode(results[0].extras["error"])


async def test_calculate_reward_runs_one_sample_in_a_worker_process() -> None:
    result = await asyncio.wait_for(
        calculate_reward(rewards.math_verify_accuracy, execution="process", **SAMPLES[2]), SAFETY
    )
    assert result.reward == 1.0
    assert result.extras["pid"] != os.getpid()


async def test_an_async_reward_runs_on_a_worker_processs_event_loop() -> None:
    results = await asyncio.wait_for(calculate_rewards(rewards.async_in_process, [{"answer": "42"}]), SAFETY)
    assert results[0].reward == 1.0
    assert results[0].extras["pid"] != os.getpid()


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync-adapter", "async-adapter"])
def test_trls_adapter_with_a_timeout_needs_the_process_mode_for_math_verify(asynchronous: bool) -> None:
    prompts = ["Solve it."] * len(SAMPLES)
    completions = [sample["final_response"] for sample in SAMPLES]
    answers = [sample["answer"] for sample in SAMPLES]

    def score(adapter: object) -> list[float]:
        scored = adapter(prompts=prompts, completions=completions, answer=answers)  # type: ignore[operator]
        return asyncio.run(scored) if asynchronous else scored

    threaded = to_trl(rewards.math_verify_accuracy, timeout=60.0, asynchronous=asynchronous)
    assert score(threaded) == [0.0] * len(SAMPLES)
    assert threaded.stats.failures == len(SAMPLES)

    in_process = to_trl(rewards.math_verify_accuracy, timeout=60.0, execution="process", asynchronous=asynchronous)
    assert score(in_process) == EXPECTED
    assert in_process.stats.failures == 0


def test_an_adapter_keeps_its_execution_mode_when_pickled() -> None:
    adapter = to_verl(rewards.math_verify_accuracy, timeout=60.0, execution="process")
    copy = pickle.loads(pickle.dumps(adapter))
    assert copy.execution == "process"
    assert copy.runner.execution == "process"
    assert copy("math", "The answer is $\\frac{1}{2}$", "$0.5$")["score"] == 1.0


async def test_a_call_past_its_timeout_is_killed_with_its_worker_which_is_replaced(tmp_path: Path) -> None:
    pid_file = tmp_path / "hung.pid"
    samples = [{"action": "hang", "pid_file": str(pid_file)}] + [{"action": "ok"}] * 6
    results = await asyncio.wait_for(
        calculate_rewards(rewards.sleeps_or_dies, samples, timeout=2.0, execution="process", on_error="record"),
        SAFETY,
    )
    assert results[0].extras["error"] == "TimeoutError: reward 'sleeps_or_dies' on samples[0] took longer than 2.0 s"
    assert [result.reward for result in results[1:]] == [1.0] * 6
    hung = int(pid_file.read_text())
    assert hung not in {result.extras["pid"] for result in results[1:]}
    deadline = time.monotonic() + SAFETY
    while process_exists(hung):  # killed: gone once its parent reaps it
        assert time.monotonic() < deadline, f"worker {hung} still runs"
        await asyncio.sleep(0.1)
    (stats,) = [entry for entry in reward_processes.stats() if entry.reward == "sleeps_or_dies"]
    assert stats.timeouts == 1
    again = await asyncio.wait_for(calculate_rewards(rewards.sleeps_or_dies, [{"action": "ok"}], execution="process"), SAFETY)
    assert again[0].reward == 1.0  # the pool goes on with a replacement


def process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "\nState:\tZ" in status.read_text())


@pytest.mark.parametrize(
    ("action", "how"), [("die", "died on signal SIGKILL"), ("exit", "died with status 3")]
)
async def test_a_worker_that_dies_fails_only_its_sample(action: str, how: str) -> None:
    samples = [{"action": "ok"}, {"action": action}, {"action": "ok"}, {"action": "ok"}]
    results = await asyncio.wait_for(
        calculate_rewards(rewards.sleeps_or_dies, samples, execution="process", on_error="record", concurrency=1),
        SAFETY,
    )
    assert [result.reward for result in results] == [1.0, 0.0, 1.0, 1.0]
    assert results[1].extras["error"].startswith("RewardExecutionError: the worker process running reward")
    assert how in results[1].extras["error"]


async def test_a_reward_defined_in_a_function_cannot_go_to_a_worker_and_says_so_at_once() -> None:
    @reward(name="local_reward", auto_register=False)
    def local_reward(answer: str) -> float:
        return 1.0

    for on_error in ("raise", "record"):  # a configuration error: every sample would fail
        with pytest.raises(RewardLoadError, match="cannot be sent to a worker process"):
            await calculate_rewards(local_reward, [{"answer": "1"}], execution="process", on_error=on_error)


async def test_a_reward_its_workers_cannot_import_is_a_configuration_error(tmp_path: Path) -> None:
    module = types.ModuleType("rewards_only_here")  # importable in this process only
    sys.modules[module.__name__] = module
    try:
        exec(
            "from rewardkit import reward\n"
            "@reward(name='only_here', auto_register=False)\n"
            "def only_here(answer: str) -> float:\n"
            "    return 1.0\n",
            module.__dict__,
        )
        with pytest.raises(RewardLoadError, match="cannot be loaded in a worker process") as caught:
            await asyncio.wait_for(
                calculate_rewards(module.only_here, [{"answer": "1"}] * 3, execution="process", on_error="record"),
                SAFETY,
            )
        assert "No module named 'rewards_only_here'" in str(caught.value)
    finally:
        del sys.modules[module.__name__]


def test_a_reward_file_loaded_by_path_runs_in_process_through_an_adapter(tmp_path: Path) -> None:
    """verl and OpenRLHF load reward files by path, under names import cannot find: the adapter
    sends its workers the file reference."""
    source = tmp_path / "my_verl_reward.py"
    source.write_text(
        "import os\n"
        "from rewardkit import reward\n"
        "@reward(name='from_a_file', auto_register=False)\n"
        "def from_a_file(final_response: str, answer: str) -> dict:\n"
        "    return {'reward': float(final_response == answer), 'pid': os.getpid()}\n"
    )
    import importlib.util

    spec = importlib.util.spec_from_file_location("custom_module", source)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules["custom_module"] = module
    try:
        spec.loader.exec_module(module)  # type: ignore[union-attr]
        adapter = to_verl(module.from_a_file, execution="process", timeout=60.0)
        result = adapter("data", "4", "4")
        assert result["score"] == 1.0
        assert result["pid"] != os.getpid()
    finally:
        del sys.modules["custom_module"]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: reward(execution="procss")(lambda answer: 1.0), "execution must be one of"),
        (lambda: reward(execution="inline", timeout=1.0)(lambda answer: 1.0), "cannot be enforced"),
        (lambda: reward(timeout=0)(lambda answer: 1.0), "timeout must be positive"),
    ],
)
def test_bad_execution_options_are_refused_at_definition(make: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make()  # type: ignore[operator]


async def test_bad_execution_options_are_refused_by_the_callers() -> None:
    with pytest.raises(ValueError, match="execution must be one of"):
        await calculate_rewards(rewards.sleeps_or_dies, [{"action": "ok"}], execution="threads")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="cannot be enforced"):
        await calculate_rewards(rewards.sleeps_or_dies, [{"action": "ok"}], execution="inline", timeout=1.0)
    with pytest.raises(ValueError, match="execution must be one of"):
        to_trl(rewards.sleeps_or_dies, execution="fork")  # type: ignore[arg-type]


async def test_inline_runs_a_sync_reward_on_the_callers_thread() -> None:
    results = await calculate_rewards(rewards.sleeps_or_dies, [{"action": "ok"}] * 3, execution="inline")
    assert {result.extras["pid"] for result in results} == {os.getpid()}


@pytest.mark.parametrize("group_by", [None, "answer"])
async def test_a_group_reward_runs_in_worker_processes_under_the_process_mode(group_by: str | None) -> None:
    """The group path takes ``execution=`` like the per-sample one: math_verify's signals work in
    a worker process, and fail in a reward thread with the error that names the mode."""
    results = await asyncio.wait_for(
        calculate_rewards(
            rewards.math_verify_group, SAMPLES, group_by=group_by, execution="process", timeout=60.0
        ),
        SAFETY,
    )
    assert [result.reward for result in results] == EXPECTED
    assert {result.extras["pid"] for result in results}.isdisjoint({os.getpid()})
    threaded = await asyncio.wait_for(
        calculate_rewards(rewards.math_verify_group, SAMPLES, group_by=group_by, on_error="record"),
        SAFETY,
    )
    assert [result.reward for result in threaded] == [0.0] * len(SAMPLES)
    for result in threaded:
        assert "on the group of samples[" in result.extras["error"]
        assert_names_the_mode(result.extras["error"])


def test_trls_adapter_runs_a_group_reward_in_worker_processes() -> None:
    prompts = ["Solve it."] * len(SAMPLES)
    completions = [sample["final_response"] for sample in SAMPLES]
    answers = [sample["answer"] for sample in SAMPLES]
    adapter = to_trl(rewards.math_verify_group, execution="process", timeout=60.0)
    assert adapter(prompts=prompts, completions=completions, answer=answers) == EXPECTED
    threaded = to_trl(rewards.math_verify_group, timeout=60.0)
    assert threaded(prompts=prompts, completions=completions, answer=answers) == [0.0] * len(SAMPLES)
    assert threaded.stats.failures == len(SAMPLES)
    assert pickle.loads(pickle.dumps(adapter))(
        prompts=prompts, completions=completions, answer=answers
    ) == EXPECTED
