"""The server's memory after documents close (issue 27): nothing per notification or per closed
document is kept, and nothing long-lived is made among the documents' objects, so the idle
collection gives the memory back, on Python's own allocator (the default) and on glibc's
(``PYTHONMALLOC=malloc``). The real server over stdio; memory read from /proc, never time."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from raw_wire import RawServer, frame

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads the server's memory from /proc (Linux)"
)

DOCUMENTS = 800
MODULE = """from rewardkit import reward


@reward(name="qa")
def qa_{index}(final_response: str, answr: str) -> float:
    value = len(final_response) * {index}
    return float(value > 0)
"""


def resident_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def notify(server: RawServer, method: str, params: object) -> None:
    server.send(frame({"jsonrpc": "2.0", "method": method, "params": params}))


def open_and_close(server: RawServer, uris: list[str], request_id: int) -> float:
    """Open every document, wait for each one's diagnostics, close them all; the resident
    memory with all of them open."""
    for index, uri in enumerate(uris):
        notify(
            server,
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
    published: set[str] = set()
    while len(published) < len(uris):
        published.add(server.notification("textDocument/publishDiagnostics")["params"]["uri"])
    opened = resident_mb(server.process.pid)
    for uri in uris:
        notify(server, "textDocument/didClose", {"textDocument": {"uri": uri}})
    server.send(
        server.request(
            request_id,
            "textDocument/hover",
            {"textDocument": {"uri": uris[0]}, "position": {"line": 0, "character": 0}},
        )
    )
    server.answer_to(request_id)  # answered after every close
    return opened


def settled_mb(pid: int) -> float:
    """The resident memory once the idle collection ran (it stops falling)."""
    before, now = float("inf"), resident_mb(pid)
    while now < before - 0.5:
        time.sleep(3)  # the server collects after two quiet seconds
        before, now = now, resident_mb(pid)
    return now


@pytest.mark.parametrize("allocator", ["pymalloc", "malloc"])
def test_memory_falls_back_after_every_document_closes(tmp_path: Path, allocator: str) -> None:
    server = RawServer(env={**os.environ, "PYTHONMALLOC": allocator})
    try:
        server.initialize(tmp_path)
        pid = server.process.pid
        uris = [(tmp_path / f"m{index:04d}.py").as_uri() for index in range(DOCUMENTS)]
        open_and_close(server, uris[:50], 2)  # what the first analyses set up for good
        time.sleep(3)
        start = settled_mb(pid)
        opened = open_and_close(server, uris, 3)
        assert opened - start > 10, (start, opened)  # the documents took memory
        deadline = time.monotonic() + 300  # a hang guard on a busy machine, not a timing
        while (now := resident_mb(pid)) - start > 0.4 * (opened - start):
            assert time.monotonic() < deadline, (start, opened, now)
            time.sleep(0.5)
    finally:
        server.close()
