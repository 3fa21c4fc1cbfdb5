"""Module-level tasks for the sandbox tests (tasks are pickled by reference)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from rewardkit.math.comparison import Outcome


def sleep_forever() -> Outcome:
    """Uses no CPU: only the wall-clock ceiling ends it (a starved or hung worker)."""
    time.sleep(3600)
    return Outcome(True, "exact")


def spin(cpu_seconds: float) -> Outcome:
    """Burns ``cpu_seconds`` of this process's CPU time in Python code, however long that takes."""
    started = time.process_time()
    while time.process_time() - started < cpu_seconds:
        pass
    return Outcome(True, "exact")


def one_long_c_call() -> Outcome:
    """About 20 s of CPU in one C call: no Python signal handler can run before it returns."""
    return Outcome(bool(pow(7, 2 * 10**7)), "exact")


def worker_pid() -> int:
    return os.getpid()


def allocate(gigabytes: int) -> Outcome:
    block = bytearray(gigabytes * 1024**3)
    return Outcome(bool(block), "exact")


def die_once(flag: str) -> Outcome:
    """The first call kills its worker (as the OOM killer would); the next one succeeds."""
    path = Path(flag)
    if not path.exists():
        path.write_text("died once")
        os._exit(9)
    return Outcome(True, "exact")


def raise_value_error() -> Outcome:
    raise ValueError("a bug in the task")
