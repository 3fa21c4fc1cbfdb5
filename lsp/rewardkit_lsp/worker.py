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

import os
import queue
import sys
import threading
import traceback
from typing import IO, Any

from rewardkit_lsp import memory
from rewardkit_lsp.ipc import read_message, write_message

IDLE_SECONDS = 1.0
"""Without a request for this long, the process collects garbage."""

WARM_UP = """from rewardkit import reward


@reward(name="warm_up")
def warm_up(final_response: str, answr: str) -> dict:
    return {"score": 1}
"""
"""A module for a first analysis at start-up: the engine's lazy set-up happens before any edit."""


def _read_requests(stream: IO[bytes], requests: queue.SimpleQueue[Any]) -> None:
    """Feed requests to the main thread; exit the process at once when the server is gone."""
    try:
        while True:
            requests.put(read_message(stream))
    except (EOFError, OSError, ValueError):
        pass
    os._exit(0)


def _warm_up() -> None:
    from rewardkit.checks import CheckConfig, ModuleAnalyzer, TaskField

    config = CheckConfig(task_fields={"answer": TaskField("answer", "pyproject")})
    ModuleAnalyzer().analyze(WARM_UP, None, config)


def serve(stdin: IO[bytes], stdout: IO[bytes]) -> int:
    """Answer requests until the protocol process closes the pipe."""
    from rewardkit_lsp.analysis import AnalysisService

    lock = threading.Lock()

    def send(message: Any) -> None:
        with lock:
            write_message(stdout, message)

    service = AnalysisService(lambda kind, payload: send((None, kind, payload)))
    _warm_up()
    memory.freeze()
    requests: queue.SimpleQueue[Any] = queue.SimpleQueue()
    threading.Thread(
        target=_read_requests, args=(stdin, requests), name="rewardkit-requests", daemon=True
    ).start()
    collected = True
    while True:
        try:
            timeout = 0 if service.has_background_work else None if collected else IDLE_SECONDS
            request = requests.get(timeout=timeout) if timeout != 0 else requests.get_nowait()
        except queue.Empty:
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
        memory.freeze()


def main() -> int:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must never corrupt the message stream
    return serve(stdin, stdout)


if __name__ == "__main__":
    raise SystemExit(main())
