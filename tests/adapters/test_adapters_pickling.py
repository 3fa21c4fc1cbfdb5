"""Adapters pickle by reference (registry name or module:qualname), so pools and Ray ship them."""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import multiprocessing
import os
import pickle
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import adapter_rewards
import pytest
from adapter_rewards import KeywordReward, exact, exact_async, picky

from rewardkit.adapters import (
    RewardNotShippableError,
    RewardReference,
    to_agentfly,
    to_openrlhf,
    to_trl,
    to_verl,
)
from rewardkit.runtime.define.rewards import reward

HERE = Path(__file__).resolve().parent


def plain_function_reward(final_response: str, answer: str) -> float:
    """A plain function, not decorated: adapters accept it too."""
    return float(final_response == answer)


ADAPTERS = [
    pytest.param(lambda: to_verl(exact, timeout=5.0, extra_keys=["matched"]), id="verl"),
    pytest.param(lambda: to_verl(exact_async), id="verl-async"),
    pytest.param(lambda: to_trl(exact, name="exact_for_trl", fallback=None), id="trl"),
    pytest.param(lambda: to_trl(exact_async), id="trl-async"),
    pytest.param(lambda: to_openrlhf(exact, stop_strings=["</s>"], return_tensors=False), id="openrlhf"),
    pytest.param(lambda: to_agentfly(exact_async, timeout=1.0), id="agentfly"),
]


@pytest.mark.parametrize("make", ADAPTERS)
def test_pickle_round_trip_keeps_class_name_and_options(make: Any) -> None:
    adapter = make()
    data = pickle.dumps(adapter)
    assert b"adapter_rewards" in data  # the reward travels as a reference, not as code
    copy = pickle.loads(data)
    assert type(copy) is type(adapter)
    assert copy.__name__ == adapter.__name__
    assert copy.options() == adapter.options()
    assert copy.reward is adapter.reward
    assert inspect.iscoroutinefunction(copy) == inspect.iscoroutinefunction(adapter)


def test_reference_kinds() -> None:
    assert RewardReference.of(exact).kind == "qualname"
    assert RewardReference.of("adapters_exact") == RewardReference("name", "adapters_exact", module="adapter_rewards")
    assert RewardReference.of(plain_function_reward).kind == "qualname"
    assert RewardReference.of(KeywordReward("x")).kind == "value"


def test_registry_name_round_trip() -> None:
    copy = pickle.loads(pickle.dumps(to_verl("ADAPTERS_EXACT")))  # names are case-insensitive
    assert copy.reward is exact
    assert copy(data_source="d", solution_str="1", ground_truth="1")["score"] == 1.0


def test_stateful_base_reward_travels_by_value() -> None:
    copy = pickle.loads(pickle.dumps(to_verl(KeywordReward("banana"))))
    assert copy.reward.keyword == "banana"
    assert copy(data_source="d", solution_str="a banana", ground_truth=None)["score"] == 1.0


def test_plain_function_round_trip() -> None:
    copy = pickle.loads(pickle.dumps(to_trl(plain_function_reward)))
    assert copy.__name__ == "plain_function_reward"
    assert copy(prompts=["p"], completions=["a"], completion_ids=None, answer=["a"]) == [1.0]


def test_reward_defined_in_a_function_is_a_clear_error_at_pickle_time() -> None:
    @reward(name="adapters_local_only", auto_register=False)
    def local_reward(final_response: str) -> float:
        return 1.0

    adapter = to_verl(local_reward)
    assert adapter(data_source="d", solution_str="x", ground_truth=None)["score"] == 1.0  # works in-process
    with pytest.raises(RewardNotShippableError, match=r"'adapters_local_only'.*<locals>.*top level"):
        pickle.dumps(adapter)


def test_counters_start_fresh_in_the_copy() -> None:
    adapter = to_verl(picky)
    adapter(data_source="d", solution_str="boom", ground_truth="1")
    copy = pickle.loads(pickle.dumps(adapter))
    assert adapter.stats.failures == 1
    assert copy.stats.failures == 0


def _spawn_pool() -> ProcessPoolExecutor:
    # spawn: a fresh interpreter that must import everything again (as Ray workers do); it reads
    # PYTHONPATH when the pool starts its worker, so the test's own value is put back at once
    # (later tests' subprocesses must not find this directory, or rewardkit, through it)
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(HERE), before or ""])
    try:
        executor = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
        executor.submit(int).result()  # the worker is started (with HERE on its path)
    finally:
        if before is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = before
    return executor


def test_process_pool_like_verls_prime_manager() -> None:
    compute_score = to_verl(exact)
    trl_func = to_trl(exact_async)
    openrlhf_func = to_openrlhf(exact, return_tensors=False)

    async def score_in_pool() -> list[Any]:
        loop = asyncio.get_running_loop()
        with _spawn_pool() as executor:
            # verl prime manager: run_in_executor(executor, partial(evaluation_func, task, completion, reference, extra))
            verl_result = await loop.run_in_executor(executor, partial(compute_score, "math", "42", "42", None))
            openrlhf_result = await loop.run_in_executor(executor, openrlhf_func, ["Q: 1"], ["Q: "], ["1"])
            names = await loop.run_in_executor(executor, _name_and_pid, trl_func)
            return [verl_result, openrlhf_result, names]

    verl_result, openrlhf_result, (name, pid, is_async) = asyncio.run(score_in_pool())
    assert verl_result == {"score": 1.0, "matched": True, "length": 2, "error": ""}
    assert openrlhf_result["rewards"] == [1.0]
    assert name == "adapters_exact_async"
    assert pid != os.getpid()
    assert is_async


def _name_and_pid(adapter: Any) -> tuple[str, int, bool]:
    return adapter.__name__, os.getpid(), inspect.iscoroutinefunction(adapter.__call__)


def test_ray_ships_the_adapter(ray_session: Any) -> None:
    ray = ray_session

    @ray.remote
    def score(adapter: Any, solution: str, answer: str) -> Any:
        return adapter(data_source="d", solution_str=solution, ground_truth=answer), os.getpid()

    @ray.remote
    def score_async(adapter: Any, solution: str, answer: str) -> Any:
        assert inspect.iscoroutinefunction(adapter)  # still what verl's reward loop checks
        return asyncio.run(adapter(data_source="d", solution_str=solution, ground_truth=answer))

    result, pid = ray.get(score.remote(to_verl(adapter_rewards.exact), "7", "7"))
    assert result == {"score": 1.0, "matched": True, "length": 1, "error": ""}
    assert pid != os.getpid()
    stateful = ray.get(score.remote(to_verl(KeywordReward("kiwi")), "a kiwi", None))[0]
    assert stateful == {"score": 1.0, "error": ""}
    async_result = ray.get(score_async.remote(to_verl(adapter_rewards.exact_async), "7", "8"))
    assert async_result == {"score": 0.0, "matched": False, "length": 1, "error": ""}


def load_like_verl(path: Path, object_name: str) -> Any:
    """verl's load_extern_object: exec the file under a made-up name that is not in sys.modules."""
    spec = importlib.util.spec_from_file_location(f"custom_module_{hash(str(path.resolve()))}", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, object_name)


def test_reward_file_loaded_by_path_ships_to_a_spawned_worker() -> None:
    example = HERE.parents[1] / "examples" / "adapters" / "portable_reward.py"
    compute_score = load_like_verl(example, "compute_score")
    assert compute_score.reference.kind == "file"
    # verl's get_custom_reward_fn: partial(_call_with_kwargs, raw_fn, reward_kwargs) when not a coroutine function
    assert not inspect.iscoroutinefunction(compute_score)
    evaluation_func = partial(compute_score, extra_note="from reward_kwargs")

    async def score_in_pool() -> Any:
        with _spawn_pool() as executor:
            return await asyncio.get_running_loop().run_in_executor(
                executor, partial(evaluation_func, "gsm8k", "so 6*7 = 42", "42", None)
            )

    assert asyncio.run(score_in_pool()) == {"score": 1.0, "found": True, "error": ""}
