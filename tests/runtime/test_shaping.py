"""The built-in shaping rewards against a faithful reading of their published formulas.

``OpenR1`` below transcribes open-r1's ``src/open_r1/rewards.py`` (format_reward,
tag_count_reward, reasoning_steps_reward, get_repetition_penalty_reward,
get_cosine_scaled_reward, len_reward) as functions of one text, keeping its patterns, flags
and arithmetic; the built-ins must give the same values on the edge cases listed here.
"""

from __future__ import annotations

import asyncio
import math
import pickle
import re

import pytest

from rewardkit import calculate_rewards, get_reward
from rewardkit.shaping import (
    CosineScaledReward,
    RepetitionPenalty,
    SoftOverlongPunishment,
    cosine_scaled_score,
    len_reward,
    len_reward_scores,
    reasoning_steps_score,
    repetition_penalty_score,
    soft_overlong_punishment_score,
    tag_count_score,
    think_answer_format_score,
)


class OpenR1:
    """open-r1's formulas, as its code computes them for one completion's content."""

    @staticmethod
    def format_reward(content: str) -> float:
        pattern = r"^<think>\n.*?\n</think>\n<answer>\n.*?\n</answer>$"
        return 1.0 if re.match(pattern, content, re.DOTALL | re.MULTILINE) else 0.0

    @staticmethod
    def tag_count_reward(text: str) -> float:
        count = 0.0
        if text.count("<think>\n") == 1:
            count += 0.25
        if text.count("\n</think>\n") == 1:
            count += 0.25
        if text.count("\n<answer>\n") == 1:
            count += 0.25
        if text.count("\n</answer>") == 1:
            count += 0.25
        return count

    @staticmethod
    def reasoning_steps_reward(content: str) -> float:
        pattern = r"(Step \d+:|^\d+\.|\n-|\n\*|First,|Second,|Next,|Finally,)"
        return min(1.0, len(re.findall(pattern, content)) / 3)

    @staticmethod
    def repetition_penalty_reward(completion: str, ngram_size: int, max_penalty: float) -> float:
        if completion == "":
            return 0.0
        words = completion.lower().split()
        ngram_array = zip(*[words[i:] for i in range(ngram_size)])
        if len(words) < ngram_size:
            return 0.0
        ngrams = set()
        total = 0
        for ng in ngram_array:
            ngrams.add(ng)
            total += 1
        scaling = 1 - len(ngrams) / total
        return scaling * max_penalty

    @staticmethod
    def cosine_scaled_reward(gen_len: int, is_correct: bool, max_len: int = 1000) -> float:
        min_value_wrong, max_value_wrong, min_value_correct, max_value_correct = -1.0, -0.5, 0.5, 1.0
        progress = gen_len / max_len
        cosine = math.cos(progress * math.pi)
        if is_correct:
            min_value, max_value = min_value_correct, max_value_correct
        else:
            min_value, max_value = max_value_wrong, min_value_wrong
        return min_value + 0.5 * (max_value - min_value) * (1.0 + cosine)

    @staticmethod
    def len_reward(lengths: list[int], correctness: list[bool]) -> list[float]:
        min_len, max_len = min(lengths), max(lengths)
        if max_len == min_len:
            return [0.0] * len(lengths)
        rewards = []
        for length, is_correct in zip(lengths, correctness):
            lambda_val = 0.5 - (length - min_len) / (max_len - min_len)
            rewards.append(float(lambda_val if is_correct else min(0, lambda_val)))
        return rewards


FORMAT_TEXTS = [
    "<think>\nreason\n</think>\n<answer>\n42\n</answer>",  # the format
    "<think>\nreason\n</think>\n<answer>\n42\n</answer>\n",  # trailing newline
    "<think>\nreason\n</think>\n<answer>\n42\n</answer>\nand more text",  # MULTILINE $: still 1.0
    "<think>\n\n</think>\n<answer>\n\n</answer>",  # empty sections: the lazy .*? matches nothing
    "<think>reason</think><answer>42</answer>",  # no newlines
    " <think>\nreason\n</think>\n<answer>\n42\n</answer>",  # leading space
    "<think>\nreason\n</think>\n<answer>\n42\n</answer>x",  # text glued to the closing tag
    "<think>\na\n</think>\n<think>\nb\n</think>\n<answer>\n1\n</answer>",  # two thinks
    "<answer>\n42\n</answer>",
    "",
    "<think>\nmulti\nline\nreasoning\n</think>\n<answer>\nx\ny\n</answer>",
    "<THINK>\nr\n</THINK>\n<answer>\n1\n</answer>",  # case matters
]


@pytest.mark.parametrize("text", FORMAT_TEXTS)
def test_think_answer_format_is_open_r1s(text: str) -> None:
    assert think_answer_format_score(text) == OpenR1.format_reward(text)


def test_think_answer_format_values() -> None:
    assert [think_answer_format_score(text) for text in FORMAT_TEXTS[:5]] == [1.0, 1.0, 1.0, 1.0, 0.0]


@pytest.mark.parametrize("text", FORMAT_TEXTS)
def test_tag_count_is_open_r1s(text: str) -> None:
    assert tag_count_score(text) == OpenR1.tag_count_reward(text)


def test_tag_count_edge_cases() -> None:
    assert tag_count_score(FORMAT_TEXTS[0]) == 1.0
    assert tag_count_score("") == 0.0
    assert tag_count_score("<think>\nonly the opening") == 0.25
    # a tag present twice earns nothing for it (exactly once is the rule)
    assert tag_count_score("<think>\n<think>\nx\n</think>\n<answer>\n1\n</answer>") == 0.75


REASONING_TEXTS = [
    "Step 1: a\nStep 2: b\nStep 3: c",
    "Step 1: only one",
    "1. first\n2. second\n3. third",  # ^ without MULTILINE: only the leading "1." counts
    "First, a. Second, b. Next, c. Finally, d.",
    "\n- a\n- b\n* c\n* d",
    "no steps at all",
    "",
    "Step 10: big numbers\nStep 11: more",
    "first, lower case does not count",
]


@pytest.mark.parametrize("text", REASONING_TEXTS)
def test_reasoning_steps_is_open_r1s(text: str) -> None:
    assert reasoning_steps_score(text) == OpenR1.reasoning_steps_reward(text)


def test_reasoning_steps_values() -> None:
    assert reasoning_steps_score(REASONING_TEXTS[0]) == 1.0  # three steps: the cap
    assert reasoning_steps_score(REASONING_TEXTS[1]) == pytest.approx(1 / 3)
    assert reasoning_steps_score(REASONING_TEXTS[2]) == pytest.approx(1 / 3)
    assert reasoning_steps_score(REASONING_TEXTS[3]) == 1.0  # four transitions, capped


REPETITION_CASES = [
    ("", 3, -1.0),
    ("   ", 3, -1.0),  # only whitespace: no words
    ("one two", 3, -1.0),  # fewer words than the n-gram
    ("one two three", 3, -1.0),  # exactly one n-gram: distinct
    ("a b c a b c a b c", 3, -1.0),
    ("the the the the the the", 2, -0.5),
    ("The cat THE CAT the cat", 2, -1.0),  # lower-cased
    ("all words here are different from each other", 3, -1.0),
    ("x", 1, -2.0),
    ("x x x x", 1, -1.0),
    ("a\tb\nc  a b c", 3, -1.0),  # any whitespace splits
]


@pytest.mark.parametrize(("text", "ngram_size", "max_penalty"), REPETITION_CASES)
def test_repetition_penalty_is_open_r1s(text: str, ngram_size: int, max_penalty: float) -> None:
    expected = OpenR1.repetition_penalty_reward(text, ngram_size, max_penalty)
    assert repetition_penalty_score(text, ngram_size, max_penalty) == expected
    assert RepetitionPenalty(ngram_size, max_penalty)(final_response=text).reward == expected


def test_repetition_penalty_values_and_parameters() -> None:
    assert repetition_penalty_score("a b c a b c a b c", 3, -1.0) == pytest.approx(-(1 - 3 / 7))
    assert repetition_penalty_score("x x x x", 1, -1.0) == pytest.approx(-0.75)
    with pytest.raises(ValueError, match="should not be positive"):
        RepetitionPenalty(3, 0.5)
    with pytest.raises(ValueError, match="ngram_size"):
        RepetitionPenalty(0)
    restored = pickle.loads(pickle.dumps(RepetitionPenalty(4, -0.25)))  # by value, with its parameters
    assert (restored.ngram_size, restored.max_penalty) == (4, -0.25)


def dapo_eq_13(length: int, l_max: int, l_cache: int) -> float:
    """Eq. (13) of the DAPO paper, read literally."""
    if length <= l_max - l_cache:
        return 0.0
    if l_max - l_cache < length <= l_max:
        return ((l_max - l_cache) - length) / l_cache
    return -1.0


@pytest.mark.parametrize("length", [0, 1, 11, 12, 13, 15, 16, 17, 1000])
def test_soft_overlong_punishment_is_dapos_eq_13(length: int) -> None:
    assert soft_overlong_punishment_score(length, 16, 4) == dapo_eq_13(length, 16, 4)
    assert SoftOverlongPunishment(16, 4)(completion_length=length).reward == dapo_eq_13(length, 16, 4)


def test_soft_overlong_punishment_edges() -> None:
    assert soft_overlong_punishment_score(12, 16, 4) == 0.0  # the last free token
    assert soft_overlong_punishment_score(13, 16, 4) == -0.25
    assert soft_overlong_punishment_score(16, 16, 4) == -1.0  # at the limit: the full penalty
    assert soft_overlong_punishment_score(17, 16, 4) == -1.0
    assert soft_overlong_punishment_score(16, 16, 0) == 0.0  # no cache: a hard cliff past the limit
    assert soft_overlong_punishment_score(17, 16, 0) == -1.0
    default = SoftOverlongPunishment()
    assert (default.max_completion_length, default.soft_punish_cache) == (20480, 4096)
    with pytest.raises(ValueError, match="cannot exceed"):
        SoftOverlongPunishment(4, 8)


@pytest.mark.parametrize("length", [0, 1, 250, 499, 500, 501, 999, 1000])
@pytest.mark.parametrize("correct", [True, False])
def test_cosine_scaled_is_open_r1s_up_to_max_len(length: int, correct: bool) -> None:
    assert cosine_scaled_score(length, correct) == pytest.approx(OpenR1.cosine_scaled_reward(length, correct), abs=1e-12)


def test_cosine_scaled_ends_and_the_cap_past_max_len() -> None:
    assert cosine_scaled_score(0, True) == 1.0  # short and right: the most
    assert cosine_scaled_score(1000, True) == pytest.approx(0.5)
    assert cosine_scaled_score(0, False) == -1.0  # short and wrong: penalised most
    assert cosine_scaled_score(1000, False) == pytest.approx(-0.5)
    # open-r1's uncapped cosine turns back up past max_len (2x max_len scores the maximum again);
    # the built-in stays at the max_len value
    assert OpenR1.cosine_scaled_reward(2000, True) == pytest.approx(1.0)
    assert cosine_scaled_score(2000, True) == pytest.approx(0.5)
    assert cosine_scaled_score(2000, False) == pytest.approx(-0.5)


@pytest.mark.parametrize(
    ("lengths", "correct"),
    [
        ([10, 20, 30], [True, True, True]),
        ([10, 20, 30], [False, False, False]),
        ([10, 20, 30, 40], [True, False, True, False]),
        ([5, 5, 5], [True, False, True]),  # one length: all 0.0
        ([7], [True]),
        ([0, 100], [False, True]),
    ],
)
def test_len_reward_is_open_r1s(lengths: list[int], correct: list[bool]) -> None:
    assert len_reward_scores(lengths, correct) == OpenR1.len_reward(lengths, correct)


def test_len_reward_over_groups_with_the_math_grader() -> None:
    samples = [
        {"final_response": r"\boxed{4}", "answer": "4", "prompt": "p1"},
        {"final_response": r"so the answer is \boxed{4}", "answer": "4", "prompt": "p1"},
        {"final_response": r"I think it is \boxed{5} after a long detour", "answer": "4", "prompt": "p1"},
        {"final_response": r"\boxed{1}", "answer": "2", "prompt": "p2"},
        {"final_response": r"\boxed{2}", "answer": "2", "prompt": "p2"},
    ]
    results = asyncio.run(calculate_rewards(len_reward, samples, group_by="prompt"))
    lengths = [len(sample["final_response"]) for sample in samples]
    expected = OpenR1.len_reward(lengths[:3], [True, True, False]) + OpenR1.len_reward(lengths[3:], [False, True])
    assert [result.reward for result in results] == pytest.approx(expected)
    assert get_reward("len_reward") is len_reward


def test_cosine_scaled_reward_grades_and_skips_a_bad_gold() -> None:
    cosine = CosineScaledReward(max_len=100)
    right = cosine(final_response=r"\boxed{4}", answer="4")
    assert right.reward == pytest.approx(OpenR1.cosine_scaled_reward(9, True, max_len=100))
    assert right.extras == {"correct": True, "length": 9}
    wrong = cosine(final_response=r"\boxed{5}", answer="4")
    assert wrong.reward == pytest.approx(OpenR1.cosine_scaled_reward(9, False, max_len=100))
    skipped = cosine(final_response=r"\boxed{5}", answer="")  # a gold the grader cannot parse
    assert not skipped.applicable
    assert skipped.reward is None


def test_the_shaping_rewards_are_registered_built_ins() -> None:
    assert get_reward("think_answer_format_reward")(final_response=FORMAT_TEXTS[0]).reward == 1.0
    assert get_reward("tag_count_reward")(final_response="").reward == 0.0
    assert get_reward("reasoning_steps_reward")(final_response=REASONING_TEXTS[0]).reward == 1.0
    assert get_reward("repetition_penalty_reward") is RepetitionPenalty
    assert get_reward("soft_overlong_punishment_reward") is SoftOverlongPunishment
    assert get_reward("cosine_scaled_reward") is CosineScaledReward
