"""The language server's resident memory as documents open and close (issue 27, item 12).

Starts ``python -m rewardkit_lsp`` over stdio in a scratch workspace of N reward modules that
share one name (RK401 across all of them), opens every one, waits for their diagnostics, closes
every one, and lets the server sit idle. Prints the server's RSS (from /proc) at start, with all
open, right after closing and after the idle collection: the last should fall back near the start.

    python benchmarks/lsp_memory.py --documents 1500
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

MODULE = """from rewardkit import reward


@reward(name="qa")
def qa_{index}(final_response: str, answr: str) -> float:
    # a comment line to give the module some body
    value = len(final_response) * {index}
    return float(value > 0)
"""


class Server:
    """The server over stdio: requests and notifications out, every message in."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "rewardkit_lsp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.published: dict[str, int] = {}
        self.replies: dict[int, Any] = {}
        self._next_id = 0
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = 0
            while (line := stream.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not line:
                return
            message = json.loads(stream.read(length))
            if message.get("method") == "textDocument/publishDiagnostics":
                uri = message["params"]["uri"]
                self.published[uri] = self.published.get(uri, 0) + 1
            elif "id" in message and "method" in message:
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            elif "id" in message:
                self.replies[message["id"]] = message.get("result")

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        assert self.process.stdin is not None
        with self._lock:  # the reader thread answers the server's requests
            self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.process.stdin.flush()

    def request(self, method: str, params: Any) -> Any:
        self._next_id += 1
        ident = self._next_id
        self.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        while ident not in self.replies:
            time.sleep(0.01)
        return self.replies.pop(ident)

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmRSS")


def wait_for(condition: Any, limit: float = 600.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the server did not get there in time")
        time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=1500)
    parser.add_argument(
        "--idle",
        type=float,
        default=15.0,
        help="seconds idle before opening (the workspace scan ends) and after closing",
    )
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        uris = []
        for index in range(arguments.documents):
            path = root / f"m{index:05d}.py"
            path.write_text(MODULE.format(index=index), encoding="utf-8")
            uris.append(path.as_uri())
        server = Server()
        server.request(
            "initialize",
            {
                "processId": None,
                "rootUri": root.as_uri(),
                "capabilities": {},
                "initializationOptions": {"rewardkit": {"debounceMs": 0}},
            },
        )
        server.notify("initialized", {})
        time.sleep(arguments.idle)
        start = server.rss_mb()
        for index, uri in enumerate(uris):
            server.notify(
                "textDocument/didOpen",
                {
                    "textDocument": {
                        "uri": uri,
                        "languageId": "python",
                        "version": 1,
                        "text": MODULE.format(index=index),
                    }
                },
            )
        wait_for(lambda: all(uri in server.published for uri in uris))
        time.sleep(arguments.idle)
        opened = server.rss_mb()
        for uri in uris:
            server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        server.request(
            "textDocument/hover",
            {"textDocument": {"uri": uris[0]}, "position": {"line": 0, "character": 0}},
        )
        closed = server.rss_mb()
        time.sleep(arguments.idle)
        idle = server.rss_mb()
        server.request("shutdown", None)
        server.notify("exit", None)
        server.process.wait(timeout=60)
    print(
        f"documents {arguments.documents}: RSS start {start:.1f} MB, all open {opened:.1f} MB, "
        f"just closed {closed:.1f} MB, idle after closing {idle:.1f} MB "
        f"(kept {idle - start:+.1f} MB of {opened - start:+.1f} MB)"
    )


if __name__ == "__main__":
    main()
