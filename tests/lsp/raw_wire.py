"""A client that writes raw bytes to the real server's stdin: for frames no LSP client would send."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsp_harness import SERVER_COMMAND, WAIT_LIMIT


def frame(
    message: dict[str, Any], *, header: bytes = b"Content-Length", newline: bytes = b"\r\n"
) -> bytes:
    """One well-formed frame (length in bytes), with a chosen header spelling and line end."""
    body = json.dumps(message).encode()
    return header + b": %d" % len(body) + newline + newline + body


class RawServer:
    """The server over stdio; every message it sends is parsed into :attr:`received`."""

    def __init__(self, command: list[str] | None = None, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            command or SERVER_COMMAND,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.received: queue.Queue[dict[str, Any]] = queue.Queue()
        self.log: list[dict[str, Any]] = []
        self.stderr: list[bytes] = []
        """What the server wrote to stderr (complete once it exited: see :meth:`stderr_text`)."""
        threading.Thread(target=self._read, daemon=True).start()
        self._stderr_reader = threading.Thread(target=self._drain_stderr, daemon=True)
        self._stderr_reader.start()

    def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr.append(line)

    def stderr_text(self) -> str:
        """Everything the server wrote to stderr (waits for the server to exit)."""
        self.process.wait(timeout=WAIT_LIMIT)
        self._stderr_reader.join(timeout=WAIT_LIMIT)
        return b"".join(self.stderr).decode(errors="replace")

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    return
                if not line.strip():
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            assert length is not None
            self.received.put(json.loads(stream.read(length)))

    def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def request(self, request_id: int, method: str, params: Any) -> bytes:
        return frame({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})

    def _next(self, wanted: Callable[[dict[str, Any]], bool], what: str) -> dict[str, Any]:
        """The next message ``wanted`` accepts (answering the server's own requests on the way)."""
        while True:
            try:
                message = self.received.get(timeout=WAIT_LIMIT)
            except queue.Empty:
                raise AssertionError(f"no {what}") from None
            self.log.append(message)
            if "method" in message and "id" in message:  # a request from the server
                self.send(frame({"jsonrpc": "2.0", "id": message["id"], "result": None}))
            elif wanted(message):
                return message

    def answer_to(self, request_id: Any) -> dict[str, Any]:
        """The server's response to ``request_id``."""
        return self._next(
            lambda m: "method" not in m and m.get("id") == request_id,
            f"answer to request {request_id!r}",
        )

    def notification(self, method: str) -> dict[str, Any]:
        """The next notification ``method`` from the server."""
        return self._next(lambda m: m.get("method") == method, f"{method} notification")

    def initialize(self, root: Path, capabilities: dict[str, Any] | None = None) -> None:
        self.send(
            self.request(
                1,
                "initialize",
                {"processId": None, "rootUri": root.as_uri(), "capabilities": capabilities or {}},
            )
        )
        assert "result" in self.answer_to(1)
        self.send(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))

    def close(self) -> int:
        """Stop the server (if still running); its exit status."""
        if self.process.poll() is None:
            self.process.kill()
        return self.process.wait(timeout=WAIT_LIMIT)


def hover_params(uri: str, line: int = 0, character: int = 0) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}
