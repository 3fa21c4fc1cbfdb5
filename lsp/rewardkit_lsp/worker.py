"""The analysis process: the checks engine, off the language server's event loop.

The protocol process starts it (``python -m rewardkit_lsp.worker``) before importing pygls, so
importing libcst and the engine happens on another core while the protocol side starts: neither
``initialize`` nor the first diagnostics wait for it. It also keeps the engine's heap and its
garbage collections out of the process that reads the client's messages, and a crash of the
parser cannot take the language server down (the server starts a new analysis process).

Requests arrive on stdin as ``(id, kind, payload)`` and are answered on stdout as
``(id, "ok" | "error", result)``; ``(None, kind, payload)`` are unsolicited messages (publish
diagnostics of other documents after the workspace scan, warnings). Between requests the
process reads the workspace's files (RK401 across files) and collects garbage when idle.
"""

from __future__ import annotations

import collections
import os
import queue
import select
import sys
import threading
import time
import traceback
from typing import IO, Any

from rewardkit_lsp import memory
from rewardkit_lsp.analysis import AnalysisService
from rewardkit_lsp.ipc import MessageBuffer, encode_message, read_message
from rewardkit_lsp.transport import threaded_io

IDLE_SECONDS = 0.5
"""Without a request for this long, the process reads the workspace's files (one per step, so a
request waits for one file at most), then collects garbage. Open documents come first."""

WARM_UP = """from rewardkit import reward


@reward(name="warm_up")
def warm_up(final_response: str, answr: str) -> dict:
    return {"score": 1}
"""
"""A module for a first analysis at start-up: the engine's lazy set-up happens before any edit."""


class _Ended(Exception):
    """The protocol process closed the pipe: the server is gone."""


class _SelectRequests:
    """Requests read in this thread, waiting with ``select`` (POSIX pipes)."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._descriptor = stream.fileno()
        self._buffer = MessageBuffer()
        self._ready: collections.deque[Any] = collections.deque()

    def get(self, timeout: float | None) -> Any:
        """The next request; ``None`` after ``timeout`` seconds without one."""
        while not self._ready:
            readable, _, _ = select.select([self._descriptor], [], [], timeout)
            if not readable:
                return None
            data = os.read(self._descriptor, 1 << 20)
            if not data:
                raise _Ended
            self._ready.extend(self._buffer.feed(data))
        return self._ready.popleft()


class _ThreadRequests:
    """Requests read by a thread (where pipes cannot be waited on with ``select``)."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: IO[bytes]) -> None:
        try:
            while True:
                self._queue.put(read_message(stream))
        except (EOFError, OSError, ValueError):
            self._queue.put(_Ended)

    def get(self, timeout: float | None) -> Any:
        try:
            request = self._queue.get(timeout=timeout) if timeout != 0 else self._queue.get_nowait()
        except queue.Empty:
            return None
        if request is _Ended:
            raise _Ended
        return request


def _warm_up() -> None:
    from rewardkit.checks import CheckConfig, ModuleAnalyzer, TaskField

    config = CheckConfig(task_fields={"answer": TaskField("answer", "pyproject")})
    ModuleAnalyzer().analyze(WARM_UP, None, config)


def serve(stdin: IO[bytes], stdout: IO[bytes]) -> int:
    """Answer requests until the protocol process closes the pipe."""
    descriptor = stdout.fileno()

    def send(message: Any) -> None:
        data = encode_message(message)
        while data:
            data = data[os.write(descriptor, data) :]

    service = AnalysisService(lambda kind, payload: send((None, kind, payload)))
    _warm_up()
    memory.freeze()
    requests = _ThreadRequests(stdin) if threaded_io() else _SelectRequests(stdin)
    collected = True
    last_request = time.monotonic()
    while True:
        idle_at = last_request + IDLE_SECONDS
        if service.has_background_work:
            timeout: float | None = max(0.0, idle_at - time.monotonic())
        else:
            timeout = None if collected else max(0.0, idle_at - time.monotonic())
        try:
            request = requests.get(timeout)
        except _Ended:
            return 0
        if request is None:  # idle: background work, one step at a time, then a collection
            if service.has_background_work:
                service.background_step()
            else:
                memory.collect_now()
                collected = True
            continue
        collected = False
        request_id, kind, payload = request
        try:
            reply = (request_id, "ok", service.handle(kind, payload))
        except Exception:
            reply = (request_id, "error", traceback.format_exc())
        send(reply)
        memory.settle()
        last_request = time.monotonic()


def main() -> int:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must never corrupt the message stream
    return serve(stdin, stdout)


if __name__ == "__main__":
    raise SystemExit(main())
