"""Notes about the module itself (RK900-RK902): what the engine could not analyse, and why."""

from __future__ import annotations

from rewardkit.checks.model import Severity
from rewardkit.checks.rules.base import Invalid, Rule


class SyntaxErrorRule(Rule):
    """The module does not parse: one diagnostic at the error, and the module's other checks
    are skipped (never a crash)."""

    code = "RK900"
    severity = Severity.ERROR
    summary = "a syntax error (the file's other checks are skipped)"
    VALID = ("from rewardkit import reward\n\n@reward\ndef one(final_response):\n    return 1.0\n",)
    INVALID = (
        Invalid(
            "from rewardkit import reward\n\n@reward\ndef one(final_response:\n    return 1.0\n",
            4,
        ),
    )


class NestingTooDeep(Rule):
    """A definition nested so deeply (thousands of levels) that walking it would exhaust the
    stack: it is skipped with this note instead of crashing the checker."""

    code = "RK901"
    severity = Severity.INFO
    summary = "a definition too deeply nested to analyse (its checks are skipped)"


class FileTooLarge(Rule):
    """A module longer than ``max_file_size`` characters (1,000,000 by default, as the language
    server's ``maxFileSize``) is not analysed: checking one costs time and memory in proportion
    to its size, and such files are generated data rather than reward code. Raise the limit
    with ``max_file_size`` in ``[tool.rewardkit]`` or ``--max-file-size``."""

    code = "RK902"
    severity = Severity.INFO
    summary = "a file too large to check (over `max_file_size` characters; its checks are skipped)"
