"""The protocol process's side of the analysis process: start it early, talk to it, restart it.

On POSIX the event loop reads and writes the pipes itself (asyncio pipe transports: no thread
hand-over on the edit path, and a large document never blocks the loop on a full pipe);
elsewhere a writer thread and a reader thread do. If the analysis process dies (a crash in a
native parser, a kill), pending requests fail with :class:`WorkerGone`, a new one is started,
and the server re-checks its documents in it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from rewardkit_lsp.ipc import MessageBuffer, encode_message, read_message
from rewardkit_lsp.transport import threaded_io

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
    """Start the analysis process (stderr is shared: its log goes where the server's goes).

    On POSIX it gets its own session: the terminal's signals are the server's business (the
    process ends when its stdin closes), and where the kernel shares CPU by session (Linux
    autogroups) its start-up work competes as its own program instead of halving the share of
    the process that must answer ``initialize``.
    """
    return subprocess.Popen(
        list(command),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        bufsize=0,
        start_new_session=os.name == "posix",
    )


class _Answers(asyncio.Protocol):
    """The analysis process's stdout, read by the event loop."""

    def __init__(self, client: WorkerClient, generation: int) -> None:
        self.client = client
        self.generation = generation
        self.buffer = MessageBuffer()

    def data_received(self, data: bytes) -> None:
        for message in self.buffer.feed(data):
            self.client._deliver(message)

    def connection_lost(self, exc: Exception | None) -> None:
        self.client._ended(self.generation)


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
        self._write: Callable[[bytes], None] | None = None
        self._backlog: list[bytes] = []
        """Requests made before the pipes were connected."""
        self._deaths: list[float] = []
        self._closing = False
        self._generation = 0

    @property
    def epoch(self) -> int:
        """Changes whenever a new analysis process takes over (it knows no document yet)."""
        return self._generation

    async def start(self) -> None:
        """Adopt the process started early (or start one) and connect its pipes to the loop."""
        self._loop = asyncio.get_running_loop()
        if self._process is None:
            self._process = spawn(self.command)
        await self._connect(self._process)

    async def _connect(self, process: subprocess.Popen[bytes]) -> None:
        loop = self._loop
        assert loop is not None
        assert process.stdin is not None
        assert process.stdout is not None
        self._generation += 1
        generation = self._generation
        if not threaded_io():
            transport, _ = await loop.connect_write_pipe(asyncio.BaseProtocol, process.stdin)
            await loop.connect_read_pipe(lambda: _Answers(self, generation), process.stdout)
            write: Callable[[bytes], None] = transport.write  # type: ignore[attr-defined]
        else:
            outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
            threading.Thread(target=self._writer, args=(process, outbox), daemon=True).start()
            threading.Thread(target=self._reader, args=(process, generation), daemon=True).start()
            write = outbox.put
        if generation != self._generation:
            return
        self._write = write
        backlog, self._backlog = self._backlog, []
        for data in backlog:
            write(data)

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
        data = encode_message((request_id, kind, payload))
        if self._write is None:
            self._backlog.append(data)
        else:
            self._write(data)
        return future

    # -- threads (where the loop cannot wait on pipes) --------------------------------------

    def _writer(
        self, process: subprocess.Popen[bytes], outbox: queue.SimpleQueue[bytes | None]
    ) -> None:
        assert process.stdin is not None
        try:
            while (data := outbox.get()) is not None:
                process.stdin.write(data)
        except (OSError, ValueError):
            pass  # the reader sees the process end and reports it
        finally:
            with contextlib.suppress(OSError):
                process.stdin.close()

    def _reader(self, process: subprocess.Popen[bytes], generation: int) -> None:
        assert process.stdout is not None
        assert self._loop is not None
        try:
            while True:
                message = read_message(process.stdout)
                self._loop.call_soon_threadsafe(self._deliver, message)
        except (EOFError, OSError, ValueError):
            pass
        with contextlib.suppress(RuntimeError):  # the event loop is closed: the server is exiting
            self._loop.call_soon_threadsafe(self._ended, generation)

    # -- answers and deaths -------------------------------------------------------------------

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

    def _ended(self, generation: int) -> None:
        """The analysis process's output ended: it is gone (or going)."""
        if generation != self._generation or self._closing or self._loop is None:
            return
        self._generation += 1  # whatever else reports this death is ignored
        self._write = None
        process = self._process
        code = process.poll() if process is not None else None
        if process is not None and code is None:
            process.kill()
            code = process.wait()
        pending, self._pending = self._pending, {}
        first = min(pending, default=None)
        for request_id, future in pending.items():
            if not future.done():
                future.set_exception(
                    WorkerGone(
                        f"the analysis process exited (status {code})",
                        culprit=request_id == first,
                    )
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
        self._loop.create_task(self._connect(self._process))
        self.on_restart(f"the analysis process exited (status {code}); started a new one")

    def close(self, timeout: float = 2.0) -> None:
        """Stop the analysis process (closing its stdin ends it; killed if it lingers)."""
        self._closing = True
        process = self._process
        if process is None:
            return
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
