"""The code grader's result: whether a program passed its tests, each test's outcome, and why."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

#: How much of a test's expected and actual output a ``TestResult`` keeps (characters).
PREVIEW_LENGTH = 200

PASSED = "PASSED"
"""A ``TestResult.outcome`` for a test that passed (a failed test's outcome is a ``CodeTag`` value)."""


class CodeTag(str, Enum):
    """The single reason a program did not pass. ``SANDBOX_ERROR`` is our side's failure:
    excluded from scores, like ``FailureTag.HARNESS_ERROR``, and never reachable by the program."""

    NO_CODE = "NO_CODE"
    """No program could be extracted from the response (no code block, an unclosed last block)."""
    SYNTAX_ERROR = "SYNTAX_ERROR"
    """The program does not compile (found on the host by ``compile``, without running it)."""
    RUNTIME_ERROR = "RUNTIME_ERROR"
    """The program raised, exited with a non-zero status, was killed, or broke its harness's protocol."""
    WRONG_OUTPUT = "WRONG_OUTPUT"
    """The program ran and its output, return value or the data set's check did not match."""
    TIMEOUT = "TIMEOUT"
    """A test ran past its wall-clock budget."""
    MEMORY_LIMIT = "MEMORY_LIMIT"
    """The program went past its memory limit."""
    SANDBOX_ERROR = "SANDBOX_ERROR"
    """Our side failed (the sandbox could not start or run the program): excluded from scores."""

    def __str__(self) -> str:
        return self.value


def preview(text: str) -> str:
    """The first ``PREVIEW_LENGTH`` characters of ``text`` (with an ellipsis when cut)."""
    return text if len(text) <= PREVIEW_LENGTH else text[:PREVIEW_LENGTH] + "..."


@dataclass(frozen=True)
class TestResult:
    """One test's outcome (``"PASSED"`` or a ``CodeTag`` value), its wall time in seconds, the first
    characters of what was expected and of what the program gave, and a short ``detail``."""

    __test__ = False  # not a pytest test class

    outcome: str
    time: float
    expected: str = ""
    actual: str = ""
    detail: str = ""

    @property
    def passed(self) -> bool:
        """Whether the test passed."""
        return self.outcome == PASSED

    @property
    def tag(self) -> CodeTag | None:
        """The failure's ``CodeTag``, ``None`` when the test passed."""
        return None if self.passed else CodeTag(self.outcome)


@dataclass(frozen=True)
class CodeVerdict:
    """Whether every test passed (``correct``), the fraction that did, the tag of the first
    failure (``None`` when correct), one ``TestResult`` per test, a ``reason`` in words and the
    program that ran (``None`` when none was extracted)."""

    correct: bool
    fraction: float
    tag: CodeTag | None
    tests: tuple[TestResult, ...] = field(default=())
    reason: str = ""
    program: str | None = None

    @property
    def scored(self) -> bool:
        """Whether the verdict counts in a score (``False`` for ``SANDBOX_ERROR``: our side failed)."""
        return self.tag is not CodeTag.SANDBOX_ERROR
