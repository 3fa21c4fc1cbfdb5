"""Module-level tasks for the sandbox tests (pebble pickles functions by reference)."""

from __future__ import annotations

import os
import time

from rewardkit.math.comparison import Outcome


def sleep_forever() -> Outcome:
    time.sleep(3600)
    return Outcome(True, "exact")


def worker_pid() -> int:
    return os.getpid()


def allocate(gigabytes: int) -> Outcome:
    block = bytearray(gigabytes * 1024**3)
    return Outcome(bool(block), "exact")
