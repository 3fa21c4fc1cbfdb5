"""The typed errors of an evaluation run and the CLI's exit status for each.

Every way a run can end has one exit status (docs/eval.md lists them): the CLI maps these
exceptions to it, so a user never meets a traceback for bad input, bad options or a full disk.
"""

from __future__ import annotations

import signal

from rewardkit.evaluation.inputs.cases import EvalInputError
from rewardkit.evaluation.option_names import option

EXIT_OK = 0
"""The run completed and scored at least one case, whatever the score."""
EXIT_INTERNAL_ERROR = 1
"""A bug in rewardkit (Python's own status for an uncaught exception)."""
EXIT_USAGE = 2
"""Bad options, unreadable or malformed input, a refused output (exists, same file, another run's)."""
EXIT_NOTHING_SCORED = 3
"""The run completed but scored nothing: no case in the input, or every case an
`ADAPTER_ERROR` or `HARNESS_ERROR` (e.g. a dead model endpoint). The reports are written."""
EXIT_OUTPUT_ERROR = 4
"""An output file could not be written: a full disk, a directory in the way, no permission."""
EXIT_SIGNAL_BASE = 128
"""Interrupted by signal N (Ctrl-C: 130, SIGHUP: 129, SIGTERM: 143), after keeping what was graded."""


def ray_extra_missing() -> str:
    """Said when the Ray executor is asked for and ``ray`` cannot be imported."""
    from rewardkit.install import install_command  # only on this error

    return f"{option('executor_ray')} needs the ray extra: {install_command('ray')}"


class EvalConfigError(ValueError):
    """The options of a run contradict each other or are out of range (a usage error, exit 2)."""


class EvalOutputError(Exception):
    """An output file (results, report, HTML report) cannot be written; names it and says why."""

    def __init__(self, what: str, path: object, reason: str) -> None:
        super().__init__(f"cannot write the {what} {path}: {reason}")
        self.what = what
        self.path = str(path)
        self.reason = reason


def os_error_reason(error: OSError) -> str:
    """`No space left on device`, without the errno and path noise of `str(error)`."""
    return error.strerror or str(error) or type(error).__name__


class EvalWarning(UserWarning):
    """Something the run's user should know that did not stop it (the CLI prints it)."""


class InputReplacedWarning(EvalWarning):
    """The input's path named another file by the end of the run (replaced with `mv`): the
    run graded the file it opened, whole."""


class ForeignResultsWarning(EvalWarning):
    """A forced resume left out results whose ids are not in the input."""


class Interrupted(KeyboardInterrupt):
    """The run was stopped by a signal (SIGINT, SIGTERM, SIGHUP) after keeping what was graded."""

    def __init__(self, signum: int = signal.SIGINT) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = int(signum)


def raise_interrupted(signum: int, _frame: object) -> None:
    """A signal handler that stops the run as Ctrl-C does (the CLI installs it for SIGTERM and
    SIGHUP too): the grading loop writes what was graded, then the CLI exits 128 + signum."""
    raise Interrupted(signum)


def exit_status_of_interrupt(error: KeyboardInterrupt) -> int:
    """128 + the signal's number (130 for Ctrl-C, or a plain `KeyboardInterrupt`)."""
    return EXIT_SIGNAL_BASE + getattr(error, "signum", int(signal.SIGINT))


__all__ = [
    "EXIT_INTERNAL_ERROR",
    "EXIT_NOTHING_SCORED",
    "EXIT_OK",
    "EXIT_OUTPUT_ERROR",
    "EXIT_SIGNAL_BASE",
    "EXIT_USAGE",
    "EvalConfigError",
    "EvalInputError",
    "EvalOutputError",
    "EvalWarning",
    "ForeignResultsWarning",
    "InputReplacedWarning",
    "Interrupted",
    "exit_status_of_interrupt",
    "os_error_reason",
    "raise_interrupted",
]
