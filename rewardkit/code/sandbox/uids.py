"""Unprivileged uids for workers run by root: one per live worker, unique across processes.

As root, a program must not run as uid 0 (RLIMIT_NPROC does not bind it, and it reads every host
file a bind exposes), nor share a uid with another worker (it could signal that worker's jobs and
share their process count). A uid is held by an flock on a file named after it, for the worker's life.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from rewardkit.code.sandbox.api import SandboxUnavailableError
from rewardkit.code.sandbox.workers import Worker

__all__ = ["FIRST_UID", "UID_COUNT", "LeasedWorker", "UidLease"]

FIRST_UID = 61000
UID_COUNT = 2000


class UidLease:
    """An unprivileged uid held by this process until `release` (or its exit)."""

    directory = Path(tempfile.gettempdir()) / "rewardkit-sandbox-uids"

    def __init__(self) -> None:
        self.directory.mkdir(mode=0o755, exist_ok=True)
        for uid in range(FIRST_UID, FIRST_UID + UID_COUNT):
            fd = os.open(self.directory / str(uid), os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            self.uid, self.fd = uid, fd
            return
        raise SandboxUnavailableError(
            f"no free sandbox uid in {FIRST_UID}..{FIRST_UID + UID_COUNT - 1}"
        )

    def release(self) -> None:
        """Give the uid back."""
        os.close(self.fd)


class LeasedWorker(Worker):
    """A worker started by `command(fd, uid)`: `uid` a leased unprivileged uid as root, else 0."""

    def __init__(self, command: Callable[[int, int], list[str]], env: Mapping[str, str]) -> None:
        self.lease: UidLease | None = UidLease() if os.geteuid() == 0 else None
        uid = self.lease.uid if self.lease else 0
        self.uid = self.lease.uid if self.lease else None  # the worker's own uid, when leased
        try:
            super().__init__(lambda fd: command(fd, uid), env)
        except BaseException:
            self._give_back()
            raise

    def _give_back(self) -> None:
        if self.lease:
            self.lease.release()
            self.lease = None

    def destroy(self) -> None:
        """Kill the worker and give its uid back."""
        super().destroy()
        self._give_back()
