"""Format rewards from open-r1's ``src/open_r1/rewards.py`` (``format_reward``,
``tag_count_reward``, ``reasoning_steps_reward``), with the same patterns and flags so that a
ported run scores exactly as before. They read ``final_response`` (open-r1 reads the content of
the completion's first message, the same text for a single-turn completion).
"""

from __future__ import annotations

import re
from typing import Final

from rewardkit.runtime.define.rewards import reward

THINK_ANSWER_PATTERN: Final = re.compile(r"^<think>\n.*?\n</think>\n<answer>\n.*?\n</answer>$", re.DOTALL | re.MULTILINE)
"""open-r1's ``format_reward`` pattern, matched with ``re.match`` (``re.DOTALL | re.MULTILINE``)."""

REASONING_STEP_PATTERN: Final = re.compile(r"(Step \d+:|^\d+\.|\n-|\n\*|First,|Second,|Next,|Finally,)")
"""open-r1's ``reasoning_steps_reward`` pattern, counted with ``re.findall`` and no flags: ``^\\d+\\.``
matches a numbered step only at the very start of the text (other numbered lines are not counted)."""


def think_answer_format_score(text: str) -> float:
    """1.0 when ``text`` is ``<think>\\n...\\n</think>\\n<answer>\\n...\\n</answer>``, else 0.0.

    open-r1's ``format_reward``. As there, ``re.MULTILINE`` lets ``$`` match before any newline:
    text after a line that ends with ``</answer>`` still passes.
    """
    return 1.0 if THINK_ANSWER_PATTERN.match(text) else 0.0


def tag_count_score(text: str) -> float:
    """0.25 for each of ``<think>\\n``, ``\\n</think>\\n``, ``\\n<answer>\\n`` and ``\\n</answer>``
    that occurs exactly once in ``text`` (open-r1's ``tag_count_reward``, adapted there from
    willccbb's GRPO demo): partial credit on the way to ``think_answer_format_score``."""
    count = 0.0
    for tag in ("<think>\n", "\n</think>\n", "\n<answer>\n", "\n</answer>"):
        if text.count(tag) == 1:
            count += 0.25
    return count


def reasoning_steps_score(text: str) -> float:
    """``min(1, steps / 3)``, steps being the matches of ``REASONING_STEP_PATTERN`` ("Step 1:",
    a leading "1.", bullets after a newline, "First,", "Second,", "Next,", "Finally,"): open-r1's
    ``reasoning_steps_reward``, whose "magic number 3" encourages three steps or more."""
    return min(1.0, len(REASONING_STEP_PATTERN.findall(text)) / 3)


@reward(name="think_answer_format_reward")
def think_answer_format_reward(final_response: str) -> float:
    """1.0 for ``<think>\\n...\\n</think>\\n<answer>\\n...\\n</answer>`` (open-r1's ``format_reward``)."""
    return think_answer_format_score(final_response)


@reward(name="tag_count_reward")
def tag_count_reward(final_response: str) -> float:
    """0.25 per think/answer tag present exactly once (open-r1's ``tag_count_reward``)."""
    return tag_count_score(final_response)


@reward(name="reasoning_steps_reward")
def reasoning_steps_reward(final_response: str) -> float:
    """``min(1, steps / 3)`` (open-r1's ``reasoning_steps_reward``)."""
    return reasoning_steps_score(final_response)
