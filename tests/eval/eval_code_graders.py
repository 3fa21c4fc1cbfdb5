"""Graders for the `rewardkit eval code` tests, of `rewardkit.code.grade_code`'s signature
(module-level, so worker processes and `--grader MODULE:FUNCTION` can import them)."""

from __future__ import annotations

from typing import Any

from rewardkit.code import CodeTag, CodeVerdict, TestResult


def sandbox_down(response: str, tests: Any, **options: Any) -> CodeVerdict:
    """Every case a `SANDBOX_ERROR`: the sandbox failed on our side (never the program's doing)."""
    failure = TestResult("SANDBOX_ERROR", 0.0, detail="the sandbox could not start the program")
    return CodeVerdict(False, 0.0, CodeTag.SANDBOX_ERROR, (failure,), "sandbox down", "print(1)")


def raises(response: str, tests: Any, **options: Any) -> CodeVerdict:
    """A grader bug: the case must be a `HARNESS_ERROR` naming it, never the model's failure."""
    raise RuntimeError("grader bug")


HANG = "HANG-GRADER"
"""A response with this makes the grader hang (a bug on our side the runner must cut short)."""
SLOW = "SLOW-GRADER"
"""A response with this makes the grader take 2.5 s before grading (longer than one test's
budget, within the budget of the case's tests)."""


def hangs_or_slow(response: str, tests: Any, **options: Any) -> CodeVerdict:
    """`grade_code`, except for responses marked `HANG` (never returns) or `SLOW` (2.5 s more)."""
    import time

    from rewardkit.code import grade_code

    if HANG in response:
        while True:
            time.sleep(1)
    if SLOW in response:
        time.sleep(2.5)
    return grade_code(response, tests, **options)
