"""``check_reward_contract`` finds each kind of violation and reports the minimal example."""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.database import InMemoryExampleDatabase

from rewardkit import reward
from rewardkit.math import grade
from rewardkit.testing import (
    RewardContractError,
    check_reward_contract,
    latex_numbers,
    reward_contract,
)

FEW = {"max_examples": 25}


@reward(auto_register=False)
def in_bounds(final_response: str, answer: str) -> dict:
    return {
        "reward": 1.0 if final_response.strip() == answer else 0.0,
        "length": len(final_response),
    }


def test_a_good_reward_passes_with_hostile_text_mixed_in() -> None:
    check_reward_contract(in_bounds, fields={"answer": latex_numbers()}, **FEW)


def test_the_builtin_math_reward_keeps_the_contract_on_right_and_wrong_responses() -> None:
    rewards: list[float] = []
    check_reward_contract(
        "math_reward",
        fields={"answer": latex_numbers()},
        extra_check=lambda result: rewards.append(result.reward),
        **FEW,
    )
    assert 1.0 in rewards, "no example carried the gold: the success path went unchecked"
    assert 0.0 in rewards


@reward(auto_register=False)
def naive(final_response: str, answer: str) -> float:
    """Pays 2.0 for a correct answer: out of bounds only on the success path."""
    return 2.0 if grade(final_response, answer).correct else 0.0


def test_a_reward_out_of_bounds_only_when_correct_is_caught() -> None:
    # issue 37.1: the README's pattern; hostile text alone never carries the answer.
    with pytest.raises(RewardContractError) as caught:
        check_reward_contract(naive, fields={"answer": latex_numbers()}, max_examples=25)
    assert caught.value.rule == "bounds"
    assert "reward 2.0 is outside [0.0, 1.0]" in str(caught.value)
    fields = caught.value.fields
    assert fields is not None
    assert grade(fields["final_response"], fields["answer"]).correct


def test_the_decorator_form_catches_it_too() -> None:
    @reward_contract(naive, fields={"answer": latex_numbers()}, max_examples=25)
    def test_naive_contract(fields, result) -> None: ...

    with pytest.raises(RewardContractError, match=r"\(bounds\): reward 2\.0 is outside"):
        test_naive_contract()


def test_gold_responses_follow_the_answer_field() -> None:
    @reward(auto_register=False)
    def pays_on_gold(final_response: str, solution: str) -> float:
        return 2.0 if grade(final_response, solution).correct else 0.0

    fields = {"solution": latex_numbers()}
    error = _violation("bounds", pays_on_gold, fields=fields, answer_field="solution")
    assert error.fields is not None
    assert grade(error.fields["final_response"], error.fields["solution"]).correct


def test_gold_is_not_mixed_into_a_response_the_test_fixes() -> None:
    check_reward_contract(
        naive,
        fields={"answer": "1", "final_response": st.just("no box")},
        arbitrary_final_response=False,
        **FEW,
    )


def test_fields_may_be_a_strategy_of_mappings() -> None:
    fields = st.fixed_dictionaries({"final_response": st.text(max_size=5), "answer": st.just("1")})
    check_reward_contract(in_bounds, fields=fields, **FEW)


def _violation(rule: str, target: object, **options: object) -> RewardContractError:
    with pytest.raises(RewardContractError) as caught:
        check_reward_contract(target, **{"max_examples": 60, **options})
    assert caught.value.rule == rule, str(caught.value)
    return caught.value


def test_out_of_bounds_reports_the_minimal_example() -> None:
    @reward(auto_register=False)
    def doubled(final_response: str) -> float:
        return 2.0 if "7" in final_response else 0.0

    error = _violation(
        "bounds",
        doubled,
        fields={"final_response": st.text(alphabet="0123456789")},
        arbitrary_final_response=False,
    )
    assert "reward 2.0 is outside [0.0, 1.0]" in str(error)
    assert error.fields == {"final_response": "7"}
    assert "fields = {'final_response': '7'}" in str(error)


def test_custom_bounds_and_none() -> None:
    @reward(auto_register=False)
    def negative(final_response: str) -> float:
        return -1.0

    check_reward_contract(negative, bounds=(-1.0, 0.0), **FEW)
    check_reward_contract(negative, bounds=None, **FEW)
    _violation("bounds", negative)


def test_a_nan_reward_is_reported() -> None:
    @reward(auto_register=False)
    def nan_on_empty(final_response: str) -> float:
        return float("nan") if final_response == "" else 0.5

    error = _violation("finite", nan_on_empty)
    assert error.fields == {"final_response": ""}


def test_a_non_reward_return_value_is_reported() -> None:
    @reward(auto_register=False)
    def forgot_return(final_response: str) -> None:
        return None  # rewardkit: ignore[RK202] (deliberately broken)

    assert "not a reward" in str(_violation("shape", forgot_return))


def test_an_exception_on_some_text_is_reported_with_that_text() -> None:
    @reward(auto_register=False)
    def fragile(final_response: str) -> float:
        return 1.0 / final_response.count("{")

    error = _violation(
        "no-exception",
        fragile,
        fields={"final_response": st.text()},
        arbitrary_final_response=False,
    )
    assert "raised ZeroDivisionError" in str(error)
    assert error.fields == {"final_response": ""}


def test_a_failure_on_hostile_text_shrinks_to_the_smallest_text() -> None:
    @reward(auto_register=False)
    def brace_hater(final_response: str) -> float:
        if "{" in final_response:
            raise ValueError("unbalanced")
        return 0.0

    error = _violation("no-exception", brace_hater, settings=settings(database=None))
    assert error.fields == {"final_response": "{"}


def test_saved_failures_replay_only_for_their_own_reward() -> None:
    database = settings(database=InMemoryExampleDatabase())

    @reward(auto_register=False)
    def brace_hater(final_response: str) -> float:
        if "{" in final_response:
            raise ValueError("unbalanced")
        return 0.0

    seen: list[str] = []

    @reward(auto_register=False)
    def recorder(final_response: str) -> float:
        seen.append(final_response)
        return 0.0

    _violation("no-exception", brace_hater, settings=database)  # saves '{' for brace_hater
    check_reward_contract(recorder, settings=database, max_examples=5)
    assert seen[0] != "{", "recorder replayed brace_hater's saved failure"


def test_hostile_text_is_mixed_into_final_response_by_default() -> None:
    @reward(auto_register=False)
    def short_only(final_response: str) -> float:
        if len(final_response) > 10_000:
            raise MemoryError("too long")
        return 0.0

    _violation("no-exception", short_only, fields={"final_response": "fine"})


def test_nondeterminism_is_reported() -> None:
    counter = itertools.count()

    @reward(auto_register=False)
    def drifting(final_response: str) -> float:
        return (next(counter) % 2) / 2

    error = _violation(
        "deterministic",
        drifting,
        fields={"final_response": st.just("x")},
        arbitrary_final_response=False,
    )
    assert "two calls with equal fields gave" in str(error)


def test_changing_extras_keys_are_reported() -> None:
    @reward(auto_register=False)
    def sometimes_extra(final_response: str) -> dict:
        extras = {"why": "long"} if len(final_response) > 3 else {}
        return {"reward": 0.0, **extras}

    error = _violation(
        "extras-keys",
        sometimes_extra,
        fields={"final_response": st.text()},
        arbitrary_final_response=False,
    )
    assert "extras keys" in str(error)


def test_max_seconds_is_opt_in() -> None:
    @reward(auto_register=False)
    def slow(final_response: str) -> float:
        time.sleep(0.2)
        return 0.0

    options = {
        "fields": {"final_response": "x"},
        "arbitrary_final_response": False,
        "max_examples": 2,
    }
    check_reward_contract(slow, **options)
    error = _violation("time", slow, max_seconds=0.01, **options)
    assert "over max_seconds=0.01" in str(error)


def test_async_rewards_are_checked() -> None:
    @reward(auto_register=False)
    async def async_doubled(final_response: str) -> float:
        await asyncio.sleep(0)
        return 2.0 if final_response else 0.0

    _violation("bounds", async_doubled)


async def test_the_contract_runs_inside_an_async_test_too() -> None:
    check_reward_contract(in_bounds, fields={"answer": "1"}, **FEW)


@reward_contract(in_bounds, fields={"answer": latex_numbers()}, max_examples=20)
def test_the_decorator_form_runs_the_contract_and_the_body(fields, result) -> None:
    assert result.extras["length"] == len(fields["final_response"])


def test_the_decorator_form_reports_the_body_assertion() -> None:
    @reward_contract(in_bounds, fields={"answer": "1"}, max_examples=20)
    def body(result) -> None:
        assert result.reward == 1.0, "expected full marks"

    with pytest.raises(RewardContractError, match=r"\(property\): expected full marks"):
        body()


def test_fields_that_do_not_fit_the_reward_are_a_setup_error() -> None:
    with pytest.raises(TypeError, match=r"the fields do not fit reward 'in_bounds'.*answer"):
        check_reward_contract(in_bounds, fields={"final_response": "x"}, max_examples=5)


def test_a_failure_that_does_not_replay_is_reported_as_flaky() -> None:
    calls = itertools.count()

    @reward(auto_register=False)
    def fails_once(final_response: str) -> float:
        if next(calls) == 0:
            raise RuntimeError("first call only")
        return 0.0

    error = _violation(
        "flaky", fails_once, fields={"final_response": st.just("x")}, arbitrary_final_response=False
    )
    assert "did not reproduce" in str(error)
