"""`rewardkit serve --ray` on a local two-node Ray cluster (`ray start --head` plus `ray start
--address` with its own resources): replicas on both nodes share the requests, and killing one
replica's node loses no accepted request silently."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import ServerProcess, wait_until
from ray_cluster import LocalRayCluster, processes_marked

from rewardkit.serve import RemoteReward

pytestmark = pytest.mark.slow


def _require_ray_serve() -> None:
    try:
        import ray.serve  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("ray[serve] is not installed but CI needs it (the serve extra)")
        pytest.skip("ray[serve] is not installed (pip install 'rewardkit[serve]')")


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[LocalRayCluster, str]]:
    """A head node and a second node, 2 CPUs each; the second node's mark."""
    _require_ray_serve()
    local = LocalRayCluster()
    try:
        local.start_head(num_cpus=2)
        second = local.add_node("second", num_cpus=2)
        yield local, second
    finally:
        local.stop()


@pytest.fixture(scope="module")
def markers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("ray-markers")


@pytest.fixture(scope="module")
def served(cluster: tuple[LocalRayCluster, str], markers: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """Two replicas, one per node (the proxy on the head), of exact_async."""
    local, _ = cluster
    server = ServerProcess(
        [
            "serve_rewards:exact_async", "--ray", "--address", local.address, "--num-replicas", "2",
            "--max-replicas-per-node", "1", "--num-cpus", "0.5", "--timeout", "60",
            "--forward-env", "SERVE_TEST_MARKERS",
        ],
        workdir=tmp_path_factory.mktemp("ray-serve"),
        env={**local.env, "SERVE_TEST_MARKERS": str(markers)},
    )
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


def score(url: str, samples: list[dict[str, Any]], timeout: float = 180) -> httpx.Response:
    return httpx.post(url + "/v1/score", json={"samples": samples}, timeout=timeout)


def node_of(response: httpx.Response) -> str:
    return response.headers["x-rewardkit-worker"].split("/")[0]


def test_requests_spread_over_replicas_on_both_nodes(served: ServerProcess) -> None:
    sample = [{"final_response": "slow:0.2", "answer": "slow:0.2"}]

    def nodes_answering() -> set[str] | None:
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            responses = list(pool.map(lambda _: score(served.url, sample), range(32)))
        assert all(response.status_code == 200 for response in responses)
        assert all(response.json()["results"][0]["reward"] == 1.0 for response in responses)
        nodes = {node_of(response) for response in responses}
        return nodes if len(nodes) == 2 else None

    wait_until(nodes_answering, timeout=300, what="both replicas (one per node) to answer", interval=1)


def _replica_pid_on(served: ServerProcess, mark: str) -> int:
    """The pid of the replica running on the node ``mark`` (from the answers' worker header)."""
    node_pids = set(processes_marked(mark))

    def found() -> int | None:
        for _ in range(16):
            pid = int(httpx.get(served.url + "/health", timeout=30).headers["x-rewardkit-worker"].split("/")[1])
            if pid in node_pids:
                return pid
        return None

    return int(wait_until(found, timeout=120, what="an answer from the second node's replica"))  # type: ignore[arg-type]


def _running(markers: Path, pid: int) -> int:
    """Samples started and not finished in process ``pid`` (from the test reward's marks)."""
    return len(list(markers.glob(f"started-{pid}-*"))) - len(list(markers.glob(f"finished-{pid}-*")))


def test_killing_a_replicas_node_loses_no_accepted_request_silently(
    served: ServerProcess, cluster: tuple[LocalRayCluster, str], markers: Path
) -> None:
    local, second = cluster
    victim = _replica_pid_on(served, second)
    samples = [{"final_response": "slow:8", "answer": "slow:8"}, {"final_response": "7", "answer": "8"}]
    with concurrent.futures.ThreadPoolExecutor(48) as pool:
        pending: list[concurrent.futures.Future[httpx.Response]] = []

        def victim_holds_requests() -> bool:
            # Requests keep coming until the router has given the victim 4 at once: on a busy
            # machine a fixed burst can trickle in too slowly, or mostly to the other replica.
            if _running(markers, victim) >= 4:
                return True
            if len(pending) < 48:
                pending.append(pool.submit(score, served.url, samples))
            return False

        # Kill the second node while its replica holds requests (their samples have started).
        wait_until(victim_holds_requests, timeout=180, what="4 requests at once on the second node", interval=0.2)
        assert local.kill_node(second) > 0
        answers = [future.result() for future in pending]  # every request ends: none hangs
    assert _running(markers, victim) >= 4, "the killed replica held samples it never finished"
    for answer in answers:
        if answer.status_code == 200:  # an answered request is whole and right, wherever it ran
            assert [item["reward"] for item in answer.json()["results"]] == [1.0, 0.0]
        else:  # a lost one says so: a server error the client sees and can retry
            assert answer.status_code >= 500, answer.text
    # RemoteReward retries such failures: after the kill every sample still gets its reward.
    remote = RemoteReward(served.url, "exact_async", backoff=1.0, retries=8)
    outcomes = asyncio.run(remote.score([{"final_response": str(n), "answer": "3"} for n in range(20)]))
    assert [outcome.reward for outcome in outcomes] == [1.0 if n == 3 else 0.0 for n in range(20)]


def test_sigterm_removes_the_application_and_exits(served: ServerProcess) -> None:
    served.process.send_signal(signal.SIGTERM)
    assert served.process.wait(300) == 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # Serve itself stops with its last application
        try:
            httpx.get(served.url + "/health", timeout=5)
        except httpx.HTTPError:
            break
        time.sleep(1)
    else:
        pytest.fail("Serve still answers after the command stopped")
