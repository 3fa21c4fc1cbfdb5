"""Fixtures of the serve tests: real `rewardkit serve` processes on free local ports."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

STARTUP_SECONDS = 180.0
"""How long a server may take to answer /health: generous, the machine is shared and busy."""


def free_port() -> int:
    """A TCP port nobody listens on now (the kernel's pick)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until(condition: Callable[[], object], *, timeout: float, what: str, interval: float = 0.1) -> object:
    """Poll ``condition`` until it returns something truthy; fail naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


class ServerProcess:
    """One `rewardkit serve` subprocess; its output goes to ``log`` (shown when a test fails)."""

    def __init__(self, args: list[str], *, workdir: Path, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = workdir / f"server-{self.port}.log"
        command = [sys.executable, "-m", "rewardkit", "serve", *args, "--port", str(self.port), "--app-dir", str(HERE)]
        environment = {**os.environ, **(env or {})}
        with self.log.open("wb") as output:
            self.process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=environment)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def healthy(self) -> bool:
        import httpx

        if self.process.poll() is not None:
            pytest.fail(f"the server exited with {self.process.returncode}:\n{self.output()}")
        try:
            return httpx.get(self.url + "/health", timeout=5).status_code == 200
        except httpx.HTTPError:
            return False

    def wait_ready(self) -> ServerProcess:
        wait_until(self.healthy, timeout=STARTUP_SECONDS, what=f"the server on {self.url} to start", interval=0.2)
        return self

    def stop(self) -> int:
        """SIGTERM, then SIGKILL if it has not drained within a minute; the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(30)
        return self.process.returncode


@pytest.fixture
def markers(tmp_path: Path) -> Path:
    """The directory the test rewards leave their ``started``/``cancelled``/``finished`` marks in."""
    directory = tmp_path / "markers"
    directory.mkdir()
    return directory


def marks(directory: Path, kind: str) -> int:
    return sum(1 for path in directory.iterdir() if path.name.startswith(kind + "-"))


@pytest.fixture
def start_server(tmp_path: Path, markers: Path) -> Iterator[Callable[..., ServerProcess]]:
    """Start `rewardkit serve ARGS...` (ready when returned); every server is stopped at teardown."""
    servers: list[ServerProcess] = []

    def start(*args: str, ready: bool = True) -> ServerProcess:
        server = ServerProcess(list(args), workdir=tmp_path, env={"SERVE_TEST_MARKERS": str(markers)})
        servers.append(server)
        return server.wait_ready() if ready else server

    yield start
    for server in servers:
        server.stop()


class ThreadServer:
    """A served app on uvicorn in a thread of this process (a fresh server in milliseconds, for
    tests that need many): ``with ThreadServer(app) as url: ...``."""

    def __init__(self, app: object) -> None:
        import uvicorn

        self.port = free_port()
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))  # type: ignore[arg-type]
        self.thread = threading.Thread(target=self.server.run, name=f"uvicorn-{self.port}", daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        wait_until(lambda: self.server.started, timeout=STARTUP_SECONDS, what="the in-thread server to start", interval=0.01)
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc_info: object) -> None:
        self.server.should_exit = True
        self.thread.join(60)
