"""``math_reward``: the built-in math reward (1.0 when the final boxed answer matches the gold)."""

from __future__ import annotations

from typing import Any

from rewardkit.math.grading import grade
from rewardkit.math.verdict import MathVerdict
from rewardkit.runtime.define.errors import RewardError
from rewardkit.runtime.define.failures import FailureTag
from rewardkit.runtime.define.rewards import reward


class MathHarnessError(RewardError):
    """The grader could not grade this sample: a bad gold, a grader crash, or a machine too busy
    to give the symbolic budget (``reason="overloaded"``). Raised instead of a 0.0 that would read
    as a wrong answer: the runtime records it as the ``error`` extra and adapters count it.
    ``verdict`` is the grader's ``MathVerdict`` (``tag`` is ``HARNESS_ERROR``)."""

    def __init__(self, verdict: MathVerdict) -> None:
        error = verdict.detail.get("error", "")
        super().__init__(f"math_reward could not grade this sample ({verdict.reason}): {error}")
        self.verdict = verdict


@reward(name="math_reward", extra_keys={"correct": bool, "tag": str, "reason": str})
def math_reward(final_response: str, answer: str) -> dict[str, Any]:
    """Grade the response's last ``\\boxed{}`` against ``answer`` (lenient policy, 1 CPU-second budget).

    Extras have the same keys and types on every call: ``correct`` (bool), ``tag`` (the
    ``FailureTag`` value, or ``""`` when correct) and ``reason`` (the rule that decided).
    A ``HARNESS_ERROR`` verdict raises ``MathHarnessError`` (recorded as an error, never a 0.0).
    """
    verdict = grade(final_response, answer)
    if verdict.tag is FailureTag.HARNESS_ERROR:
        raise MathHarnessError(verdict)
    return {
        "reward": 1.0 if verdict.correct else 0.0,
        "correct": verdict.correct,
        "tag": verdict.tag.value if verdict.tag is not None else "",
        "reason": verdict.reason,
    }
