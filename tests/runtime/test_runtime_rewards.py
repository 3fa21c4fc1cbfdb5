"""Defining rewards with @reward and BaseReward, and how fields reach them."""

from __future__ import annotations

import functools
import inspect
import pickle
from typing import Any

import pytest

from rewardkit import (
    BaseReward,
    Context,
    FieldCollisionError,
    MissingFieldError,
    Reward,
    RewardError,
    RewardResult,
    build_fields,
    calculate_reward,
    get_reward,
    reward,
)


def test_decorator_describes_the_reward() -> None:
    def exact_equal(final_response: str, answer: str, bonus: float = 0.0) -> float:
        """Exact match."""
        return float(final_response == answer) + bonus

    wrapped = reward(exact_equal)
    assert isinstance(wrapped, Reward)
    assert wrapped.name == "exact_equal"
    assert wrapped.is_async is False
    assert wrapped.parameters == ("final_response", "answer", "bonus")
    assert wrapped.__wrapped__ is exact_equal
    assert wrapped.__doc__ == "Exact match."
    assert inspect.signature(wrapped) == inspect.signature(exact_equal)
    assert get_reward("exact_equal") is wrapped


async def test_async_reward_returns_a_coroutine_of_a_result() -> None:
    @reward(name="async_len")
    async def length(final_response: str) -> int:
        return len(final_response)

    assert length.is_async
    pending = length(final_response="abc")
    assert inspect.iscoroutine(pending)
    assert await pending == RewardResult(3.0)


@pytest.mark.parametrize("style", ["bare", "called", "named", "positional_name"])
def test_decorator_forms(style: str) -> None:
    def f(final_response: str) -> float:
        return 1.0

    made = {
        "bare": lambda: reward(f),
        "called": lambda: reward()(f),
        "named": lambda: reward(name="custom")(f),
        "positional_name": lambda: reward("custom")(f),
    }[style]()
    assert made.name == ("f" if style in {"bare", "called"} else "custom")
    assert made(final_response="x").reward == 1.0


async def test_redecorating_a_reward_wraps_the_function_itself() -> None:
    @reward(auto_register=False)
    async def inner(final_response: str) -> float:
        return 1.0

    renamed = reward(inner, name="renamed", auto_register=False)
    assert renamed.__wrapped__ is inner.__wrapped__
    assert renamed.is_async
    assert (await renamed(final_response="x")).reward == 1.0


def test_positional_arguments_raise_type_error_naming_the_reward() -> None:
    @reward(name="strict", auto_register=False)
    def strict(final_response: str) -> float:
        return 1.0

    with pytest.raises(TypeError, match=r"reward 'strict' takes fields by keyword only \(got 1 positional"):
        strict("hello")


def test_only_declared_fields_are_passed() -> None:
    seen: dict[str, Any] = {}

    @reward(auto_register=False)
    def picky(final_response: str, answer: str) -> float:
        seen.update(final_response=final_response, answer=answer)
        return 0.0

    picky(final_response="a", answer="b", trajectory=[], id="r1", max_length=3)
    assert seen == {"final_response": "a", "answer": "b"}


def test_var_keyword_reward_receives_every_field() -> None:
    @reward(auto_register=False)
    def everything(final_response: str, **data: Any) -> dict[str, Any]:
        return {"reward": 1.0, "keys": sorted(data)}

    result = everything(final_response="a", answer="b", task_id=7)
    assert result.extras == {"keys": ["answer", "task_id"]}


def test_parameters_with_defaults_may_be_absent() -> None:
    @reward(auto_register=False)
    def with_default(final_response: str, max_length: int = 10, *, scale: float = 1.0) -> float:
        return scale * min(len(final_response), max_length)

    assert with_default(final_response="abcdef").reward == 6.0
    assert with_default(final_response="abcdef", max_length=2, scale=0.5).reward == 1.0


def test_missing_field_names_reward_parameter_available_fields_and_suggestion() -> None:
    @reward(name="typo_reward", auto_register=False)
    def typo(final_response: str, answr: str) -> float:  # rewardkit: ignore[RK101]
        return 0.0

    with pytest.raises(MissingFieldError) as caught:
        typo(final_response="x", answer="y", trajectory=[])
    error = caught.value
    message = str(error)
    assert "reward 'typo_reward'" in message
    assert "requires field 'answr'" in message
    assert "available fields: answer, final_response, trajectory" in message
    assert "Did you mean 'answer'?" in message
    assert __file__ in message  # the place: file:line of the definition
    assert (error.reward_name, error.parameter, error.suggestion) == ("typo_reward", "answr", "answer")
    assert isinstance(error, RewardError)
    assert isinstance(error, TypeError)


async def test_missing_field_through_calculate_reward_and_for_keyword_only() -> None:
    @reward(auto_register=False)
    def kwonly(final_response: str, *, answer: str) -> float:
        return 0.0

    with pytest.raises(MissingFieldError, match=r"requires field 'answer'.*available fields: final_response"):
        await calculate_reward(kwonly, final_response="x")


def test_missing_predefined_field_says_the_caller_must_pass_it() -> None:
    @reward(auto_register=False)
    def needs_context(context: Context) -> float:
        return 0.0

    with pytest.raises(MissingFieldError, match=r"'context' is a predefined field .* caller must pass"):
        needs_context(final_response="x")


def test_missing_several_fields_lists_them_all() -> None:
    @reward(auto_register=False)
    def two(alpha: int, beta: int) -> float:
        return 0.0

    with pytest.raises(MissingFieldError, match=r"requires fields 'alpha', 'beta'.*available fields: \(none\)"):
        two()


def test_positional_only_parameters_are_refused_at_definition() -> None:
    def positional(final_response: str, /) -> float:
        return 0.0

    with pytest.raises(TypeError, match=r"parameter 'final_response' is positional-only"):
        reward(positional)


def test_task_field_named_like_a_predefined_field_is_a_clear_error() -> None:
    with pytest.raises(FieldCollisionError) as caught:
        build_fields({"answer": "4", "trajectory": "x"}, where="tasks.jsonl:3", final_response="4", trajectory=[])
    message = str(caught.value)
    assert "task field 'trajectory' at tasks.jsonl:3" in message
    assert "predefined field" in message
    assert "multiple values" not in message
    assert caught.value.field == "trajectory"
    assert build_fields({"answer": "4"}, final_response="4") == {"answer": "4", "final_response": "4"}
    with pytest.raises(TypeError, match="answer is not a predefined field"):
        build_fields({}, answer="4")


def test_reward_objects_pickle_by_reference() -> None:
    assert pickle.loads(pickle.dumps(module_level_reward)) is module_level_reward

    @reward(auto_register=False)
    def local(final_response: str) -> float:
        return 1.0

    with pytest.raises(pickle.PicklingError, match=r"reward 'local' .* defined inside a function"):
        pickle.dumps(local)


@reward(name="runtime_test_module_level", auto_register=False)
def module_level_reward(final_response: str) -> float:
    return 1.0


# ---- BaseReward ---------------------------------------------------------------------------


class FakeJudgeClient:
    """Stands in for a remote judge API: scores by word overlap, records its calls."""

    def __init__(self, api_key: str) -> None:
        self.api_key = api_key
        self.calls: list[tuple[str, str]] = []

    async def evaluate(self, response: str, reference: str) -> float:
        self.calls.append((response, reference))
        words = set(reference.split())
        return len(words & set(response.split())) / max(len(words), 1)


def test_base_reward_is_registered_at_class_definition() -> None:
    class LengthReward(BaseReward):
        name = "length_reward_runtime_test"

        def call(self, final_response: str) -> float:
            return float(len(final_response))

    assert get_reward("LENGTH_REWARD_RUNTIME_TEST") is LengthReward  # before any instance exists
    assert LengthReward.parameters == ("final_response",)
    assert LengthReward.is_async is False
    assert LengthReward()(final_response="abcd") == RewardResult(4.0)


async def test_seed_api_reward_example_runs_as_written() -> None:
    # AgentFly's documented example, imports switched to rewardkit.
    class APIReward(BaseReward):
        name = "api_reward"

        def __init__(self, api_key: str):
            self.api_key = api_key
            self.client = FakeJudgeClient(api_key)

        async def call(self, final_response: str, answer: str) -> dict:
            score = await self.client.evaluate(final_response, answer)
            return {"reward": score, "api_score": score}

    api_reward = APIReward(api_key="sk-test")
    result = await calculate_reward(api_reward, final_response="paris is the capital", answer="paris", id="r1")
    assert result == RewardResult(1.0, {"api_score": 1.0})
    assert api_reward.client.calls == [("paris is the capital", "paris")]
    assert api_reward.client.api_key == "sk-test"
    assert APIReward.is_async
    assert APIReward.parameters == ("final_response", "answer")
    assert get_reward("api_reward") is APIReward


@pytest.mark.parametrize("calls_super", [True, False])
async def test_base_reward_works_with_or_without_super_init(calls_super: bool) -> None:
    class Stateful(BaseReward, auto_register=False):
        name = "stateful"

        def __init__(self, scale: float) -> None:
            if calls_super:
                super().__init__()
            self.scale = scale

        def call(self, final_response: str, answr: str = "") -> float:  # rewardkit: ignore[RK104]
            return self.scale * len(final_response)

    instance = Stateful(2.0)
    assert instance(final_response="ab").reward == 4.0
    assert (await calculate_reward(instance, final_response="abc")).reward == 6.0


def test_base_reward_errors_name_the_reward() -> None:
    class Needy(BaseReward, auto_register=False):
        name = "needy"

        def call(self, final_response: str, answer: str) -> str:
            return "not a number"  # rewardkit: ignore[RK202] (deliberately broken)

    with pytest.raises(MissingFieldError, match=r"reward 'needy' .*requires field 'answer'.*Did you mean 'answr'"):
        Needy()(final_response="x", answr="y")
    with pytest.raises(TypeError, match="reward 'needy' takes fields by keyword only"):
        Needy()("x")
    from rewardkit import RewardShapeError

    with pytest.raises(RewardShapeError, match="reward 'needy' returned 'not a number'"):
        Needy()(final_response="x", answer="y")


def test_base_reward_name_defaults_to_the_class_name_and_bases_without_call_are_skipped() -> None:
    class Intermediate(BaseReward):
        """A shared base with helpers, no call(): not a reward."""

    class Concrete(Intermediate, auto_register=False):
        def call(self, final_response: str) -> float:
            return 0.0

    assert Concrete.name == "Concrete"
    with pytest.raises(KeyError):
        get_reward("Intermediate")


async def test_calculate_reward_refuses_a_base_reward_class() -> None:
    class NeedsInstance(BaseReward, auto_register=False):
        name = "needs_instance"

        def call(self, final_response: str) -> float:
            return 0.0

    with pytest.raises(TypeError, match=r"got the class .*NeedsInstance .*pass an instance"):
        await calculate_reward(NeedsInstance, final_response="x")


async def test_missing_field_of_a_callable_object_names_where_its_call_is_defined() -> None:
    class Grader:
        def __call__(self, final_response: str, answer: str) -> float:
            return float(final_response == answer)

    line = inspect.getsourcelines(Grader.__call__)[1]
    with pytest.raises(MissingFieldError, match=rf"reward 'Grader' \({__file__}:{line}\) requires field 'answer'"):
        await calculate_reward(Grader(), final_response="x")


def test_a_reward_wrapping_a_partial_names_the_function_and_refuses_to_pickle_clearly() -> None:
    def scaled(final_response: str, answer: str, scale: float) -> float:
        return scale * (final_response == answer)

    doubled = reward(functools.partial(scaled, scale=2.0), name="doubled", auto_register=False)
    assert doubled(final_response="a", answer="a").reward == 2.0
    line = inspect.getsourcelines(scaled)[1]
    assert f"{__file__}:{line}" in repr(doubled)
    with pytest.raises(pickle.PicklingError, match=r"reward 'doubled' .* wraps a callable that is not a function"):
        pickle.dumps(doubled)
