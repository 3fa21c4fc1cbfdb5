"""TRL adapter: called exactly as TRL 1.x's GRPOTrainer._calculate_rewards calls reward functions."""

from __future__ import annotations

import asyncio
import inspect
from collections import defaultdict
from typing import Any

import pytest
from adapter_rewards import echo_fields, exact, exact_async, picky, uneven_extras

from rewardkit.adapters import AsyncTrlReward, TrlReward, to_trl
from rewardkit.runtime.define.errors import FieldCollisionError


class TrainerLogs:
    """What GRPOTrainer passes as log_extra/log_metric: appends to pending per-batch buffers."""

    def __init__(self) -> None:
        self.extra: dict[str, list[Any]] = defaultdict(list)
        self.metrics: dict[str, list[float]] = defaultdict(list)

    def log_extra(self, column: str, values: list[Any]) -> None:
        self.extra[column].extend(values)

    def log_metric(self, name: str, value: float) -> None:
        self.metrics[name].append(value)


class TrainerState:
    """Stands in for transformers.TrainerState (TRL passes it as ``trainer_state``)."""

    global_step = 7


def trl_kwargs(inputs: list[dict[str, Any]], logs: TrainerLogs | None) -> dict[str, Any]:
    """The keyword arguments TRL builds: every column but prompt/completion(_ids), as lists."""
    keys = [key for key in inputs[0] if key not in ["prompt", "completion", "completion_ids"]]
    kwargs: dict[str, Any] = {key: [example[key] for example in inputs] for key in keys}
    kwargs["trainer_state"] = TrainerState()
    if logs is not None:
        kwargs["log_extra"] = logs.log_extra
        kwargs["log_metric"] = logs.log_metric
    return kwargs


STANDARD = [
    {"prompt": "2+2=", "answer": "4", "level": 1},
    {"prompt": "3+3=", "answer": "6", "level": 2},
]


def test_standard_format() -> None:
    reward_func = to_trl(exact)
    logs = TrainerLogs()
    prompts = [row["prompt"] for row in STANDARD]
    completions = ["4", " 7"]
    rewards = reward_func(
        prompts=prompts, completions=completions, completion_ids=[[1], [2, 3]], **trl_kwargs(STANDARD, logs)
    )
    assert rewards == [1.0, 0.0]
    assert isinstance(reward_func, TrlReward)
    assert reward_func.__name__ == "adapters_exact"  # TRL logs rewards/<__name__>
    assert logs.metrics["adapters_exact/matched"] == [0.5]
    assert logs.metrics["adapters_exact/length"] == [1.5]
    assert logs.metrics["adapters_exact/failure_rate"] == [0.0]
    assert logs.extra["adapters_exact/matched"] == [True, False]
    assert logs.extra["adapters_exact/error"] == [None, None]


def test_conversational_format_with_tool_calls() -> None:
    reward_func = to_trl(echo_fields)
    prompts = [[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"}]]
    completions = [
        [
            {"role": "assistant", "content": None, "tool_calls": [{"type": "function", "function": {"name": "calc"}}]},
            {"role": "tool", "name": "calc", "content": "4"},
            {"role": "assistant", "content": [{"type": "text", "text": "It is "}, {"type": "text", "text": "4"}]},
        ]
    ]
    inputs = [{"prompt": prompts[0], "answer": "4", "id": "row-1"}]
    logs = TrainerLogs()
    mapped = to_trl(echo_fields, field_map={"id": "task_id"})
    assert mapped(prompts=prompts, completions=completions, completion_ids=[[1, 2]], **trl_kwargs(inputs, logs)) == [1.0]
    seen = logs.extra["adapters_fields/seen"][0]
    assert seen["final_response"] == "It is 4"
    assert seen["answer"] == "4"
    assert seen["task_id"] == "row-1"
    assert isinstance(seen["trainer_state"], TrainerState)
    assert [message["role"] for message in seen["trajectory"]] == ["system", "user", "assistant", "tool", "assistant"]
    assert "log_extra" not in seen
    # A dataset column named like a predefined field is a clear error unless mapped.
    with pytest.raises(FieldCollisionError, match=r"'id'.*field_map=\{'id': 'task_id'\}"):
        reward_func(prompts=prompts, completions=completions, completion_ids=[[1, 2]], **trl_kwargs(inputs, None))


def test_without_logging_callbacks() -> None:
    # Older TRL releases pass neither log_extra nor log_metric.
    reward_func = to_trl(exact)
    assert reward_func(prompts=["q"], completions=["a"], completion_ids=[[1]], answer=["a"]) == [1.0]


def test_fallback_none_marks_failures_not_applicable() -> None:
    reward_func = to_trl(picky, fallback=None)
    logs = TrainerLogs()
    rewards = reward_func(
        prompts=["p", "p"], completions=["1", "boom"], completion_ids=[[1], [2]], answer=["1", "1"],
        log_extra=logs.log_extra, log_metric=logs.log_metric,
    )
    assert rewards == [1.0, None]  # TRL turns None into NaN and leaves this function out for that row
    assert logs.metrics["adapters_picky/failure_rate"] == [0.5]
    assert logs.extra["adapters_picky/error"] == [None, "RuntimeError: boom in the response"]
    assert reward_func.stats.failures == 1


def test_extras_columns_stay_the_same_across_batches() -> None:
    reward_func = to_trl(uneven_extras)
    logs = TrainerLogs()
    for completions in (["hi", "hello world"], ["a much longer one", "x"]):
        reward_func(
            prompts=["p"] * 2, completions=completions, completion_ids=[[1]] * 2,
            log_extra=logs.log_extra, log_metric=logs.log_metric,
        )
    assert set(logs.extra) == {"adapters_uneven/length", "adapters_uneven/short", "adapters_uneven/error"}
    assert all(len(values) == 4 for values in logs.extra.values())
    assert logs.extra["adapters_uneven/short"] == [True, None, None, True]


def test_async_reward_gives_an_async_adapter_trl_gathers() -> None:
    reward_func = to_trl(exact_async)
    assert isinstance(reward_func, AsyncTrlReward)
    # TRL's is_async_callable: inspect.iscoroutinefunction(func) or (func.__call__)
    assert inspect.iscoroutinefunction(reward_func.__call__)
    assert inspect.iscoroutinefunction(reward_func)

    async def trainer_async_loop() -> list[float | None]:
        return await reward_func(
            prompts=["a", "b"], completions=["1", "2"], completion_ids=[[1], [2]], answer=["1", "0"]
        )

    assert asyncio.run(trainer_async_loop()) == [1.0, 0.0]


def test_column_of_the_wrong_length_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="column 'answer' has 1 entries but there are 2 completions"):
        to_trl(exact)(prompts=["a", "b"], completions=["1", "2"], completion_ids=None, answer=["1"])


def test_malformed_conversational_completion_fails_that_sample_only() -> None:
    reward_func = to_trl(exact)
    rewards = reward_func(
        prompts=["a", "b"], completions=["1", ["not a message"]], completion_ids=None, answer=["1", "1"]
    )
    assert rewards == [1.0, 0.0]
    assert reward_func.stats.failures == 1
