"""The protocol process's side of the analysis process: start it early, talk to it, restart it.

Requests are written by a thread (a large document never blocks the event loop on a full pipe)
and answers are read by another, then handed to the event loop. If the analysis process dies
(a crash in a native parser, a kill), pending requests fail with :class:`WorkerGone`, a new one
is started, and the server re-checks its documents in it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from rewardkit_lsp.ipc import read_message, write_message

logger = logging.getLogger(__name__)

WORKER_COMMAND = (sys.executable, "-m", "rewardkit_lsp.worker")
RESTARTS_PER_MINUTE = 5
"""More deaths than this within a minute: the analysis process is not started again."""


class WorkerGone(RuntimeError):
    """The analysis process died (or could not start) while a request was pending."""

    def __init__(self, message: str, *, culprit: bool = False) -> None:
        super().__init__(message)
        self.culprit = culprit
        """True for the request it was answering when it died (requests are answered in order)."""


class WorkerError(RuntimeError):
    """The analysis process raised while answering; the message holds its traceback."""


def spawn(command: Sequence[str] = WORKER_COMMAND) -> subprocess.Popen[bytes]:
    """Start the analysis process (stderr is shared: its log goes where the server's goes)."""
    return subprocess.Popen(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)


class WorkerClient:
    """Requests to the analysis process as awaitables; unsolicited messages to ``on_notify``."""

    def __init__(
        self,
        command: Sequence[str] = WORKER_COMMAND,
        process: subprocess.Popen[bytes] | None = None,
    ) -> None:
        self.command = tuple(command)
        self.on_notify: Callable[[str, Any], None] = lambda kind, payload: None
        self.on_restart: Callable[[str], None] = lambda reason: None
        self._process = process
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._ids = itertools.count(1)
        self._outbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._deaths: list[float] = []
        self._closing = False
        self._generation = 0

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Adopt the process started early (or start one) and begin reading and writing."""
        self._loop = loop
        if self._process is None:
            self._process = spawn(self.command)
        self._begin(self._process)

    def _begin(self, process: subprocess.Popen[bytes]) -> None:
        self._generation += 1
        generation = self._generation
        outbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._outbox = outbox
        threading.Thread(
            target=self._write, args=(process, outbox), name="rewardkit-worker-out", daemon=True
        ).start()
        threading.Thread(
            target=self._read, args=(process, generation), name="rewardkit-worker-in", daemon=True
        ).start()

    def request(self, kind: str, **payload: Any) -> asyncio.Future[Any]:
        """Send a request; the future resolves with the answer (or fails, see the module doc)."""
        assert self._loop is not None
        future: asyncio.Future[Any] = self._loop.create_future()
        if self._process is None:
            future.set_exception(WorkerGone("the analysis process is not running"))
            return future
        request_id = next(self._ids)
        self._pending[request_id] = future
        future.add_done_callback(lambda _: self._pending.pop(request_id, None))
        self._outbox.put((request_id, kind, payload))
        return future

    def _write(self, process: subprocess.Popen[bytes], outbox: queue.SimpleQueue[Any]) -> None:
        assert process.stdin is not None
        try:
            while (message := outbox.get()) is not None:
                write_message(process.stdin, message)
        except (OSError, ValueError):
            pass  # the reader sees the process end and reports it
        finally:
            with contextlib.suppress(OSError):
                process.stdin.close()

    def _read(self, process: subprocess.Popen[bytes], generation: int) -> None:
        assert process.stdout is not None
        assert self._loop is not None
        try:
            while True:
                message = read_message(process.stdout)
                self._loop.call_soon_threadsafe(self._deliver, message)
        except (EOFError, OSError, ValueError):
            pass
        except Exception:  # an answer that cannot be unpickled: treat the process as broken
            logger.exception("unreadable answer from the analysis process")
            process.kill()
        code = process.wait()
        with contextlib.suppress(RuntimeError):  # the event loop is closed: the server is exiting
            self._loop.call_soon_threadsafe(self._died, generation, code)

    def _deliver(self, message: tuple[int | None, str, Any]) -> None:
        request_id, status, result = message
        if request_id is None:
            self.on_notify(status, result)
            return
        future = self._pending.pop(request_id, None)
        if future is None or future.done():
            return
        if status == "ok":
            future.set_result(result)
        else:
            future.set_exception(WorkerError(result))

    def _died(self, generation: int, code: int | None) -> None:
        if generation != self._generation or self._closing:
            return
        pending, self._pending = self._pending, {}
        for request_id, future in sorted(pending.items()):
            if not future.done():
                culprit = request_id == min(pending)
                future.set_exception(
                    WorkerGone(f"the analysis process exited (status {code})", culprit=culprit)
                )
        now = time.monotonic()
        self._deaths = [t for t in self._deaths if now - t < 60] + [now]
        if len(self._deaths) > RESTARTS_PER_MINUTE:
            self._process = None
            self.on_restart(
                f"the analysis process exited (status {code}) {len(self._deaths)} times within "
                "a minute; checks are off until the server restarts"
            )
            return
        try:
            self._process = spawn(self.command)
        except OSError as error:
            self._process = None
            self.on_restart(f"cannot start the analysis process: {error}")
            return
        self._begin(self._process)
        self.on_restart(f"the analysis process exited (status {code}); started a new one")

    def close(self, timeout: float = 2.0) -> None:
        """Stop the analysis process (closing its stdin ends it; killed if it lingers)."""
        self._closing = True
        process = self._process
        self._outbox.put(None)
        if process is None:
            return
        if self._loop is None and process.stdin is not None:  # never started: no writer thread
            process.stdin.close()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
