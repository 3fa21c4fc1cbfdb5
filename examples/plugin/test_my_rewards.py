"""Property tests of concise_math: its contract, a search for reward hacks, realistic responses."""

from hypothesis import given, settings
from hypothesis import strategies as st
from my_rewards import concise_math

from rewardkit.testing import boxed_responses, find_reward_hacks, latex_numbers, reward_contract


# Finite, within [0, 1], deterministic, same extras keys, and no exception whatever the text
# in final_response (responses carrying the gold answer and hostile text are mixed in); the
# body adds a property of our own.
@reward_contract(
    concise_math,
    fields={"answer": latex_numbers(), "max_length": st.integers(1, 5000)},
    max_examples=50,
)
def test_concise_math_contract(fields, result):
    if result.extras["too_long"]:
        assert result.reward <= 0.5


def test_concise_math_pays_only_for_the_answer():
    assert find_reward_hacks(concise_math, {"answer": "42"}, max_examples=50) == []


@settings(max_examples=20)
@given(boxed_responses("42"))
def test_chain_of_thought_ending_in_the_answer_scores(response):
    assert concise_math(final_response=response, answer="42").reward == 1.0
