"""Grading one code case with `rewardkit.code.grade_code` and turning its `CodeVerdict` into a
`CaseResult`: the program, the first failing test (expected and actual output) and the pass
fraction go into the results row; our side's failures stay out of the score.
"""

from __future__ import annotations

import time
from typing import Any

from rewardkit.code import CodeTag, CodeTestsError, parse_tests
from rewardkit.code.formats import CallTests, CheckTests, StdioTests
from rewardkit.code.sandbox import SandboxUnavailableError
from rewardkit.evaluation.inputs.cases import CodeCase
from rewardkit.evaluation.scoring import CaseResult, make_detail
from rewardkit.evaluation.worker.case_results import (
    GradeOptions,
    Grader,
    default_grader,
    failed_result,
    grader_error_result,
)
from rewardkit.runtime.define.failures import FailureTag


def grade_code_case(
    case: CodeCase, options: GradeOptions, *, grader: Grader | None = None
) -> CaseResult:
    """Grade `case`'s program in `options.sandbox` (each test within `options.timeout` seconds
    and `options.memory` bytes). Tests the grader cannot read are our side's failure
    (`HARNESS_ERROR`, reason `bad_tests`), as a sandbox that cannot start is (`SANDBOX_ERROR`)."""
    grade = grader or default_grader("code")
    keywords: dict[str, Any] = {
        "timeout": options.timeout,
        "sandbox": options.sandbox,
        "extract": options.extract,
    }
    if options.memory is not None:
        keywords["memory"] = options.memory
    started = time.perf_counter()
    try:
        verdict = grade(case.response, case.tests, **keywords)
    except CodeTestsError as exc:
        return failed_result(
            case,
            FailureTag.HARNESS_ERROR,
            reason="bad_tests",
            error=f"the case's tests cannot be read: {exc}",
            seconds=time.perf_counter() - started,
        )
    except SandboxUnavailableError as exc:
        return failed_result(
            case,
            CodeTag.SANDBOX_ERROR,  # type: ignore[arg-type]
            reason="sandbox_unavailable",
            error=str(exc),
            seconds=time.perf_counter() - started,
        )
    except Exception as exc:  # a grader bug must not stop the run: it is our side's failure
        return grader_error_result(case, exc, time.perf_counter() - started)
    return code_verdict_to_result(case, verdict, seconds=time.perf_counter() - started)


def tests_form(tests: object) -> str:
    """The form of a case's tests, as results name what decided them: `stdio`, `fn_name`,
    `humaneval`, `mbpp` (`unknown` when they cannot be read)."""
    try:
        suite = parse_tests(tests)
    except (CodeTestsError, ValueError, TypeError):
        return "unknown"
    if isinstance(suite, StdioTests):
        return "stdio"
    if isinstance(suite, CallTests):
        return "fn_name"
    if isinstance(suite, CheckTests):
        return suite.style
    return "unknown"


def _reason(case: CodeCase, tag: Any) -> str:
    """What decided the case, in few distinct words (the summary counts them): the tests' form
    for a program that ran; `no_code` and `compile` for one that did not."""
    if tag == CodeTag.NO_CODE:
        return "no_code"
    if tag == CodeTag.SYNTAX_ERROR:
        return "compile"
    return tests_form(case.tests)


def _first_failure(verdict: Any) -> tuple[int, Any] | None:
    """The failed test that gave the verdict its tag (else the first failed one), with its index."""
    failed = [(index, test) for index, test in enumerate(verdict.tests) if not test.passed]
    for index, test in failed:
        if test.outcome == getattr(verdict.tag, "value", verdict.tag):
            return index, test
    return failed[0] if failed else None


def code_verdict_to_result(case: CodeCase, verdict: Any, *, seconds: float) -> CaseResult:
    """Map a `CodeVerdict` to a result, enforcing exactly one tag per non-pass: `detail` holds
    the program (`parsed_answer`), the first failing test (`failed_test`, its `expected` and
    `actual` output) and the verdict's words (`message`); `fraction` the tests passed."""
    tag, error = verdict.tag, None
    if verdict.correct and tag is not None:
        tag, error = FailureTag.HARNESS_ERROR, f"grader returned correct=True with tag {tag}"
    elif not verdict.correct and tag is None:
        tag, error = FailureTag.HARNESS_ERROR, "grader returned correct=False without a tag"
    elif tag is not None and not isinstance(tag, (CodeTag, FailureTag)):
        tag = CodeTag(tag)
    tests = tuple(verdict.tests)
    failure = _first_failure(verdict)
    failed_test = expected = actual = None
    if failure is not None:
        index, test = failure
        failed_test = f"test {index + 1} of {len(tests)}: {test.outcome}"
        if test.detail:
            failed_test += f" ({test.detail})"
        expected, actual = test.expected, test.actual
    detail = make_detail(
        parsed_answer=verdict.program,
        expected=expected,
        reason="grader_error" if error else _reason(case, tag),
        error=error,
        actual=actual,
        failed_test=failed_test,
        tests_passed=f"{sum(test.passed for test in tests)}/{len(tests)}",
        message=verdict.reason or None,
    )
    return CaseResult(
        id=case.id,
        passed=tag is None,
        tag=tag,
        detail=detail,
        line=case.line,
        response=case.response,
        seconds=seconds,
        extra={"fraction": float(verdict.fraction)},
    )


def case_budget(case: CodeCase, options: GradeOptions, grace: float) -> float:
    """Seconds a code case may take before the runner kills its worker: each test's budget
    (the grader's sandbox enforces it; this is the backstop for a grader that hangs), plus
    `grace` for starting the programs."""
    try:
        suite = parse_tests(case.tests)
    except (CodeTestsError, ValueError, TypeError):
        return options.timeout + grace
    if isinstance(suite, StdioTests):
        count = len(suite.inputs)
    elif isinstance(suite, CallTests):
        count = len(suite.arguments)
    else:
        count = len(suite.tests)
    return max(1, count) * (options.timeout + 1.0) + grace
