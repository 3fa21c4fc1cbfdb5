"""Reading the client's byte stream (stdio or a socket) with :class:`~rewardkit_lsp.framing.FrameParser`.

pygls reads each header line and each body through its thread pool and gives up on malformed
frames; here the event loop reads stdin itself where it can (POSIX pipes, sockets, terminals:
no thread hand-over on the edit path), else one thread does, and feeds raw chunks to the parser,
handing every complete message, or problem, to the server in one call.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import sys
import threading
from collections.abc import Callable
from typing import IO, Any

from rewardkit_lsp.framing import FrameParser, FrameProblem

Deliver = Callable[[list[Any | FrameProblem]], None]

CHUNK_BYTES = 1 << 16


class _FrameProtocol(asyncio.Protocol):
    """An asyncio protocol feeding the frame parser."""

    def __init__(self, deliver: Deliver, on_end: Callable[[], None]) -> None:
        self.parser = FrameParser()
        self.deliver = deliver
        self.on_end = on_end

    def data_received(self, data: bytes) -> None:
        items = self.parser.feed(data)
        if items:
            self.deliver(items)

    def eof_received(self) -> bool:
        self.on_end()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.on_end()


THREADED_IO = "REWARDKIT_LSP_THREADED_IO"
"""Environment variable: set to 1, pipes are read and written by threads, as where the event loop
cannot wait on them (Windows); the tests use it to run that path on POSIX too."""


def threaded_io() -> bool:
    """Whether pipes are served by threads rather than by the event loop."""
    return os.name != "posix" or os.environ.get(THREADED_IO) == "1"


def _loop_can_read(stream: IO[bytes]) -> bool:
    """Whether the event loop can read ``stream`` directly: a POSIX pipe, socket or terminal that
    is not also stdout (making it non-blocking would make stdout's writes non-blocking too)."""
    if threaded_io():
        return False
    try:
        status = os.fstat(stream.fileno())
        if stat.S_ISREG(status.st_mode):
            return False
        return not os.path.samestat(status, os.fstat(sys.stdout.fileno()))
    except (AttributeError, OSError, ValueError):
        return False


async def read_stdio(stream: IO[bytes], deliver: Deliver, on_end: Callable[[], None]) -> None:
    """Start reading ``stream``: on the event loop when possible, else on a daemon thread."""
    loop = asyncio.get_running_loop()
    if _loop_can_read(stream):
        with contextlib.suppress(ValueError, OSError):
            await loop.connect_read_pipe(lambda: _FrameProtocol(deliver, on_end), stream)
            return
    _start_reader_thread(stream, loop, deliver, on_end)


def _start_reader_thread(
    stream: IO[bytes], loop: asyncio.AbstractEventLoop, deliver: Deliver, on_end: Callable[[], None]
) -> None:
    try:
        descriptor = stream.fileno()
        read: Callable[[int], bytes] = lambda size: os.read(descriptor, size)  # noqa: E731
    except (AttributeError, OSError, ValueError):
        # (Unbuffered reads of the descriptor otherwise: a daemon thread blocked in a buffered
        # read aborts the interpreter at exit, as it holds the buffer's lock.)
        read = getattr(stream, "read1", stream.read)

    def run() -> None:
        parser = FrameParser()
        while True:
            try:
                data = read(CHUNK_BYTES)
            except (OSError, ValueError):
                data = b""
            if not data:
                break
            items = parser.feed(data)
            if items:
                loop.call_soon_threadsafe(deliver, items)
        with contextlib.suppress(RuntimeError):  # the loop already closed (the server exited)
            loop.call_soon_threadsafe(on_end)

    threading.Thread(target=run, name="rewardkit-stdin", daemon=True).start()


async def read_stream(reader: asyncio.StreamReader, deliver: Deliver) -> None:
    """Feed an asyncio stream (a TCP connection) to a parser until it ends."""
    parser = FrameParser()
    while data := await reader.read(CHUNK_BYTES):
        items = parser.feed(data)
        if items:
            deliver(items)
