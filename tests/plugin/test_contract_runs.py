"""A contract test in a real pytest run: the violation is found, minimized and reported."""

from __future__ import annotations

import pytest


def test_contract_failure_is_found_and_minimized(plug: pytest.Pytester) -> None:
    plug.makepyfile(
        test_plug_contract="""
        from hypothesis import strategies as st
        from rewardkit import reward
        from rewardkit.testing import check_reward_contract, reward_contract

        @reward(name="plug_overflowing", auto_register=False)
        def overflowing(final_response: str) -> float:
            # Breaks the [0, 1] bound for any response of three or more characters.
            return len(final_response) / 2

        def test_bounds():
            check_reward_contract(
                overflowing,
                fields={"final_response": st.text()},
                arbitrary_final_response=False,
                max_examples=50,
            )

        @reward_contract(overflowing, fields={"final_response": st.text(max_size=2)}, arbitrary_final_response=False, max_examples=30)
        def test_decorated_passes(fields, result):
            assert result.reward == len(fields["final_response"]) / 2

        @reward_contract(overflowing, fields={"final_response": st.text(max_size=2)}, arbitrary_final_response=False, max_examples=30)
        def test_decorated_property_fails(fields, result):
            assert result.reward == 0.0, "only the empty response may score"
        """
    )
    result = plug.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*RewardContractError: reward 'plug_overflowing' broke its contract (bounds): reward 1.5 is outside [[]0.0, 1.0[]]",
            "*minimal failing example found by hypothesis:",
            "*  fields = {'final_response': '000'}",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*broke its contract (property): only the empty response may score*",
            "*  fields = {'final_response': '0'}",
        ]
    )
    # The failure points at the test's line, not at rewardkit's source.
    result.stdout.no_fnmatch_line("*def check_reward_contract*")
    result.stdout.fnmatch_lines([">*check_reward_contract(", "test_plug_contract.py:*"])


def test_readme_pattern_catches_a_reward_out_of_bounds_only_when_correct(
    plug: pytest.Pytester,
) -> None:
    # issue 37.1: hostile text alone never carries the answer; responses with the gold do.
    plug.makepyfile(
        test_naive_contract="""
        from rewardkit import reward
        from rewardkit.math import grade
        from rewardkit.testing import latex_numbers, reward_contract

        @reward(name="plug_naive", auto_register=False)
        def naive(final_response: str, answer: str) -> float:
            return 2.0 if grade(final_response, answer).correct else 0.0

        @reward_contract(naive, fields={"answer": latex_numbers()})
        def test_naive_contract(fields, result):
            ...
        """
    )
    result = plug.runpytest("-p", "no:randomly", "--hypothesis-seed=0")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*RewardContractError: reward 'plug_naive' broke its contract (bounds): "
            "reward 2.0 is outside [[]0.0, 1.0[]]",
            "*minimal failing example found by hypothesis:",
            "*  fields = {'answer': *, 'final_response': *boxed*}",
        ]
    )
