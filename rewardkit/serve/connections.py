"""Slow and silent clients: a read deadline and a cap on open connections for uvicorn's HTTP protocol.

uvicorn has no deadline for a request's headers (a connection that sends nothing, or half a
request, is kept forever) and no cap that a flood of such connections cannot fill: 1,100
half-open connections exhaust a 1,024-descriptor process and every real request is then reset.
``GuardedHttpProtocol`` (uvicorn's own, httptools or h11, with three hooks) adds:

- a deadline of ``read_timeout`` for a request's headers, from the connection or from the request's
  first byte: a client silent past it is closed, one that sent part of a request gets 408 first
  (the body's deadline is the app's, ``rewardkit.serve.app.Gatekeeper``);
- a cap (``max_connections``, lowered to fit the descriptor limit): a request arriving over it
  first closes the connections idle longest (no request in progress, for at least
  ``EVICT_AFTER`` seconds), else is answered 503 with ``Retry-After``; past the descriptor
  bound a new connection is closed at once.

One ``ConnectionGuard`` per process, made by the app (``connection_guard``) and found by the
protocol (workers of ``--workers`` each build theirs); without it the protocol is uvicorn's.
"""

from __future__ import annotations

import asyncio
import resource
import time
from typing import Any

from uvicorn.protocols.http.auto import AutoHTTPProtocol

from rewardkit.serve.config import ServeConfig

EVICT_AFTER = 1.0
"""Seconds a connection must have been idle (no request in progress) before a newcomer over the
cap may take its place: a real client sends its request within milliseconds of connecting."""

DESCRIPTOR_RESERVE = 64
"""Descriptors kept for what is not a connection (log files, worker pipes, imports)."""

REQUEST_TIMEOUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\nconnection: close\r\n"
    b'content-length: 95\r\n\r\n{"error": {"type": "RequestTimeout", "message": "the request headers did not arrive in time"}}\n'
)


TOO_MANY_CONNECTIONS = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\nconnection: close\r\n"
    b'content-length: 96\r\n\r\n{"error": {"type": "TooManyConnections", "message": "every connection of this worker is busy"}}\n'
)


def raise_descriptor_limit() -> int:
    """Raise this process's soft limit on open files to its hard limit; the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = 1 << 16 if hard == resource.RLIM_INFINITY else hard
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return soft


class ConnectionGuard:
    """The open connections of one process, the ones idle (oldest first), and the cap."""

    def __init__(
        self, max_connections: int, read_timeout: float, descriptors: int | None = None
    ) -> None:
        usable = max(
            32, (descriptors or resource.getrlimit(resource.RLIMIT_NOFILE)[0]) - DESCRIPTOR_RESERVE
        )
        self.bound = usable
        """Past this many, a new connection is closed at once: the process keeps its descriptors."""
        self.cap = min(max_connections, usable // 2)
        """Connections served; between ``cap`` and ``bound`` they wait for idle ones to go, or get 503."""
        self.read_timeout = read_timeout
        self.open = 0
        """Connections counted: open, less those closed for room and not gone yet."""
        self.closing: set[Any] = set()
        self.idle: dict[Any, float] = {}
        """Connections with no request in progress -> since when, oldest first."""
        self.evicted = 0

    def opened(self, connection: Any) -> bool:
        """Count a new connection; ``False``: over the descriptor bound with nobody to evict."""
        self.open += 1
        self.idle[connection] = time.monotonic()
        if self.open > self.bound:  # descriptors run short: the longest idle goes, however recent
            self.evict_one(exclude=connection, min_idle=0.0)
        elif self.open > self.cap:
            self.evict_one(exclude=connection)
        return self.open <= self.bound

    def closed(self, connection: Any) -> None:
        if connection in self.closing:
            self.closing.discard(connection)  # already uncounted when it was evicted
        else:
            self.open -= 1
        self.idle.pop(connection, None)

    def busy(self, connection: Any) -> None:
        self.idle.pop(connection, None)

    def idle_again(self, connection: Any) -> None:
        self.idle.pop(connection, None)
        self.idle[connection] = time.monotonic()

    def evict_one(self, exclude: Any = None, min_idle: float | None = None) -> bool:
        """Close the connection idle longest (at least ``min_idle`` s, default ``EVICT_AFTER``);
        ``False`` if none is."""
        min_idle = EVICT_AFTER if min_idle is None else min_idle
        now = time.monotonic()
        for connection, since in self.idle.items():
            if connection is exclude:
                continue
            if now - since < min_idle:
                return False
            self.idle.pop(connection)
            self.evicted += 1
            self.open -= 1  # its descriptor is freed once the loop closes it, right after
            self.closing.add(connection)
            connection.close_idle()
            return True
        return False

    def admit(self) -> bool:
        """Whether a request may be served now: under the cap, after evicting idle connections."""
        while self.open > self.cap:
            if not self.evict_one():
                return False
        return True


_guard: ConnectionGuard | None = None


def connection_guard(config: ServeConfig) -> ConnectionGuard:
    """This process's guard for ``config`` (the protocol of later connections uses it)."""
    global _guard
    _guard = ConnectionGuard(config.max_connections, config.read_timeout)
    return _guard


class GuardedHttpProtocol(AutoHTTPProtocol):  # type: ignore[misc, valid-type]
    """uvicorn's HTTP protocol with the header deadline and the connection cap (see the module)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.guard = _guard
        self.deadline: asyncio.TimerHandle | None = None
        self.partial = False
        if self.guard is None:
            return
        if not self.guard.opened(self):  # past the descriptor bound, every connection busy
            transport.write(TOO_MANY_CONNECTIONS)
            transport.close()
            return
        self.deadline = self.loop.call_later(self.guard.read_timeout, self.header_deadline)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.guard is not None:
            self.guard.closed(self)
            self.guard = None
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.guard is None:
            return
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:  # headers complete: the app has it
            self.partial = False
            self.guard.busy(self)
            if self.deadline is not None:
                self.deadline.cancel()
                self.deadline = None
        else:
            self.partial = True
            if self.deadline is None and not self.transport.is_closing():
                self.deadline = self.loop.call_later(self.guard.read_timeout, self.header_deadline)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.guard is not None and not self.transport.is_closing():
            self.guard.idle_again(self)

    def header_deadline(self) -> None:
        """The headers did not arrive within ``read_timeout``: free the connection."""
        self.deadline = None
        cycle = self.cycle
        if cycle is None or cycle.response_complete:
            self.close_idle()

    def close_idle(self) -> None:
        """Close this connection, which has no request in progress (408 if it sent part of one)."""
        if self.transport.is_closing():
            return
        if self.partial:
            self.transport.write(REQUEST_TIMEOUT)
        self.transport.close()
