"""Reading the client's byte stream (stdio or a socket) with :class:`~rewardkit_lsp.framing.FrameParser`.

pygls reads each header line and each body through its thread pool and gives up on malformed
frames; here one thread (stdio) or one task (TCP) feeds raw chunks to the parser and hands every
complete message, or problem, to the event loop in one call.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Callable
from typing import IO, Any

from rewardkit_lsp.framing import FrameParser, FrameProblem

Deliver = Callable[[list[Any | FrameProblem]], None]

CHUNK_BYTES = 1 << 16


def _raw_reader(stream: IO[bytes]) -> Callable[[int], bytes]:
    """Unbuffered reads of the stream's file descriptor when it has one: a daemon thread blocked
    in a buffered read aborts the interpreter at exit (it holds the buffer's lock)."""
    try:
        descriptor = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return getattr(stream, "read1", stream.read)
    return lambda size: os.read(descriptor, size)


def start_stdio_reader(
    stream: IO[bytes], loop: asyncio.AbstractEventLoop, deliver: Deliver, on_end: Callable[[], None]
) -> threading.Thread:
    """Read ``stream`` on a daemon thread; call ``deliver`` and, at its end, ``on_end`` on ``loop``."""

    def run() -> None:
        parser = FrameParser()
        read = _raw_reader(stream)
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

    thread = threading.Thread(target=run, name="rewardkit-stdin", daemon=True)
    thread.start()
    return thread


async def read_stream(reader: asyncio.StreamReader, deliver: Deliver) -> None:
    """Feed an asyncio stream (a TCP connection) to a parser until it ends."""
    parser = FrameParser()
    while data := await reader.read(CHUNK_BYTES):
        items = parser.feed(data)
        if items:
            deliver(items)
