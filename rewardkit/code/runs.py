"""Stage 3: a compiled program run against a test suite in the sandbox, one ``TestResult`` per test.

Every comparison happens here, on the host, on plain data: the program's stdout text, or its
return value decoded by the codec, or the checker's verdict line.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass

from rewardkit.code import codec
from rewardkit.code.comparison import return_matches, stdout_matches
from rewardkit.code.formats import CallTests, CheckTests, StdioTests
from rewardkit.code.harness import PROGRAM, SCRIPTS, harness_files
from rewardkit.code.sandbox import Job, Limits, Sandbox
from rewardkit.code.sessions import Broken, Candidate, Checker, ended_badly
from rewardkit.code.verdict import PASSED, CodeTag, TestResult, preview


@dataclass(frozen=True)
class RunOptions:
    """Where and how the tests run: the sandbox, each test's wall seconds and the memory in bytes."""

    sandbox: Sandbox
    timeout: float
    memory: int
    float_tolerance: float | None = None


def _exception_tag(name: str) -> CodeTag:
    return CodeTag.MEMORY_LIMIT if name == "MemoryError" else CodeTag.RUNTIME_ERROR


def run_stdio(program: str, suite: StdioTests, options: RunOptions) -> list[TestResult]:
    """Run the program once per test with the input on stdin; compare its stdout on the host."""
    files = {
        **harness_files("stdio"),
        PROGRAM: program.encode(),
        "_rk_config.json": b'{"prelude": true}',
    }
    limits = Limits(timeout=options.timeout, memory=options.memory)
    results = []
    for stdin, expected in zip(suite.inputs, suite.outputs, strict=True):
        outcome = options.sandbox.run(
            Job(files=files, main=SCRIPTS["stdio"], stdin=stdin.encode(), limits=limits)
        )
        actual = outcome.stdout.decode("utf-8", "replace")
        failure = ended_badly(outcome)
        if failure is not None:
            outcome_name, detail = failure[0].value, failure[1]
        elif stdout_matches(actual, expected, options.float_tolerance):
            outcome_name, detail = PASSED, ""
        else:
            outcome_name, detail = CodeTag.WRONG_OUTPUT.value, "the output differs"
        results.append(
            TestResult(outcome_name, outcome.wall, preview(expected), preview(actual), detail)
        )
    return results


def _failed_all(expected: Sequence[str], tag: CodeTag, detail: str) -> list[TestResult]:
    """The results of tests that all fail alike: a program that does not load, a sandbox or a
    data set's setup that does not start (deterministic: not retried test after test)."""
    return [TestResult(tag.value, 0.0, preview(text), "", detail) for text in expected]


def _candidate(program: str, options: RunOptions, *, prelude: bool, tests: int) -> Candidate:
    """The candidate's sandboxed session, sized for the ``tests`` calls it has left to serve."""
    return Candidate(
        options.sandbox,
        program,
        prelude=prelude,
        timeout=options.timeout,
        memory=options.memory,
        tests=tests,
    )


def run_calls(program: str, suite: CallTests, options: RunOptions) -> list[TestResult]:
    """Call ``fn_name`` once per test in the candidate's sandbox; compare its decoded return on
    the host (``return_matches``). A program that times out or dies is restarted for the next test."""
    results: list[TestResult] = []
    candidate: Candidate | None = None
    count = len(suite.arguments)
    try:
        for index, (arguments, expected) in enumerate(
            zip(suite.arguments, suite.outputs, strict=True)
        ):
            start = time.monotonic()
            try:
                if candidate is None:
                    candidate = _candidate(program, options, prelude=True, tests=count - index)
                    if candidate.load_failure is not None:  # every test left fails alike
                        return results + _failed_all(suite.texts[index:], *candidate.load_failure)
                answer = candidate.call(
                    suite.fn_name,
                    codec.encode(list(arguments)),
                    codec.encode({}),
                    start + options.timeout,
                )
            except Broken as broken:
                if candidate is not None:
                    candidate.close()
                candidate = None
                if broken.tag is CodeTag.SANDBOX_ERROR:
                    return results + _failed_all(suite.texts[index:], broken.tag, broken.detail)
                results.append(
                    TestResult(
                        broken.tag.value,
                        time.monotonic() - start,
                        preview(suite.texts[index]),
                        "",
                        broken.detail,
                    )
                )
                continue
            elapsed = time.monotonic() - start
            if answer.raised is not None:
                detail = f"{answer.raised}: {answer.message}"
                results.append(
                    TestResult(
                        _exception_tag(answer.raised).value,
                        elapsed,
                        preview(suite.texts[index]),
                        "",
                        detail,
                    )
                )
                continue
            matched = return_matches(answer.value, expected, options.float_tolerance)
            outcome = PASSED if matched else CodeTag.WRONG_OUTPUT.value
            detail = "" if matched else "the return value differs"
            results.append(
                TestResult(
                    outcome,
                    elapsed,
                    preview(suite.texts[index]),
                    preview(repr(answer.value)),
                    detail,
                )
            )
    finally:
        if candidate is not None:
            candidate.close()
    return results


def _check_once(
    index: int, candidate: Candidate, checker: Checker, deadline: float
) -> tuple[str, str, str, str]:
    """Run check ``index``, relaying the checker's calls to the candidate until it reports:
    (outcome, expected, actual, detail)."""
    checker.channel.send({"run": index})
    raised: str | None = None
    while True:
        message = checker.channel.receive(deadline)
        if "call" in message:
            answer = candidate.call(
                str(message["call"]), message["args"], message["kwargs"], deadline
            )
            if answer.raised is None:
                checker.channel.send({"return": answer.data})
            else:
                raised = answer.raised
                checker.channel.send({"raise": answer.raised, "message": answer.message})
            continue
        if message.get("done") != index:
            raise Broken(
                CodeTag.SANDBOX_ERROR,
                f"the checker answered {json.dumps(message)[:200]}",
                "checker",
            )
        if message.get("passed") is True:
            return PASSED, "", "", ""
        error, text = str(message.get("error", "")), str(message.get("message", ""))
        actual = f"{error}: {text}" if text else error
        if raised is not None and error == raised:
            return (
                _exception_tag(raised).value,
                str(message.get("line", "")),
                "",
                f"the program raised {actual}",
            )
        return CodeTag.WRONG_OUTPUT.value, str(message.get("line", "")), actual, "the check failed"


def _broken_check(broken: Broken) -> tuple[str, str]:
    """A test's outcome when a harness program stopped: a checker that dies or stalls on the
    program's values fails the test (only the sandbox's own failures are ours)."""
    if broken.who == "checker" and broken.tag is CodeTag.RUNTIME_ERROR:
        return (
            CodeTag.WRONG_OUTPUT.value,
            f"the check failed on the program's values ({broken.detail})",
        )
    return broken.tag.value, broken.detail


def run_checks(program: str, suite: CheckTests, options: RunOptions) -> list[TestResult]:
    """Run each check in the checker's sandbox with the candidate in its own; after a harness
    program stops (a timeout, a crash) both are started afresh for the next test."""
    check = {"setup": suite.setup, "tests": list(suite.tests), "proxies": list(suite.proxies)}
    results: list[TestResult] = []
    candidate: Candidate | None = None
    checker: Checker | None = None
    count = len(suite.tests)
    try:
        for index in range(count):
            start = time.monotonic()
            try:
                if candidate is None:
                    candidate = _candidate(program, options, prelude=False, tests=count - index)
                    if candidate.load_failure is not None:  # every test left fails alike
                        return results + _failed_all(suite.tests[index:], *candidate.load_failure)
                if checker is None:
                    checker = Checker(
                        options.sandbox, check, timeout=options.timeout, memory=options.memory
                    )
                outcome, expected, actual, detail = _check_once(
                    index, candidate, checker, start + options.timeout
                )
            except Broken as broken:
                for program_run in (candidate, checker):
                    if program_run is not None:
                        program_run.close()
                candidate = checker = None
                if broken.tag is CodeTag.SANDBOX_ERROR:
                    return results + _failed_all(suite.tests[index:], broken.tag, broken.detail)
                outcome, detail = _broken_check(broken)
                expected, actual = "", ""
            expected = expected or suite.tests[index]
            results.append(
                TestResult(
                    outcome, time.monotonic() - start, preview(expected), preview(actual), detail
                )
            )
    finally:
        for program_run in (candidate, checker):
            if program_run is not None:
                program_run.close()
    return results
