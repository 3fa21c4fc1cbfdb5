"""How ``execution="process"`` workers start: from a fork server of rewardkit's own, never
importing the caller's ``__main__``, and stopped with SIGKILL when SIGTERM is not enough.

``multiprocessing`` re-runs the main script in each new process (spawn does, and so does the
default fork server, which preloads ``__main__``): a training script without
``if __name__ == "__main__":`` (TRL's quick-start) would load its model and start training again
in every worker. The processes of :func:`worker_context` fork from a fork server started for
rewardkit (a clean, single-threaded process that imports only the modules it is told to
preload), and the data each one is started with says nothing about ``__main__``. A reward
defined in ``__main__`` therefore cannot run in them: ``reward_processes`` refuses it before any
call, saying how to fix it.

Their ``terminate()`` sends SIGTERM, then SIGKILL after :data:`TERM_GRACE_SECONDS`: a reward that
ignores SIGTERM is gone within that grace of its timeout (pebble alone waits 3 s, blocking every
other call of the pool meanwhile). Where there is no fork server (Windows), workers are spawned
as ``multiprocessing`` does.
"""

from __future__ import annotations

import io
import multiprocessing
import os
import threading
from collections.abc import Sequence
from typing import Any

TERM_GRACE_SECONDS = 0.5
"""How long a worker asked to stop (SIGTERM) may take before it is killed (SIGKILL)."""

HAS_FORK_SERVER = "forkserver" in multiprocessing.get_all_start_methods()


def without_main(data: dict[str, Any]) -> dict[str, Any]:
    """``multiprocessing``'s preparation data for a child, without the order to run ``__main__``."""
    data.pop("init_main_from_path", None)
    data.pop("init_main_from_name", None)
    return data


class _Server:
    """This process's fork server for workers (started on first use, forgotten after a fork)."""

    lock = threading.Lock()
    server: Any = None
    preload: tuple[str, ...] = ()

    @classmethod
    def get(cls) -> Any:
        with cls.lock:
            if cls.server is None:
                from multiprocessing import forkserver

                cls.server = forkserver.ForkServer()
                cls.server.set_forkserver_preload(list(cls.preload))
            return cls.server

    @classmethod
    def forget(cls) -> None:
        """In a forked child: the parent's server is the parent's (its pipes end with it)."""
        cls.lock = threading.Lock()
        cls.server = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_Server.forget)


if HAS_FORK_SERVER:
    from multiprocessing import context, forkserver, popen_forkserver, reduction, spawn, util

    class WorkerPopen(popen_forkserver.Popen):  # type: ignore[misc]
        """``popen_forkserver.Popen`` on rewardkit's fork server, with start-up data that omits
        ``__main__`` (the rest as the standard library's ``_launch`` does it)."""

        def _launch(self, process_obj: Any) -> None:
            prep_data = without_main(spawn.get_preparation_data(process_obj._name))
            buf = io.BytesIO()
            context.set_spawning_popen(self)
            try:
                reduction.dump(prep_data, buf)
                reduction.dump(process_obj, buf)
            finally:
                context.set_spawning_popen(None)
            self.sentinel, w = _Server.get().connect_to_new_process(self._fds)
            parent_w = os.dup(w)  # the child's sentinel of this process, kept as the stdlib does
            self.finalizer = util.Finalize(self, util.close_fds, (parent_w, self.sentinel))
            with open(w, "wb", closefd=True) as f:
                f.write(buf.getbuffer())
            self.pid = forkserver.read_signed(self.sentinel)

    class WorkerProcess(context.ForkServerProcess):  # type: ignore[misc,name-defined]
        """A process of rewardkit's fork server whose ``terminate()`` ends in SIGKILL."""

        @staticmethod
        def _Popen(process_obj: Any) -> Any:  # multiprocessing's name
            return WorkerPopen(process_obj)

        def terminate(self) -> None:
            """SIGTERM, then SIGKILL if the process is still there after ``TERM_GRACE_SECONDS``."""
            super().terminate()
            self.join(TERM_GRACE_SECONDS)
            if self.exitcode is None:
                self.kill()

    class WorkerContext(context.ForkServerContext):  # type: ignore[misc,name-defined]
        """The ``multiprocessing`` context whose ``Process`` is ``WorkerProcess``."""

        Process = WorkerProcess


def worker_context(preload: Sequence[str] = ()) -> Any:
    """A ``multiprocessing`` context whose processes never import the caller's ``__main__``
    (see the module docstring); ``preload``: modules the fork server imports once, so that
    each worker starts with them (fixed by the first call in a process)."""
    if not HAS_FORK_SERVER:
        return multiprocessing.get_context("spawn")
    with _Server.lock:
        if _Server.server is None:
            _Server.preload = tuple(preload)
    return WorkerContext()


__all__ = ["HAS_FORK_SERVER", "TERM_GRACE_SECONDS", "without_main", "worker_context"]
