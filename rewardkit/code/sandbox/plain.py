"""``sandbox="none"``: programs as plain subprocesses of a warm interpreter, for trusted code only.

No isolation at all (the caller's uid, files and network); each job gets a temp work dir and its
process group is killed after it. Made only when asked for by name, with a RuntimeWarning.
"""

from __future__ import annotations

import warnings

from rewardkit.code.sandbox.bwrap import ENV, ZYGOTE, interpreter
from rewardkit.code.sandbox.workers import PooledSandbox, Worker

__all__ = ["PlainSandbox"]


def _command(fd: int) -> list[str]:
    executable, _ = interpreter()
    return [executable, "-I", "-S", "-B", str(ZYGOTE), str(fd), "-1"]


class PlainSandbox(PooledSandbox):
    """No sandbox: the program runs with the caller's rights (RuntimeWarning when made)."""

    def __init__(self, workers: int = 1) -> None:
        warnings.warn(
            'sandbox="none" runs programs unsandboxed, with this process\'s rights: only for trusted code',
            RuntimeWarning,
            stacklevel=3,
        )
        super().__init__("none", lambda _slot: Worker(_command, ENV), workers)
