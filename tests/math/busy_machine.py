"""Busy loops beside a test: the machine the grader must give the same verdicts on (CI is shared)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager


def busy_loop_count() -> int:
    """2 x the cores this process may run on: every core oversubscribed twice."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return 2 * cores


@contextmanager
def busy_loops(count: int | None = None) -> Iterator[list[int]]:
    """Run ``count`` (default 2 x nproc) CPU-bound processes for the duration; yields their pids."""
    processes = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL)
        for _ in range(busy_loop_count() if count is None else count)
    ]
    try:
        yield [process.pid for process in processes]
    finally:
        for process in processes:
            process.kill()
        for process in processes:
            process.wait()
