"""Graders for the worker tests: the real `rewardkit.math.grade`, except for marked responses
that kill or hang the worker process grading them (module-level, so workers can import them)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

from rewardkit.math import grade

KILL = "KILL-WORKER"
"""A response containing this makes the worker SIGKILL itself, every time."""
KILL_ONCE = "KILL-WORKER-ONCE:"
"""`KILL-WORKER-ONCE:<path>`: the worker SIGKILLs itself unless <path> exists (it creates it first)."""
HANG = "HANG-WORKER"
"""The worker spins forever on this response, as a runaway symbolic computation would."""
RAISE = "RAISE-IN-GRADER"
"""The grader raises on this response (a bug on our side: the case must be a HARNESS_ERROR)."""
SLOW = "SLOW-GRADE"
"""Grading this response takes 0.5 s (to make an earlier chunk finish after a later one)."""
HANG_MARKED = "HANG-MARKED:"
"""`HANG-MARKED:<path>`: the worker creates <path>, then spins forever (a test knows it is stuck)."""
WAIT = "WAIT-FOR:"
"""`WAIT-FOR:<started>:<release>`: create <started>, wait (60 s at most) until <release> exists, then grade."""
EAT = "EAT-MEMORY:"
"""`EAT-MEMORY:<MiB>`: allocate that much memory before grading (against the worker's cap)."""
LATEX_ERROR = "LATEX-ERROR"
"""The grader raises an error whose text holds LaTeX (its backslashes must reach every output as written)."""


def _argument(response: str, marker: str) -> str:
    return response.split(marker, 1)[1].split()[0]


def grade_or_crash(response: str, gold: str, **options: Any) -> Any:
    """`rewardkit.math.grade`, but marked responses kill or hang the calling process."""
    if HANG_MARKED in response:
        Path(_argument(response, HANG_MARKED)).touch()
        while True:
            time.sleep(0.01)
    if WAIT in response:
        started, release = _argument(response, WAIT).split(":")
        Path(started).touch()
        deadline = time.monotonic() + 60
        while not Path(release).exists() and time.monotonic() < deadline:
            time.sleep(0.005)
    if EAT in response:
        hoard = bytearray(int(_argument(response, EAT)) << 20)
        del hoard
    if KILL_ONCE in response:
        marker = Path(response.split(KILL_ONCE, 1)[1].split()[0])
        if not marker.exists():
            marker.touch()
            os.kill(os.getpid(), signal.SIGKILL)
    elif KILL in response:
        os.kill(os.getpid(), signal.SIGKILL)
    elif HANG in response:
        while True:
            time.sleep(0.01)
    elif SLOW in response:
        time.sleep(0.5)
    elif RAISE in response:
        raise ZeroDivisionError("grader bug")
    elif LATEX_ERROR in response:
        raise ValueError(r"gold '\frac{1}{' does not parse")
    return grade(response, gold, **options)


COLD_LOAD_SECONDS = 2.0


def grade_after_a_slow_load(response: str, gold: str, **options: Any) -> Any:
    """`rewardkit.math.grade`, but in a process that has not loaded the grader's symbolic part,
    load it first and then take `COLD_LOAD_SECONDS` more, as the load does on a busy machine.
    (A cold eval worker stops at the import: it hands the case to a warm worker.)"""
    import sys

    from rewardkit.evaluation.worker.grading import SYMBOLIC_MODULE

    if SYMBOLIC_MODULE not in sys.modules:
        __import__(SYMBOLIC_MODULE)
        time.sleep(COLD_LOAD_SECONDS)
    return grade(response, gold, **options)


def grade_swallowing_everything(response: str, gold: str, **options: Any) -> Any:
    """`rewardkit.math.grade` behind a bare `except`: whatever goes wrong, the verdict of an
    empty response (a grader written carelessly, which must still not misgrade a case)."""
    try:
        return grade(response, gold, **options)
    except BaseException:  # (the point of this grader)
        return grade("", gold, **options)


class SlowService:
    """A grader that declares time of its own beyond the case's budget (`harness_seconds`, as
    `RemoteGrader` does for its HTTP requests) and hangs on `HANG-WORKER` responses: a service
    that accepted the request and never answered."""

    harness_seconds = 0.5

    def __call__(self, response: str, gold: str, **options: Any) -> Any:
        if HANG in response:
            while True:
                time.sleep(0.01)
        return grade(response, gold, **options)


slow_service = SlowService()
