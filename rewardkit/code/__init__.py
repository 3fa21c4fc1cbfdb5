"""rewardkit's code grader: a response's program run against a data set's tests, only inside a sandbox.

Pipeline: extraction -> test formats -> a syntax check on the host -> sandboxed runs
(``rewardkit.code.sandbox``) -> comparison on the host (see docs/code.md).
"""

from typing import Any

from rewardkit.code.extraction import extract_code
from rewardkit.code.formats import CodeTestsError, parse_tests
from rewardkit.code.grading import CodeGraderError, grade_code, grade_code_async
from rewardkit.code.verdict import CodeTag, CodeVerdict, TestResult

_LAZY = {"code_reward", "CodeReward", "CodeHarnessError"}
"""Names from ``rewardkit.code.reward``, imported on first use (they load the runtime)."""


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from rewardkit.code import reward

        return getattr(reward, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CodeGraderError",
    "CodeHarnessError",
    "CodeReward",
    "CodeTag",
    "CodeTestsError",
    "CodeVerdict",
    "TestResult",
    "code_reward",
    "extract_code",
    "grade_code",
    "grade_code_async",
    "parse_tests",
]
