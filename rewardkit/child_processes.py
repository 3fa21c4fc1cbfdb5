"""Limits for the worker processes rewardkit starts: they die with their parent and cap their memory.

Both the grader's symbolic sandbox and the eval runner's workers call these from their pool
initializer. A worker left behind by a killed parent (``kill -9`` of ``rewardkit eval``, an RL
trainer that crashes) would otherwise go on at 100% CPU, re-parented to init, with nobody to read
its results.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

#: How often the watchdog thread looks for a changed parent process id.
PARENT_POLL_SECONDS = 0.2

_PR_SET_PDEATHSIG = 1


def _request_death_signal() -> bool:
    """Ask Linux to SIGKILL this process when the thread that forked it exits (``PR_SET_PDEATHSIG``)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def parent_is_gone(parent_pid: int) -> bool:
    """Whether this process was re-parented, i.e. ``parent_pid`` (its parent at start) has died."""
    return os.getppid() != parent_pid


def _watch_parent(parent_pid: int) -> None:
    """Exit at once when the parent is gone (this process was re-parented)."""
    while not parent_is_gone(parent_pid):
        time.sleep(PARENT_POLL_SECONDS)
    os._exit(1)


def die_with_parent(parent_pid: int, *, death_signal: bool = False, watchdog: bool = True) -> bool:
    """Make this (worker) process exit when ``parent_pid`` dies, however it dies.

    ``death_signal=True`` asks the kernel (``PR_SET_PDEATHSIG``, Linux) to SIGKILL this process
    the moment its parent goes: use it only when the thread that forked this process lives as long
    as the parent process (the kernel fires when that *thread* exits). ``watchdog`` (default) also
    starts a daemon thread polling ``os.getppid()``: it works whatever thread forked the worker and
    on every POSIX system, but needs the GIL, so a worker stuck in one long C call exits when that
    call returns. A process that must stay single-threaded (one that forks, like a fork server)
    passes ``watchdog=False`` and checks ``parent_is_gone`` in its own loop. Returns whether the
    kernel's death signal is armed. Exits at once if the parent is already gone.
    """
    armed = _request_death_signal() if death_signal else False
    if parent_is_gone(parent_pid):  # the parent died before the signal was armed or the watch began
        os._exit(1)
    if watchdog:
        threading.Thread(
            target=_watch_parent, args=(parent_pid,), name="rewardkit-parent-watch", daemon=True
        ).start()
    return armed


def cap_address_space(headroom: int) -> None:
    """Cap this process's address space (``RLIMIT_AS``) at its current size plus ``headroom`` bytes.

    A no-op where the limit cannot be set (not Linux): the time budget still bounds the work.
    """
    try:
        import resource

        with open("/proc/self/statm") as statm:
            current = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        limit = current + headroom
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (OSError, ValueError, ImportError):
        pass


def disable_core_dumps() -> None:
    """Write no core file if this process is killed by a signal (``RLIMIT_CORE`` = 0): a worker
    killed on purpose (a CPU limit, a memory cap) must not leave hundreds of megabytes behind."""
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (OSError, ValueError, ImportError):
        pass
