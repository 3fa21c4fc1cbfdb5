"""Issue 32, items 2, 6 and 7: worker processes never import the caller's ``__main__`` (a flat
training script's top level runs once, a reward defined in it is refused when the adapter is built
or the batch starts), ``reward_processes`` works as docs/runtime.md spells it, a result that
cannot be pickled fails its own sample (the worker lives on), and a reward that ignores SIGTERM is
killed."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import execution_rewards as rewards
import pytest

import rewardkit.reward_processes as reward_processes_module
from rewardkit import calculate_reward, calculate_rewards, reward, weighted_sum
from rewardkit.reward_processes import reward_processes
from rewardkit.runtime.define.errors import RewardLoadError

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "runtime.md"
SAFETY = 30.0  # seconds: only against a hang, never a performance bound
SCRIPT_SAFETY = 300.0


@pytest.fixture(autouse=True)
def processes() -> Iterator[None]:
    """Stop the worker processes each test started; restore the pools' size."""
    saved = reward_processes.max_workers
    yield
    reward_processes.shutdown()
    reward_processes.max_workers = saved


def guide_block(name: str) -> str:
    """The code block of docs/runtime.md's process-mode example that holds file ``name``."""
    text = GUIDE.read_text()
    opening = f"<!-- process-mode example: {name} -->\n```python\n"
    start = text.index(opening) + len(opening)
    return text[start : text.index("```\n", start)]


def run_script(
    directory: Path, script: str, count_file: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COUNT_FILE=str(count_file or directory / "count.txt"))
    return subprocess.run(
        [sys.executable, script],
        cwd=directory,
        capture_output=True,
        text=True,
        env=env,
        timeout=SCRIPT_SAFETY,
        check=False,
    )


# -- item 2: a flat training script ---------------------------------------------------------------


def test_the_guides_process_mode_example_runs_as_written(tmp_path: Path) -> None:
    (tmp_path / "my_rewards.py").write_text(guide_block("my_rewards.py"))
    (tmp_path / "train.py").write_text(guide_block("train.py"))
    completed = run_script(tmp_path, "train.py")
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    assert lines[0] == "[0.0, 1.0]"
    assert lines[1] == "ValueError: boom"
    assert lines[2].startswith(
        "[RewardProcessStats(reward='exact', workers=2, calls=2, timeouts=0, crashes=0"
    )


def test_the_guides_reward_moved_into_the_script_is_refused_before_any_call(tmp_path: Path) -> None:
    train = guide_block("train.py").replace("from my_rewards import exact\n", "")
    (tmp_path / "train.py").write_text(guide_block("my_rewards.py") + "\n" + train)
    completed = run_script(tmp_path, "train.py")
    assert completed.returncode == 1
    assert completed.stdout == ""
    assert (
        "RewardLoadError: reward 'exact' cannot run with execution='process': 'exact' ("
        in completed.stderr
    )
    assert "train.py:3) is defined in __main__" in completed.stderr
    assert "Move the reward to a module next to the script" in completed.stderr


FLAT_SCRIPT = """\
import os

with open(os.environ["COUNT_FILE"], "a") as count:  # the top level counts its own executions
    count.write(f"{{os.getpid()}}\\n")

from rewardkit import reward
from rewardkit.adapters import to_verl
{definition}
compute_score = to_verl(exact, execution="process", timeout=60.0)  # the adapter is built here
rows = [("boom", "4"), ("4", "4"), ("5", "4")]  # the failing sample first
print([compute_score("data", response, answer)["score"] for response, answer in rows])
"""
IN_A_MODULE = "from flat_rewards import exact\n"
IN_THE_SCRIPT = """
@reward
def exact(final_response: str, answer: str) -> float:
    if final_response == "boom":
        raise ValueError("boom")
    return float(final_response == answer)
"""


def test_a_flat_training_script_runs_its_top_level_once_with_process_rewards(
    tmp_path: Path,
) -> None:
    """TRL's quick-start has no ``if __name__ == "__main__":``: the workers must not run it again."""
    (tmp_path / "flat_rewards.py").write_text("from rewardkit import reward\n" + IN_THE_SCRIPT)
    (tmp_path / "train.py").write_text(FLAT_SCRIPT.format(definition=IN_A_MODULE))
    count = tmp_path / "count.txt"
    completed = run_script(tmp_path, "train.py", count)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines() == ["[0.0, 1.0, 0.0]"]
    assert "failed on sample 0" in completed.stderr
    assert "ValueError: boom" in completed.stderr
    assert len(count.read_text().splitlines()) == 1


def test_a_flat_scripts_own_reward_is_refused_when_the_adapter_is_built(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(FLAT_SCRIPT.format(definition=IN_THE_SCRIPT))
    count = tmp_path / "count.txt"
    completed = run_script(tmp_path, "train.py", count)
    assert completed.returncode == 1
    assert completed.stdout == ""
    assert 'compute_score = to_verl(exact, execution="process", timeout=60.0)' in completed.stderr
    assert "RewardLoadError: reward 'exact' cannot run with execution='process'" in completed.stderr
    assert "is defined in __main__" in completed.stderr
    assert len(count.read_text().splitlines()) == 1


def main_reward(source: str, name: str) -> object:
    """A reward defined as if in the script being run (its module is ``__main__``)."""
    namespace: dict[str, object] = {"__name__": "__main__", "reward": reward}
    exec(compile(source, "train.py", "exec"), namespace)
    return namespace[name]


MAIN_SOURCE = """
@reward(execution="process")
def in_main(answer: str) -> float:
    return 1.0
"""


async def test_calculate_rewards_refuses_a_main_reward_in_process_mode_even_recording() -> None:
    in_main = main_reward(MAIN_SOURCE, "in_main")
    with pytest.raises(RewardLoadError, match=r"'in_main' \(train.py:2\) is defined in __main__"):
        await asyncio.wait_for(
            calculate_rewards(in_main, [{"answer": "1"}], on_error="record"), SAFETY
        )
    with pytest.raises(RewardLoadError, match="defined in __main__"):
        await calculate_reward(in_main, answer="1")
    assert reward_processes.stats() == []
    assert (await calculate_rewards(in_main, [{"answer": "1"}], execution="thread"))[
        0
    ].reward == 1.0


def test_a_sum_of_a_main_component_declared_process_is_refused_when_built() -> None:
    in_main = main_reward(MAIN_SOURCE, "in_main")
    with pytest.raises(RewardLoadError, match=r"'in_main' \(train.py:2\) is defined in __main__"):
        weighted_sum([in_main, rewards.pid_or_lock], name="total")


async def test_a_sum_with_a_main_component_in_process_mode_is_refused() -> None:
    in_main = main_reward(MAIN_SOURCE.replace('execution="process"', ""), "in_main")
    total = weighted_sum([in_main, rewards.async_in_process], name="total")
    with pytest.raises(RewardLoadError, match=r"'in_main' .* is defined in __main__"):
        await asyncio.wait_for(
            calculate_rewards(total, [{"answer": "42"}], execution="process"), SAFETY
        )


# -- item 6: reward_processes as documented -------------------------------------------------------


def test_the_module_is_the_pools_object_too() -> None:
    from rewardkit import reward_processes as imported

    assert imported is reward_processes_module
    imported.max_workers = 1
    assert reward_processes.max_workers == 1
    assert imported.max_workers == 1
    assert imported.stats() == reward_processes.stats()
    imported.shutdown()
    for wrong in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="max_workers must be a positive integer"):
            imported.max_workers = wrong  # type: ignore[assignment]
    assert reward_processes.max_workers == 1


def test_reward_threads_module_is_its_pool_too() -> None:
    """The same spelling for the thread pool: ``from rewardkit import reward_threads``."""
    from rewardkit import reward_threads as imported
    from rewardkit.reward_threads import reward_threads

    saved = reward_threads.max_threads
    try:
        imported.max_threads = saved + 1
        assert reward_threads.max_threads == saved + 1
        assert imported.stats().max_threads == saved + 1
        with pytest.raises(ValueError, match="max_threads must be a positive integer"):
            imported.max_threads = 0
    finally:
        reward_threads.max_threads = saved


async def test_max_workers_set_through_the_module_sizes_the_next_pool() -> None:
    reward_processes_module.max_workers = 1
    results = await asyncio.wait_for(
        calculate_rewards(rewards.pid_or_lock, [{"final_response": "a"}] * 4), SAFETY
    )
    assert len({result["pid"] for result in results}) == 1
    (stats,) = [entry for entry in reward_processes_module.stats() if entry.reward == "pid_or_lock"]
    assert stats.workers == 1


# -- item 7: a result that cannot be pickled; a reward that ignores SIGTERM ------------------------


async def test_a_result_that_cannot_be_pickled_fails_its_sample_and_the_worker_lives() -> None:
    reward_processes.max_workers = 1
    samples = [
        {"final_response": "lock"},
        {"final_response": "a"},
        {"final_response": "lock"},
        {"final_response": "b"},
    ]
    results = await asyncio.wait_for(
        calculate_rewards(rewards.pid_or_lock, samples, on_error="record", concurrency=1), SAFETY
    )
    for failed in (results[0], results[2]):
        assert failed.reward == 0.0
        assert failed["error"].startswith(
            "RewardExecutionError: reward 'pid_or_lock' returned a result that cannot be sent back from its "
            "worker process (execution='process'): extra 'lock' is a _thread.lock (TypeError: cannot pickle"
        )
    assert results[1]["pid"] == results[3]["pid"] != os.getpid()
    (stats,) = [entry for entry in reward_processes.stats() if entry.reward == "pid_or_lock"]
    assert (stats.calls, stats.crashes, stats.restarts, stats.timeouts) == (4, 0, 0, 0)


async def test_a_group_result_that_cannot_be_pickled_names_the_sample_and_extra() -> None:
    samples = [{"final_response": "a"}, {"final_response": "lock"}]
    results = await asyncio.wait_for(
        calculate_rewards(
            rewards.group_with_a_lock, samples, execution="process", on_error="record"
        ),
        SAFETY,
    )
    for result in results:
        assert (
            "returned a result that cannot be sent back from its worker process" in result["error"]
        )
        assert "result [1]: extra 'lock' is a _thread.lock" in result["error"]
    (stats,) = [entry for entry in reward_processes.stats() if entry.reward == "group_with_a_lock"]
    assert (stats.crashes, stats.restarts) == (0, 0)


async def test_a_reward_that_ignores_sigterm_is_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pebble waits ``term_timeout`` after SIGTERM before SIGKILL (3 s by default, blocking the pool
    meanwhile); set it beyond the safety net: the answer comes from rewardkit's own escalation."""
    from pebble.common import CONSTS

    monkeypatch.setattr(CONSTS, "term_timeout", 10 * SAFETY)
    pid_file = tmp_path / "pid"
    results = await asyncio.wait_for(
        calculate_rewards(
            rewards.ignores_sigterm, [{"pid_file": str(pid_file)}], on_error="record", timeout=0.5
        ),
        SAFETY,
    )
    assert (
        results[0]["error"]
        == "TimeoutError: reward 'ignores_sigterm' on samples[0] took longer than 0.5 s"
    )
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    (stats,) = [entry for entry in reward_processes.stats() if entry.reward == "ignores_sigterm"]
    assert stats.timeouts == 1


# -- item 3: a sum runs each component in the component's own mode -----------------------------


@reward(name="outlives_its_timeout", auto_register=False, timeout=0.2)
def outlives_its_timeout(final_response: str) -> float:
    time.sleep(1.0)
    return 1.0


@reward(name="plain_length", auto_register=False)
def plain_length(final_response: str) -> float:
    return float(len(final_response))


async def test_a_sum_runs_its_components_in_their_own_modes() -> None:
    """The sum runs inline (on the loop's thread): its math_verify component, declared
    ``execution="process"``, runs in a worker process; one with its own timeout is timed out."""
    graded = weighted_sum([rewards.math_verify_in_process, plain_length], [1.0, 0.0], name="graded")
    samples = [
        {"final_response": "$4$", "answer": "$4$"},
        {"final_response": "$3$", "answer": "$4$"},
    ]
    results = await asyncio.wait_for(calculate_rewards(graded, samples, execution="inline"), SAFETY)
    assert [result.reward for result in results] == [1.0, 0.0]
    assert os.getpid() not in {result["math_verify_in_process/pid"] for result in results}
    both = weighted_sum([rewards.math_verify_in_process, rewards.async_in_process], name="both")
    assert both.is_async  # its sync process component is awaited, not waited for on the loop
    (scored,) = await asyncio.wait_for(
        calculate_rewards(both, [{"final_response": "$42$", "answer": "42"}]), SAFETY
    )
    assert scored.reward == 2.0
    assert os.getpid() not in (scored["math_verify_in_process/pid"], scored["async_in_process/pid"])
    timed = weighted_sum([outlives_its_timeout, plain_length], name="timed")
    (failed,) = await asyncio.wait_for(
        calculate_rewards(timed, [{"final_response": "x"}], execution="inline", on_error="record"),
        SAFETY,
    )
    assert failed["error"] == (
        "RewardComponentError: component 'outlives_its_timeout' of weighted reward 'timed' failed: "
        "TimeoutError: reward 'outlives_its_timeout' on the sample took longer than 0.2 s"
    )
