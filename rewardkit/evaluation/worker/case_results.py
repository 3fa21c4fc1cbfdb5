"""What every task's grading shares: the run's grader settings, the default grader of a task, and
the results the harness decides (a failed case, a grader that raised). The math and code
graders' modules (`grading`, `code_grading`) build on it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rewardkit.evaluation.inputs.cases import Case, MathCase
from rewardkit.evaluation.scoring import CaseResult, make_detail
from rewardkit.runtime.define.failures import FailureTag

Grader = Callable[..., Any]
"""A callable with `rewardkit.math.grade`'s signature returning a `MathVerdict`; must be
picklable by reference (a module-level function) to run in worker processes."""


@dataclass(frozen=True)
class GradeOptions:
    """The grader settings of a run: its task, policy, extraction mode and time budget
    (seconds per case; per test for code), and for code the sandbox and a program's memory."""

    policy: str = "lenient"
    extract: str = "boxed"
    timeout: float = 1.0
    task: str = "math"
    sandbox: str = "auto"
    memory: int | None = None


def default_grader(task: str = "math") -> Grader:
    """`rewardkit.math.grade` (or `rewardkit.code.grade_code` for the code task), imported when
    first needed (it pulls in sympy)."""
    if task == "code":
        from rewardkit.code import grade_code

        return grade_code
    from rewardkit.math import grade

    return grade


def failed_result(
    case: Case, tag: FailureTag, *, reason: str, error: str, seconds: float = 0.0
) -> CaseResult:
    """A failed case decided by the harness rather than by a verdict (crash, timeout, bug)."""
    return CaseResult(
        id=case.id,
        passed=False,
        tag=tag,
        detail=make_detail(
            reason=reason, expected=case.gold if isinstance(case, MathCase) else None, error=error
        ),
        line=case.line,
        response=case.response,
        seconds=seconds,
    )


def grader_error_result(case: Case, error: Exception, seconds: float) -> CaseResult:
    """The `HARNESS_ERROR` of a case whose grader raised (a bug on our side, never the model's);
    the reason is the exception's `eval_reason` (`reward_server`), else `grader_error`."""
    return failed_result(
        case,
        FailureTag.HARNESS_ERROR,
        reason=str(getattr(type(error), "eval_reason", "grader_error")),
        error=f"grader raised {type(error).__name__}: {error}",
        seconds=seconds,
    )
