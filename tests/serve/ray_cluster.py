"""A private two-node Ray cluster on this machine, made with `ray start`, for the `--ray` tests.

Never Ray's default port 6379 or /tmp/ray (other tests call a local ``ray.init``): every port is
one the kernel just gave us, the temp dir is a short private one (Ray's socket paths must fit in
107 bytes), and every process of a node carries ``RK_RAY_NODE=<mark>`` in its environment, so a
node can be killed (its raylet and workers, as when a machine dies) and the cluster stopped
without touching any other Ray on the machine. Ray's nodes reach each other at the machine's own
address, as every Ray on it does (Ray replaces 127.0.0.1 by it and refuses a multi-node cluster on
loopback alone); the tests' own requests go to the Serve proxy on 127.0.0.1. The cluster uses Ray's
token authentication with a token of its own (``env``: what a driver needs to join it).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

from conftest import free_port

RAY = str(Path(sys.executable).with_name("ray"))


def processes_marked(mark: str) -> list[int]:
    """Pids of the processes whose environment holds ``RK_RAY_NODE=<mark>``."""
    needle = f"RK_RAY_NODE={mark}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environment = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environment.split(b"\0"):
            found.append(int(entry.name))
    return found


class LocalRayCluster:
    """``ray start --head`` plus ``ray start --address`` nodes, each with its own resources."""

    def __init__(self) -> None:
        self.temp_dir = tempfile.mkdtemp(prefix="rkc-", dir="/tmp")
        self.cluster_id = uuid.uuid4().hex[:8]
        self.port = free_port()
        self.address = ""
        self.marks: list[str] = []
        self.env = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(16)}
        """The environment a process needs to join this cluster (Ray reads the token from it)."""
        self.log = Path(self.temp_dir) / "ray-start.log"

    def _start(self, mark: str, args: list[str], env: dict[str, str]) -> None:
        node_ports = [
            "--node-manager-port", str(free_port()),
            "--object-manager-port", str(free_port()),
            "--dashboard-agent-listen-port", str(free_port()),
            "--dashboard-agent-grpc-port", str(free_port()),
            "--runtime-env-agent-port", str(free_port()),
            "--metrics-export-port", str(free_port()),
        ]  # fmt: skip
        environment = {**os.environ, **self.env, **env, "RK_RAY_NODE": mark, "RAY_USAGE_STATS_ENABLED": "0"}
        self.marks.append(mark)
        with self.log.open("ab") as output:
            started = subprocess.run(
                [RAY, "start", *args, *node_ports, "--object-store-memory", str(80 * 2**20), "--disable-usage-stats"],
                env=environment,
                stdout=output,
                stderr=subprocess.STDOUT,
                check=False,
                timeout=600,
            )
        if started.returncode != 0:  # say what Ray said: the log goes with the temporary folder
            said = self.log.read_text(errors="replace")[-3000:]
            raise RuntimeError(f"ray start {mark} exited {started.returncode}; its output ends:\n{said}")

    def start_head(self, *, num_cpus: int) -> None:
        self._start(
            f"{self.cluster_id}-head",
            [
                "--head", "--port", str(self.port), "--num-cpus", str(num_cpus), "--temp-dir", self.temp_dir,
                "--include-dashboard", "false", "--dashboard-port", str(free_port()),
                "--ray-client-server-port", str(free_port()), "--resources", '{"head_node": 1}',
            ],
            {},
        )
        self.address = (Path(self.temp_dir) / "ray_current_cluster").read_text().strip()

    def add_node(self, name: str, *, num_cpus: int) -> str:
        """Start another node joining the head; its mark (for ``kill_node``)."""
        mark = f"{self.cluster_id}-{name}"
        self._start(
            mark,
            ["--address", self.address, "--num-cpus", str(num_cpus), "--resources", f'{{"{name}": 1}}'],
            {},
        )
        return mark

    def kill_node(self, mark: str) -> int:
        """SIGKILL every process of one node, as if its machine died; how many there were."""
        pids = processes_marked(mark)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return len(pids)

    def stop(self) -> None:
        for mark in reversed(self.marks):
            self.kill_node(mark)
        shutil.rmtree(self.temp_dir, ignore_errors=True)

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""
