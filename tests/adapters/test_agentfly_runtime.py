"""rewardkit rewards under AgentFly's own runtime: its ``calculate_reward``, registry and call
convention, loaded unmodified from ``../shared/third_party/agentfly_rewards`` (never copied here)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import math
import sys
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from adapter_testing import require_shared

from rewardkit import (
    BaseReward,
    RewardResult,
    RewardShapeError,
    RewardValueError,
    calculate_reward,
    reward,
)
from rewardkit.runtime.define.fields import AGENTFLY_INJECTED_FIELDS

PACKAGE = "agentfly_rewards"


@pytest.fixture(scope="module")
def agentfly() -> Iterator[ModuleType]:
    """AgentFly's ``reward_base`` module, imported from ``../shared`` as the package its README names."""
    root = require_shared("third_party/agentfly_rewards", "AgentFly's reward runtime, the real thing tested against")
    saved = {name: module for name, module in sys.modules.items() if name == PACKAGE or name.startswith(PACKAGE + ".")}
    spec = importlib.util.spec_from_file_location(
        PACKAGE, root / "__init__.py", submodule_search_locations=[str(root)]
    )
    assert spec is not None
    assert spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = package
    spec.loader.exec_module(package)
    try:
        yield importlib.import_module(f"{PACKAGE}.reward_base")
    finally:
        for name in [name for name in sys.modules if name == PACKAGE or name.startswith(PACKAGE + ".")]:
            del sys.modules[name]
        sys.modules.update(saved)


def runner_fields(**task: Any) -> dict[str, Any]:
    """What AgentFly's runner passes a reward: predefined fields, its injected fields, the task's."""
    return {
        "final_response": "The answer is 42",
        "trajectory": [{"role": "user", "content": "6*7?"}, {"role": "assistant", "content": "The answer is 42"}],
        "id": "rollout-1",
        **{name: f"{name}-value" for name in AGENTFLY_INJECTED_FIELDS},
        "answer": "42",
        **task,
    }


# The undecorated functions: each is decorated by rewardkit and by AgentFly in the tests.


def returns_float(final_response: str, answer: str) -> float:
    return float(answer in final_response)


def returns_dict(final_response: str, answer: str) -> dict[str, Any]:
    found = answer in final_response
    return {"reward": float(found), "found": found, "f1": 0.5, "length": len(final_response)}


async def returns_dict_async(final_response: str, answer: str, trajectory: list[dict[str, Any]]) -> dict[str, Any]:
    await asyncio.sleep(0)
    return {"reward": float(answer in final_response), "turns": len(trajectory)}


def returns_int(final_response: str, answer: str) -> int:
    return int(answer in final_response)


def returns_bool(final_response: str, answer: str) -> bool:
    return answer in final_response


FUNCTIONS = [returns_float, returns_dict, returns_dict_async, returns_int, returns_bool]
AGENTFLY_DECORATOR_ACCEPTS = {returns_float, returns_dict, returns_dict_async}  # its @reward refuses int and bool


class KeywordScore(BaseReward, auto_register=False):
    """A stateful rewardkit reward: AgentFly users write these as BaseReward subclasses too."""

    name = "rk_keyword_score"

    def __init__(self, keyword: str) -> None:
        self.keyword = keyword

    def call(self, final_response: str, answer: str) -> dict[str, Any]:
        return {"reward": float(answer in final_response), "keyword": self.keyword in final_response}


class KeywordScoreAsync(KeywordScore, auto_register=False):
    name = "rk_keyword_score_async"

    async def call(self, final_response: str, answer: str) -> dict[str, Any]:  # type: ignore[override]
        await asyncio.sleep(0)
        return {"reward": float(answer in final_response), "keyword": self.keyword in final_response}


def own_fields(function: Callable[..., Any], fields: dict[str, Any]) -> dict[str, Any]:
    """The fields a plain function takes (AgentFly's calculate_reward passes every field as is)."""
    names = function.__code__.co_varnames[: function.__code__.co_argcount]
    return {name: fields[name] for name in names}


def as_pair(result: Any) -> tuple[type, float, dict[str, Any]]:
    return type(result), result.reward, result.extras


@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda function: function.__name__)
def test_a_rewardkit_reward_runs_under_agentflys_calculate_reward(agentfly: ModuleType, function: Any) -> None:
    rewardkit_reward = reward(function, name=f"rk_{function.__name__}", auto_register=False)
    fields = runner_fields()
    got = asyncio.run(agentfly.calculate_reward(rewardkit_reward, **fields))
    # The same RewardResult(reward, extras) as the undecorated function gives there.
    plain = asyncio.run(agentfly.calculate_reward(function, **own_fields(function, fields)))
    assert type(got) is agentfly.RewardResult
    assert as_pair(got) == as_pair(plain)
    if function in AGENTFLY_DECORATOR_ACCEPTS:
        # ... and as AgentFly's own @reward on the same function.
        native = agentfly.reward(name=f"af_{function.__name__}", auto_register=False)(function)
        assert as_pair(got) == as_pair(asyncio.run(agentfly.calculate_reward(native, **fields)))


@pytest.mark.parametrize("cls", [KeywordScore, KeywordScoreAsync])
def test_a_base_reward_subclass_runs_under_agentflys_calculate_reward(agentfly: ModuleType, cls: type) -> None:
    instance = cls("answer")
    got = asyncio.run(agentfly.calculate_reward(instance, **runner_fields()))
    assert type(got) is agentfly.RewardResult
    assert (got.reward, got.extras) == (1.0, {"keyword": True})
    plain = asyncio.run(agentfly.calculate_reward(instance.call, final_response="The answer is 42", answer="42"))
    assert as_pair(got) == as_pair(plain)


def test_through_agentflys_registry(agentfly: ModuleType) -> None:
    rewardkit_reward = reward(returns_dict, name="rk_registered_dict", auto_register=False)
    agentfly.register_reward("rk_registered_dict", rewardkit_reward)
    agentfly.register_reward("rk_registered_keyword", KeywordScoreAsync("42"))
    try:
        for name in ("RK_Registered_Dict", "rk_registered_keyword"):
            found = agentfly.get_reward_from_name(name)
            result = asyncio.run(agentfly.calculate_reward(found, **runner_fields()))
            assert result.reward == 1.0
        assert result.extras == {"keyword": True}
    finally:
        agentfly.REWARD_REGISTRY.pop("rk_registered_dict", None)
        agentfly.REWARD_REGISTRY.pop("rk_registered_keyword", None)


def failing_on_empty(final_response: str, answer: str) -> dict[str, Any]:
    if not final_response:
        raise ValueError("empty response")
    return {"reward": float(answer in final_response), "found": answer in final_response}


@pytest.mark.parametrize("explicit", [True, False], ids=["registry=module", "imported from agentfly.rewards"])
def test_register_in_agentfly_makes_a_config_reward_name_find_it(
    agentfly: ModuleType, monkeypatch: pytest.MonkeyPatch, explicit: bool
) -> None:
    from rewardkit.adapters import register_in_agentfly

    rewardkit_reward = reward(failing_on_empty, name="RK_Failing_On_Empty", auto_register=False)
    if not explicit:  # AgentFly installed: its registry is agentfly.rewards.reward_base
        package = sys.modules[PACKAGE]
        monkeypatch.setitem(sys.modules, "agentfly", package)
        monkeypatch.setitem(sys.modules, "agentfly.rewards", package)
        monkeypatch.setitem(sys.modules, "agentfly.rewards.reward_base", agentfly)
    adapter = register_in_agentfly(rewardkit_reward, registry=agentfly if explicit else None, timeout=30.0)
    try:
        config = {"reward_name": "rk_failing_on_empty"}  # an AgentFly agent config's reward
        found = agentfly.get_reward_from_name(config["reward_name"])
        assert found is adapter
        # The failing sample first: the same keys as a success, the failure text in `error`.
        failed = asyncio.run(agentfly.calculate_reward(found, **runner_fields(final_response="")))
        assert (failed.reward, failed.extras) == (0.0, {"found": None, "error": "ValueError: empty response"})
        passed = asyncio.run(agentfly.calculate_reward(found, **runner_fields()))
        assert (passed.reward, passed.extras) == (1.0, {"found": True, "error": ""})
    finally:
        agentfly.REWARD_REGISTRY.pop("rk_failing_on_empty", None)


def test_register_in_agentfly_without_agentfly_says_how(monkeypatch: pytest.MonkeyPatch) -> None:
    from rewardkit.adapters import register_in_agentfly

    monkeypatch.setitem(sys.modules, "agentfly", None)  # `import agentfly...` raises ImportError
    with pytest.raises(ImportError, match="registry=<its reward_base module>"):
        register_in_agentfly(reward(failing_on_empty, auto_register=False))


def test_a_direct_calls_result_reads_as_agentflys_dict(agentfly: ModuleType) -> None:
    rewardkit_reward = reward(returns_dict, name="rk_direct", auto_register=False)
    native = agentfly.reward(name="af_direct", auto_register=False)(returns_dict)
    fields = runner_fields()
    ours, theirs = rewardkit_reward(**fields), native(**fields)
    assert isinstance(theirs, dict)
    assert "reward" in ours
    assert "reward" in theirs
    assert ours["f1"] == theirs["f1"] == 0.5
    assert ours.get("missing", "default") == theirs.get("missing", "default") == "default"
    assert ours.get("found") is theirs.get("found") is True
    assert json.loads(json.dumps(ours)) == json.loads(json.dumps(theirs))
    assert dict(ours) == theirs
    assert ours == theirs
    assert sorted(ours) == sorted(theirs)
    assert sorted(ours.items()) == sorted(theirs.items())
    assert {**ours} == theirs
    # ... and keeps rewardkit's attributes.
    assert (ours.reward, ours.extras) == (1.0, {"found": True, "f1": 0.5, "length": 16})


async def test_an_async_direct_call_and_calculate_reward_read_the_same() -> None:
    rewardkit_reward = reward(returns_dict_async, name="rk_direct_async", auto_register=False)
    direct = await rewardkit_reward(**runner_fields())
    computed = await calculate_reward(rewardkit_reward, **runner_fields())
    assert direct == computed == {"reward": 1.0, "turns": 2}
    assert json.dumps(computed) == '{"reward": 1.0, "turns": 2}'


def test_a_bad_return_shape_is_caught_as_agentfly_code_catches_it(agentfly: ModuleType) -> None:
    def no_reward_key(final_response: str) -> dict[str, Any]:
        return {"score": 1.0}  # rewardkit: ignore[RK201] (deliberately broken)

    rewardkit_reward = reward(no_reward_key, auto_register=False)
    native = agentfly.reward(name="af_no_reward_key", auto_register=False)(no_reward_key)
    for call in (
        lambda: rewardkit_reward(**runner_fields()),
        lambda: asyncio.run(agentfly.calculate_reward(rewardkit_reward, **runner_fields())),
        lambda: asyncio.run(agentfly.calculate_reward(native, **runner_fields())),  # AgentFly's own error
    ):
        with pytest.raises(ValueError, match="reward"):
            call()
    with pytest.raises(RewardShapeError, match="reward 'no_reward_key' returned a dict without a 'reward' key"):
        rewardkit_reward(**runner_fields())


def test_results_are_read_only_and_picklable_as_dicts() -> None:
    result = RewardResult(0.5, {"f1": 0.5})
    with pytest.raises(TypeError, match=r"read-only .*dict\(result\) gives a mutable copy"):
        result["reward"] = float("nan")  # type: ignore[index]
    for mutate in (lambda: result.update(f1=1), lambda: result.pop("f1"), lambda: result.setdefault("x", 1)):
        with pytest.raises(TypeError, match="read-only"):
            mutate()
    copy = dict(result)
    copy["f1"] = 1.0
    assert result["f1"] == 0.5


# -- docs/runtime.md "Coming from AgentFly": the differences it lists, on both runtimes -----


def agentfly_outcome(agentfly: ModuleType, function: Callable[..., Any], name: str) -> Any:
    """What AgentFly's own @reward and calculate_reward make of ``function``: a result or the error."""
    native = agentfly.reward(name=name, auto_register=False)(function)
    try:
        return asyncio.run(agentfly.calculate_reward(native, **runner_fields()))
    except Exception as exc:
        return exc


def rewardkit_outcome(function: Callable[..., Any], name: str) -> Any:
    try:
        return asyncio.run(calculate_reward(reward(function, name=name, auto_register=False), **runner_fields()))
    except Exception as exc:
        return exc


def kwargs_reward(final_response: str, **kwargs: Any) -> dict[str, Any]:
    return {"reward": 1.0, "seen": sorted(kwargs)}


def test_row_2_kwargs_receives_the_fields_here_and_nothing_there(agentfly: ModuleType) -> None:
    assert agentfly_outcome(agentfly, kwargs_reward, "kw").extras == {"seen": []}
    assert rewardkit_outcome(kwargs_reward, "kw").extras["seen"] == sorted(set(runner_fields()) - {"final_response"})


@pytest.mark.parametrize(
    ("returned", "agentfly_gives", "rewardkit_gives"),
    [
        (1, ValueError, 1.0),  # row 4
        (True, ValueError, 1.0),
        (np.float32(0.5), ValueError, 0.5),
        (None, ValueError, RewardShapeError),  # row 5
        (math.nan, "nan", RewardValueError),  # row 6
        ({"reward": "0.5"}, 0.5, RewardShapeError),  # row 7
        ({"score": 1.0}, ValueError, RewardShapeError),  # row 8 (AgentFly: only in calculate_reward)
    ],
    ids=["int", "bool", "float32", "None", "nan", "str-reward", "no-reward-key"],
)
def test_rows_4_to_8_return_values(agentfly: ModuleType, returned: Any, agentfly_gives: Any, rewardkit_gives: Any) -> None:
    def returns(final_response: str) -> Any:
        return returned

    theirs, ours = agentfly_outcome(agentfly, returns, "returns"), rewardkit_outcome(returns, "returns")
    if agentfly_gives == "nan":
        assert math.isnan(theirs.reward)
    elif isinstance(agentfly_gives, type):
        assert isinstance(theirs, agentfly_gives)
    else:
        assert theirs.reward == agentfly_gives
    if isinstance(rewardkit_gives, type):
        assert isinstance(ours, rewardkit_gives)
        assert "reward 'returns'" in str(ours)
        assert isinstance(ours, ValueError)  # row 9: except ValueError written for AgentFly still works
    else:
        assert ours.reward == rewardkit_gives


def test_row_5_a_plain_function_returning_none_is_zero_there(agentfly: ModuleType) -> None:
    def nothing(final_response: str) -> None:
        return None

    assert asyncio.run(agentfly.calculate_reward(nothing, final_response="x")).reward == 0.0
    legacy = reward(nothing, name="legacy_none", auto_register=False, none_as_zero=True)
    assert asyncio.run(agentfly.calculate_reward(legacy, **runner_fields())).reward == 0.0


def test_rows_10_11_13_results_and_the_reward_fn_keyword(agentfly: ModuleType) -> None:
    native = agentfly.reward(name="af_mutable", auto_register=False)(returns_dict)
    theirs = native(**runner_fields())
    theirs["extra"] = 1  # AgentFly's direct result is a plain dict
    ours = reward(returns_dict, name="rk_mutable", auto_register=False)(**runner_fields())
    with pytest.raises(TypeError, match="read-only"):
        ours["extra"] = 1  # type: ignore[index]
    copy = dict(ours)
    copy["extra"] = 1
    computed = asyncio.run(agentfly.calculate_reward(reward_fn=native, **runner_fields()))
    computed.reward = 0.25  # AgentFly's RewardResult is a mutable dataclass
    with pytest.raises(AttributeError):
        ours.reward = 0.25  # type: ignore[misc]
    assert RewardResult(0.25, ours.extras).reward == 0.25
    rewardkit_reward = reward(returns_dict, name="rk_keyword_call", auto_register=False)
    with pytest.raises(TypeError):
        asyncio.run(calculate_reward(reward_fn=rewardkit_reward, **runner_fields()))  # type: ignore[call-arg]
