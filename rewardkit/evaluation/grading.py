"""Grading one case with the math grader and turning its verdict into a `CaseResult`.

This module is what worker processes (local or Ray) import, so it stays small: it never
raises for a case, it turns any grader exception into a `HARNESS_ERROR` naming it.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rewardkit.evaluation.cases import DecidedCase, MathCase
from rewardkit.evaluation.scoring import CaseResult, make_detail
from rewardkit.failures import FailureTag

Grader = Callable[..., Any]
"""A callable with `rewardkit.math.grade`'s signature returning a `MathVerdict`; must be
picklable by reference (a module-level function) to run in worker processes."""


@dataclass(frozen=True)
class GradeOptions:
    """The grader settings of a run: policy, extraction mode and per-case time budget (seconds)."""

    policy: str = "lenient"
    extract: str = "boxed"
    timeout: float = 1.0


def default_grader() -> Grader:
    """`rewardkit.math.grade`, imported when first needed (it pulls in sympy)."""
    from rewardkit.math import grade

    return grade


SYMBOLIC_MODULE = "rewardkit.math.symbolic"
"""The grader's lazily imported symbolic part (sympy, the LaTeX parser: ~1-2 s to load). A test
holds this name to what `warm_up` loads."""


class ColdWorker(BaseException):
    """Raised in a worker forked before `SYMBOLIC_MODULE` was loaded, when a case needs it: the
    rest of the task goes to a worker forked once the parent has loaded it (one load, shared
    by fork, rather than one per worker). A `BaseException`, so that the grader's own
    `except Exception` does not turn it into a verdict."""


class ColdImportGuard:
    """A `sys.meta_path` finder for cold workers: importing `SYMBOLIC_MODULE` raises `ColdWorker`.

    `fired` stays set once it did: a grader that swallows the exception (a bare `except`)
    still cannot turn the case into a verdict, as the worker checks it after each case."""

    fired = False

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == SYMBOLIC_MODULE:
            self.fired = True
            raise ColdWorker(name)
        return None

    def check(self) -> None:
        """Raise `ColdWorker` if the guard fired during the last case."""
        if self.fired:
            raise ColdWorker(SYMBOLIC_MODULE)


COLD_GUARD = ColdImportGuard()
"""The guard a cold worker installs (one per process; unfired elsewhere)."""


WARM_UP_PAIRS = ((r"\boxed{(x+1)^2}", "x^2+2x+1"), (r"\boxed{\frac{1}{2}}", "0.5"))
"""Grades that load the grader's lazy parts (the LaTeX parser takes ~2 s to load the first time)."""


def warm_up(grader: Grader | None = None) -> None:
    """Load the grader's lazily-imported parts in this process, so forked workers inherit them
    instead of spending their first cases' budget on imports."""
    grade = grader or default_grader()
    for response, gold in WARM_UP_PAIRS:
        with contextlib.suppress(Exception):
            grade(response, gold, sandbox=False)


def start_symbolic_workers(grader: Grader | None) -> None:
    """Start `rewardkit.math.grade`'s own symbolic workers and wait for them, before grading
    with `sandbox=True` (in-process, Ray). Started on first use instead, in a cold process,
    they take longer than a short budget, and the first symbolic comparisons come out as
    `timeout` verdicts: caused by the harness, not by the answer. Cheap once they run; nothing
    to do for a custom grader."""
    if grader is None:
        from rewardkit.math import warm_up as start_and_wait

        start_and_wait()


def grade_case(
    case: MathCase, options: GradeOptions, *, sandbox: bool, grader: Grader | None = None
) -> CaseResult:
    """Grade `case`; `sandbox=False` in our own killable workers, True when grading in-process."""
    grade = grader or default_grader()
    started = time.perf_counter()
    try:
        verdict = grade(
            case.response,
            case.gold,
            policy=options.policy,
            extract=options.extract,
            timeout=options.timeout,
            sandbox=sandbox,
        )
    except Exception as exc:  # a grader bug must not stop the run: it is our side's failure
        COLD_GUARD.check()
        return grader_error_result(case, exc, time.perf_counter() - started)
    COLD_GUARD.check()
    return verdict_to_result(case, verdict, seconds=time.perf_counter() - started)


def failed_result(
    case: MathCase, tag: FailureTag, *, reason: str, error: str, seconds: float = 0.0
) -> CaseResult:
    """A failed case decided by the harness rather than by a verdict (crash, timeout, bug)."""
    return CaseResult(
        id=case.id,
        passed=False,
        tag=tag,
        detail=make_detail(reason=reason, expected=case.gold, error=error),
        line=case.line,
        response=case.response,
        seconds=seconds,
    )


def grader_error_result(case: MathCase, error: Exception, seconds: float) -> CaseResult:
    """The `HARNESS_ERROR` of a case whose grader raised (a bug on our side, never the model's)."""
    return failed_result(
        case,
        FailureTag.HARNESS_ERROR,
        reason="grader_error",
        error=f"grader raised {type(error).__name__}: {error}",
        seconds=seconds,
    )


def verdict_to_result(case: MathCase, verdict: Any, *, seconds: float) -> CaseResult:
    """Map a `MathVerdict` to a result, enforcing exactly one tag per non-pass."""
    raw_detail = dict(getattr(verdict, "detail", None) or {})
    tag = verdict.tag
    error = raw_detail.pop("error", None)
    if verdict.correct and tag is not None:
        tag, error = FailureTag.HARNESS_ERROR, f"grader returned correct=True with tag {tag}"
    elif not verdict.correct and tag is None:
        tag, error = FailureTag.HARNESS_ERROR, "grader returned correct=False without a tag"
    detail = make_detail(
        parsed_answer=verdict.parsed_answer,
        expected=verdict.expected,
        reason=verdict.reason or "unknown",
        error=None if error is None else str(error),
        **{key: None if value is None else str(value) for key, value in raw_detail.items()},
    )
    return CaseResult(
        id=case.id,
        passed=tag is None,
        tag=None if tag is None else FailureTag(tag),
        detail=detail,
        line=case.line,
        response=case.response,
        seconds=seconds,
    )


def decided_to_result(case: DecidedCase) -> CaseResult:
    """The result of a case decided before grading (malformed line, upstream/endpoint error)."""
    reason = "malformed_input" if case.tag is FailureTag.HARNESS_ERROR else "generation_error"
    return CaseResult(
        id=case.id,
        passed=False,
        tag=case.tag,
        detail=make_detail(reason=reason, expected=case.gold, error=case.error, **case.extra),
        line=case.line,
        response=case.response,
    )


def crash_result(case: MathCase, error: str, *, reason: str = "crash") -> CaseResult:
    """A `HARNESS_ERROR` for a case whose worker died twice; `error` names the crash."""
    return failed_result(case, FailureTag.HARNESS_ERROR, reason=reason, error=error)


def timeout_result(case: MathCase, budget: float, waited: float) -> CaseResult:
    """The grader's own timeout verdict (`WRONG_ANSWER`, reason `timeout`) for a case whose
    worker we killed because it overran its budget: an undecidable comparison is not a pass."""
    return failed_result(
        case,
        FailureTag.WRONG_ANSWER,
        reason="timeout",
        error=f"grading did not finish within the {budget:g} s budget; worker killed after {waited:.2f} s",
        seconds=waited,
    )
