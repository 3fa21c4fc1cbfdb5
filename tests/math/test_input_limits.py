"""Bounded work on huge inputs: documented size limits, a clear verdict, and caches bounded by bytes."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from rewardkit.math import MAX_GOLD_LENGTH, MAX_RESPONSE_LENGTH, FailureTag, grade, grading
from rewardkit.math.caching import BoundedCache, bounded_cache, per_character, text_size
from rewardkit.math.reward import MathHarnessError, math_reward

FIVE_MB_RESPONSE = "1," * 2_500_000


# Issue 24, group 13: the final answer is found by scanning from the end; the size limits apply to
# what is parsed (the extracted answer, the gold), not to the text that is scanned.
@pytest.mark.parametrize("extract", ["boxed", "auto"])
@pytest.mark.parametrize("size", [1_000_009, 5_000_000])
def test_a_long_response_whose_last_box_is_right_is_right(extract: str, size: int) -> None:
    tail = " so the answer is \\boxed{3}"
    response = "x" * (size - len(tail)) + tail
    verdict = grade(response, "3", extract=extract)
    assert (verdict.correct, verdict.tag, verdict.reason) == (True, None, "exact"), dict(verdict.detail)
    wrong = grade(response.replace("{3}", "{4}"), "3", extract=extract)  # near-miss: the last box is wrong
    assert (wrong.correct, wrong.tag, wrong.reason) == (False, FailureTag.WRONG_ANSWER, "rational")


def test_a_long_response_is_read_from_its_end() -> None:
    early_box = "\\boxed{3} " + "x" * 2_000_000 + " wait, no: the last box is \\boxed{4}"
    assert grade(early_box, "4").correct
    assert not grade(early_box, "3").correct
    phrase = "y" * (MAX_RESPONSE_LENGTH + 10) + " The answer is 7."
    assert grade(phrase, "7", extract="auto").correct  # auto's fallbacks read the last MAX_RESPONSE_LENGTH characters
    assert grade(FIVE_MB_RESPONSE, "1").tag is FailureTag.NO_ANSWER  # no box: no answer, not a refusal


def test_a_response_at_the_limit_is_graded() -> None:
    tail = "so \\boxed{5}"
    response = "x" * (MAX_RESPONSE_LENGTH - len(tail)) + tail
    assert len(response) == MAX_RESPONSE_LENGTH
    verdict = grade(response, "5")
    assert (verdict.correct, verdict.reason) == (True, "exact")


def test_a_gold_over_the_limit_is_a_bad_gold_naming_the_limit() -> None:
    gold = "a b" * 2_000_000
    for response in ("\\boxed{1}", FIVE_MB_RESPONSE, ""):
        verdict = grade(response, gold)
        assert (verdict.tag, verdict.reason) == (FailureTag.HARNESS_ERROR, "bad_gold")
        assert verdict.detail["error"] == "gold of 6,000,000 characters is over the 100,000-character limit (MAX_GOLD_LENGTH)"
    assert MAX_GOLD_LENGTH == 100_000
    assert grading._prepare_gold.cache_info().bytes < 64 * 1024**2  # type: ignore[attr-defined]


def test_math_reward_on_huge_inputs() -> None:
    assert math_reward(final_response=FIVE_MB_RESPONSE, answer="1").extras["reason"] == "no_answer"
    assert math_reward(final_response="x" * 5_000_000 + "\\boxed{1}", answer="1").reward == 1.0
    with pytest.raises(MathHarnessError, match="MAX_GOLD_LENGTH"):
        math_reward(final_response="\\boxed{1}", answer="1" * (MAX_GOLD_LENGTH + 1))


def test_a_bounded_cache_keeps_under_its_bytes() -> None:
    cache: BoundedCache[str] = BoundedCache(100_000, text_size)
    for index in range(2_000):
        cache.put(f"key {index}", "v" * 500)
    info = cache.info()
    assert info.bytes <= 100_000
    assert 0 < info.entries < 200
    assert cache.get("key 1999") == "v" * 500  # the most recent stay
    assert cache.get("key 0") is None  # the oldest went
    cache.put("huge", "v" * 50_000)  # more than an eighth of the bound: not stored
    assert cache.get("huge") is None
    cache.clear()
    assert cache.info().entries == cache.info().bytes == 0


def test_bounded_cache_does_not_keep_long_keys_and_counts_like_lru_cache() -> None:
    calls = []

    @bounded_cache(1_000_000, max_key_length=10, size=per_character(100, 1000))
    def shout(text: str) -> str:
        calls.append(text)
        return text.upper()

    assert [shout("short"), shout("short"), shout("x" * 11), shout("x" * 11)] == ["SHORT", "SHORT", "X" * 11, "X" * 11]
    assert calls == ["short", "x" * 11, "x" * 11]
    info = shout.cache_info()  # type: ignore[attr-defined]
    assert (info.hits, info.misses, info.entries) == (1, 1, 1)
    assert info.bytes == per_character(100, 1000)("short", "SHORT")
    shout.cache_clear()  # type: ignore[attr-defined]
    assert shout.cache_info().entries == 0  # type: ignore[attr-defined]


GROW = """
import os, sys
from rewardkit.math import grade

def rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

def answer(index: int) -> str:  # 19 KB, unique, as in issue 18 (20,000 of these grew RSS by 730 MB)
    return f"\\\\boxed{{{index}+" + "+".join(f"x_{{{index % 97 + k}}}" for k in range(2_200)) + "}"

for index in range(200):
    grade(answer(index), "5", sandbox=False)
before = rss()
for index in range(200, 800):
    grade(answer(index), "5", sandbox=False)
print(len(answer(0)), rss() - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_memory_stays_flat_over_unique_long_answers() -> None:
    completed = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(GROW)], capture_output=True, text=True, timeout=900, check=False
    )
    assert completed.returncode == 0, completed.stderr
    size, growth = (int(value) for value in completed.stdout.split())
    assert size > 18_000
    # Unbounded caches kept ~19 KB per answer (measured: 19 MB per 1,000): 600 more would add ~11 MB.
    assert growth < 4 * 1024**2, growth
