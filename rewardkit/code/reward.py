"""``code_reward``: the built-in code reward (the fraction of a data set's tests the response's
program passes, run only inside a sandbox), and ``CodeReward`` to configure it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from rewardkit.code.extraction import ExtractMode
from rewardkit.code.grading import DEFAULT_MEMORY, DEFAULT_TIMEOUT, _check_options, grade_code
from rewardkit.code.verdict import CodeTag, CodeVerdict
from rewardkit.runtime.define.errors import RewardError
from rewardkit.runtime.define.rewards import BaseReward, reward

EXTRA_KEYS: dict[str, type] = {
    "correct": bool,
    "fraction": float,
    "tag": str,
    "reason": str,
    "passed": int,
    "total": int,
}
"""The extras every ``code_reward`` sample carries, with their types."""


class CodeHarnessError(RewardError):
    """Our side could not grade this sample (``SANDBOX_ERROR``: the sandbox failed, never the
    program): raised instead of a 0.0 that would read as a wrong program, so the runtime records
    it as the ``error`` extra and adapters exclude it. ``verdict`` is the grader's ``CodeVerdict``."""

    def __init__(self, verdict: CodeVerdict) -> None:
        super().__init__(
            f"code_reward could not grade this sample (SANDBOX_ERROR): {verdict.reason}"
        )
        self.verdict = verdict


def score(verdict: CodeVerdict, all_or_nothing: bool) -> dict[str, Any]:
    """The reward and extras of a verdict; ``SANDBOX_ERROR`` raises ``CodeHarnessError``."""
    if verdict.tag is CodeTag.SANDBOX_ERROR:
        raise CodeHarnessError(verdict)
    passed = sum(result.passed for result in verdict.tests)
    value = (1.0 if verdict.correct else 0.0) if all_or_nothing else float(verdict.fraction)
    return {
        "reward": value,
        "correct": verdict.correct,
        "fraction": float(verdict.fraction),
        "tag": verdict.tag.value if verdict.tag is not None else "",
        "reason": verdict.reason,
        "passed": passed,
        "total": len(verdict.tests),
    }


@dataclass(frozen=True)
class CodeReward(BaseReward, auto_register=False):
    """``code_reward`` configured: ``all_or_nothing`` (1.0 only when every test passes), the
    ``sandbox`` backend's name, ``test_timeout`` (each test's wall seconds; ``timeout`` is the
    runtime's per-call limit), ``memory`` (bytes),
    ``extract`` and ``float_tolerance`` as in ``grade_code``. Picklable (process mode)."""

    name: ClassVar[str] = "code_reward"
    extra_keys: ClassVar[dict[str, type]] = EXTRA_KEYS

    all_or_nothing: bool = False
    sandbox: str = "auto"
    test_timeout: float = DEFAULT_TIMEOUT
    memory: int = DEFAULT_MEMORY
    extract: ExtractMode = "last"
    float_tolerance: float | None = None

    def __post_init__(self) -> None:
        _check_options(self.test_timeout, self.memory, self.extract, self.float_tolerance)
        if not isinstance(self.sandbox, str):
            raise TypeError(
                f"CodeReward(sandbox={self.sandbox!r}) takes a backend's name "
                "('auto', 'bwrap', 'wasm', 'none'), so that it pickles to worker processes"
            )

    def call(self, final_response: str, ground_truth: Any) -> dict[str, Any]:
        """Grade ``final_response`` against the tests in ``ground_truth`` (see ``code_reward``)."""
        verdict = grade_code(
            final_response,
            ground_truth,
            timeout=self.test_timeout,
            memory=self.memory,
            sandbox=self.sandbox,
            extract=self.extract,
            float_tolerance=self.float_tolerance,
        )
        return score(verdict, self.all_or_nothing)


@reward(name="code_reward", extra_keys=EXTRA_KEYS)
def code_reward(final_response: str, ground_truth: Any) -> dict[str, Any]:
    """The fraction of the tests in ``ground_truth`` (any form ``grade_code`` reads: APPS,
    HumanEval, MBPP, JSON strings) that the response's last code block passes, sandboxed.

    Extras on every call: ``correct``, ``fraction``, ``tag`` (``""`` when correct), ``reason``,
    ``passed`` and ``total``. Malformed tests raise ``CodeTestsError``; a ``SANDBOX_ERROR``
    raises ``CodeHarnessError`` (recorded as an error, never a 0.0).
    """
    return score(grade_code(final_response, ground_truth), all_or_nothing=False)
