"""``math_reward``: the built-in math reward (1.0 when the final boxed answer matches the gold)."""

from __future__ import annotations

from typing import Any

from rewardkit import reward
from rewardkit.math.grading import grade


@reward(name="math_reward")
def math_reward(final_response: str, answer: str) -> dict[str, Any]:
    """Grade the response's last ``\\boxed{}`` against ``answer`` (lenient policy, 1 s budget).

    Extras have the same keys and types on every call: ``correct`` (bool), ``tag`` (the
    ``FailureTag`` value, or ``""`` when correct) and ``reason`` (the rule that decided).
    """
    verdict = grade(final_response, answer)
    return {
        "reward": 1.0 if verdict.correct else 0.0,
        "correct": verdict.correct,
        "tag": verdict.tag.value if verdict.tag is not None else "",
        "reason": verdict.reason,
    }
