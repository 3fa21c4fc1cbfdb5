"""The adapters' options written once (``AdapterOptions``), and one scoring path behind the sync
and async faces."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import pickle
import threading
import typing
from collections.abc import Callable
from typing import Any

import pytest
from adapter_rewards import exact, exact_async, picky

import rewardkit.adapters.options as options_module
from rewardkit.adapters import (
    AdapterOptions,
    AdapterOptionsDict,
    AsyncTrlReward,
    AsyncVerlReward,
    TrlReward,
    VerlReward,
    register_in_agentfly,
    to_agentfly,
    to_openrlhf,
    to_trl,
    to_verl,
)
from rewardkit.runtime.define.rewards import reward

FACTORIES: dict[str, Callable[..., Any]] = {
    "to_verl": to_verl,
    "to_trl": to_trl,
    "to_openrlhf": to_openrlhf,
    "to_agentfly": to_agentfly,
}


def test_the_keyword_form_names_the_same_options_with_the_same_types() -> None:
    fields = {field.name: field.type for field in dataclasses.fields(AdapterOptions)}
    hints = typing.get_type_hints(AdapterOptionsDict, vars(options_module))
    declared = AdapterOptionsDict.__annotations__
    assert list(declared) == list(fields)
    assert {
        name: getattr(hint, "__forward_arg__", hint) for name, hint in declared.items()
    } == fields
    assert set(hints) == set(fields)


@pytest.mark.parametrize("factory", FACTORIES)
def test_an_options_object_and_keywords_build_the_same_adapter(factory: str) -> None:
    make = FACTORIES[factory]
    given = {
        "name": "shared",
        "timeout": 3.0,
        "fallback": -1.0,
        "extra_keys": ("matched", "length"),
    }
    from_object = make(exact, options=AdapterOptions(**given))
    from_keywords = make(exact, **given)
    assert from_object.options() == from_keywords.options()
    assert from_object.__name__ == "shared"
    assert from_object.settings == from_keywords.settings


def test_keywords_override_the_options_object_which_is_not_changed() -> None:
    shared = AdapterOptions(timeout=3.0, fallback=-1.0)
    adapter = to_verl(exact, options=shared, fallback=-2.0)
    assert (adapter.settings.timeout, adapter.settings.fallback) == (3.0, -2.0)
    assert shared.fallback == -1.0


@pytest.mark.parametrize("factory", FACTORIES)
def test_an_unknown_option_is_a_type_error_naming_it(factory: str) -> None:
    with pytest.raises(
        TypeError,
        match=rf"{factory}\(\) got an unexpected keyword argument 'timout'; did you mean 'timeout'\?",
    ):
        FACTORIES[factory](exact, timout=3.0)


def test_register_in_agentfly_refuses_an_unknown_option_before_registering() -> None:
    registered: list[str] = []

    class Registry:
        @staticmethod
        def register_reward(name: str, function: object) -> None:
            registered.append(name)

    with pytest.raises(TypeError, match="unexpected keyword argument 'fallbak'"):
        register_in_agentfly(exact, registry=Registry, fallbak=0.0)
    assert registered == []


@pytest.mark.parametrize("option", [{"field_map": {"a": "b"}}, {"concurrency": 4}])
def test_agentfly_refuses_the_options_it_has_no_use_for(option: dict[str, Any]) -> None:
    name = next(iter(option))
    with pytest.raises(
        TypeError,
        match=rf"to_agentfly\(\) got an unexpected keyword argument '{name}': AgentFly has no use for it",
    ):
        to_agentfly(exact, **option)
    with pytest.raises(TypeError, match=f"'{name}'"):
        to_agentfly(exact, options=AdapterOptions(**option))


def test_options_are_validated_when_built_and_frozen() -> None:
    with pytest.raises(ValueError, match="on_error must be 'fallback' or 'raise'"):
        AdapterOptions(on_error="ignore")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="execution must be one of"):
        AdapterOptions(execution="fork")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="concurrency must be a positive integer"):
        AdapterOptions(concurrency=True)
    options = AdapterOptions(extra_keys=["acc"], field_map={"label": "answer"})
    assert options.extra_keys == ("acc",)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.timeout = 1.0  # type: ignore[misc]
    with pytest.raises(TypeError, match="options= must be an AdapterOptions, got dict"):
        to_verl(exact, options={"timeout": 1.0})  # type: ignore[arg-type]


def test_missing_extra_left_to_the_framework() -> None:
    shared = AdapterOptions(timeout=3.0)
    assert to_openrlhf(exact, options=shared).settings.missing_extra == 0.0
    assert to_verl(exact, options=shared).settings.missing_extra is None
    assert to_trl(exact, options=shared).settings.missing_extra is None
    with pytest.raises(ValueError, match="missing_extra must be a finite number for OpenRLHF"):
        to_openrlhf(exact, missing_extra=None)


def test_the_options_travel_with_a_pickled_adapter() -> None:
    adapter = to_trl(exact, options=AdapterOptions(timeout=2.0, fallback=None), group_size=None)
    copy = pickle.loads(pickle.dumps(adapter))
    assert copy.settings == dataclasses.replace(adapter.settings, name=adapter.__name__)
    assert copy.options() == adapter.options()


# -- one implementation, two faces -------------------------------------------------------------

seen: list[tuple[int, bool]] = []


def _has_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


@reward(name="adapters_where_it_ran", extra_keys=())
def where_it_ran(final_response: str) -> float:
    """Records the thread it ran on and whether an event loop was running there."""
    seen.append((threading.get_ident(), _has_loop()))
    return 1.0


def test_an_inline_sync_reward_runs_in_the_callers_thread_with_no_event_loop() -> None:
    seen.clear()
    compute_score = to_verl(where_it_ran, execution="inline")
    trl_reward = to_trl(where_it_ran, execution="inline")
    assert compute_score(data_source="d", solution_str="x", ground_truth="y")["score"] == 1.0
    assert (
        compute_score(data_sources=["d"] * 2, solution_strs=["x", "y"], ground_truths=["a", "b"])[
            1
        ]["score"]
        == 1.0
    )
    assert trl_reward(prompts=["p", "p"], completions=["a", "b"]) == [1.0, 1.0]
    assert seen == [(threading.get_ident(), False)] * 5


def test_sync_and_async_faces_give_the_same_results() -> None:
    batch = {
        "data_sources": ["d"] * 3,
        "solution_strs": ["1", "2", "boom"],
        "ground_truths": ["1", "1", "1"],
    }
    sync_face = to_verl(picky, asynchronous=False)
    async_face = to_verl(picky, asynchronous=True)
    assert isinstance(sync_face, VerlReward)
    assert isinstance(async_face, AsyncVerlReward)
    assert sync_face(**batch) == asyncio.run(async_face(**batch))
    completions = {"prompts": ["p"] * 2, "completions": ["1", "2"], "answer": ["1", "1"]}
    trl_sync, trl_async = to_trl(exact_async, asynchronous=False), to_trl(exact_async)
    assert isinstance(trl_sync, TrlReward)
    assert isinstance(trl_async, AsyncTrlReward)
    assert trl_sync(**completions) == asyncio.run(trl_async(**completions)) == [1.0, 0.0]


def test_a_sync_face_called_on_a_running_loop_scores_off_it() -> None:
    trl_reward = to_trl(exact_async, asynchronous=False)

    async def from_a_coroutine() -> list[float | None]:
        return trl_reward(prompts=["p"], completions=["1"], answer=["1"])

    assert asyncio.run(from_a_coroutine()) == [1.0]


def test_the_faces_show_the_frameworks_signatures() -> None:
    verl_parameters = ["data_source", "solution_str", "ground_truth", "extra_info"]
    assert list(inspect.signature(to_verl(exact)).parameters)[:4] == verl_parameters
    assert list(inspect.signature(to_verl(exact_async)).parameters)[:4] == verl_parameters
    assert list(inspect.signature(to_trl(exact)).parameters)[:3] == [
        "prompts",
        "completions",
        "completion_ids",
    ]
    assert not inspect.iscoroutinefunction(to_trl(exact).__call__)
    assert inspect.iscoroutinefunction(to_trl(exact_async).__call__)
