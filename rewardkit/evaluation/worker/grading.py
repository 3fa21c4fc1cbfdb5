"""Grading one case with its task's grader and turning its verdict into a `CaseResult`
(math here; code's in `worker.code_grading`).

This module is what worker processes (local or Ray) import, so it stays small: it never
raises for a case, it turns any grader exception into a `HARNESS_ERROR` naming it.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

from rewardkit.evaluation.inputs.cases import Case, CodeCase, DecidedCase, MathCase
from rewardkit.evaluation.scoring import CaseResult, make_detail
from rewardkit.evaluation.worker.case_results import (
    GradeOptions,
    Grader,
    default_grader,
    failed_result,
    grader_error_result,
)
from rewardkit.runtime.define.failures import FailureTag

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
    still cannot turn the case into a verdict, as the worker checks it after each case.
    `thread`, when set, limits it to that thread (`--workers 0` grades in a caller's process,
    whose other threads may import what they like)."""

    fired = False
    thread: int | None = None

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == SYMBOLIC_MODULE and self.thread in (None, threading.get_ident()):
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


def warm_up(grader: Grader | None = None, task: str = "math") -> None:
    """Load the grader's lazily-imported parts in this process, so forked workers inherit them
    instead of spending their first cases' budget on imports (the math grader's: code has none)."""
    if task != "math":
        default_grader(task)
        return
    grade = grader or default_grader()
    for response, gold in WARM_UP_PAIRS:
        with contextlib.suppress(Exception):
            grade(response, gold, sandbox=False)


def start_symbolic_workers(grader: Grader | None, task: str = "math") -> None:
    """Start `rewardkit.math.grade`'s own symbolic workers and wait for them, before grading
    with `sandbox=True` (in-process, Ray). Started on first use instead, in a cold process,
    they take longer than a short budget, and the first symbolic comparisons come out as
    `timeout` verdicts: caused by the harness, not by the answer. Cheap once they run; nothing
    to do for a custom grader or another task."""
    if grader is None and task == "math":
        from rewardkit.math import warm_up as start_and_wait

        start_and_wait()


class LazySymbolicWorkers:
    """`--workers 0`: start `rewardkit.math.grade`'s symbolic workers when a case first needs
    them, not before the run. Until then cases are graded with `sandbox=False` under the cold
    import guard (this thread only): a case that needs the symbolic part raises `ColdWorker`
    before any symbolic work, the workers are started and waited for (outside its budget), and
    it is graded again with `sandbox=True`, as is every later case. A run whose cases need none
    starts no process. Where the guard cannot see the part load (a custom grader, or the part
    already imported in this process), the workers start before the first case, as before."""

    def __init__(self, grader: Grader | None, task: str = "math") -> None:
        self.grader = grader
        self.cold = grader is None and task == "math" and SYMBOLIC_MODULE not in sys.modules
        self.started = task != "math"  # (other tasks have no symbolic workers to start)

    @property
    def sandbox(self) -> bool:
        """The `sandbox` argument of the next grade: False while the guard stands in for it."""
        return not self.cold

    def start(self) -> None:
        """Start the symbolic workers and wait for them; later cases grade with `sandbox=True`."""
        if not self.started:
            self.started, self.cold = True, False
            start_symbolic_workers(self.grader)

    @contextlib.contextmanager
    def guarded(self) -> Iterator[None]:
        """While cold: the import guard, for this thread, around the grades inside."""
        if not self.cold:
            if not self.started:
                self.start()
            yield
            return
        COLD_GUARD.fired, COLD_GUARD.thread = False, threading.get_ident()
        sys.meta_path.insert(0, COLD_GUARD)  # type: ignore[arg-type]
        try:
            yield
        finally:
            with contextlib.suppress(ValueError):
                sys.meta_path.remove(COLD_GUARD)  # type: ignore[arg-type]
            COLD_GUARD.fired, COLD_GUARD.thread = False, None

    def grade(self, case: Case, options: GradeOptions) -> CaseResult:
        """`grade_case` in this process, starting the workers if this case needs them."""
        try:
            with self.guarded():
                return grade_case(case, options, sandbox=self.sandbox, grader=self.grader)
        except ColdWorker:
            self.start()
            return grade_case(case, options, sandbox=True, grader=self.grader)


def grade_case(
    case: Case, options: GradeOptions, *, sandbox: bool, grader: Grader | None = None
) -> CaseResult:
    """Grade `case`; `sandbox=False` in our own killable workers, True when grading in-process
    (the math grader's own process; a code case always runs in `options.sandbox`)."""
    if isinstance(case, CodeCase):
        from rewardkit.evaluation.worker.code_grading import grade_code_case

        return grade_code_case(case, options, grader=grader)
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


def harness_seconds(grader: Grader | None) -> float:
    """Seconds a call of `grader` may spend on our side beyond the case's budget (a served
    reward's HTTP requests and retries: `RemoteGrader.harness_seconds`), never charged to the
    model; 0 for graders that declare none."""
    return float(getattr(grader, "harness_seconds", 0.0) or 0.0)


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


def crash_result(case: Case, error: str, *, reason: str = "crash") -> CaseResult:
    """A `HARNESS_ERROR` for a case whose worker died twice; `error` names the crash."""
    return failed_result(case, FailureTag.HARNESS_ERROR, reason=reason, error=error)


def hung_grader_result(case: Case, grader: Grader, waited: float) -> CaseResult:
    """The `HARNESS_ERROR` of a case whose grader overran its own bound on our side (a reward
    server that accepted the request and never answered): our failure, not a timeout verdict."""
    return failed_result(
        case,
        FailureTag.HARNESS_ERROR,
        reason="grader_hung",
        error=f"{grader!r} did not return within {waited:.0f} s; worker killed",
        seconds=waited,
    )


def timeout_result(case: Case, budget: float, waited: float) -> CaseResult:
    """The grader's own timeout verdict (`WRONG_ANSWER`, reason `timeout`) for a case whose
    worker we killed because it overran its budget: an undecidable comparison is not a pass."""
    return failed_result(
        case,
        FailureTag.WRONG_ANSWER,
        reason="timeout",
        error=f"grading did not finish within the {budget:g} s budget; worker killed after {waited:.2f} s",
        seconds=waited,
    )
