"""A real `rewardkit serve` process under faults: a client that disconnects, SIGTERM while
requests are in flight, a worker killed with SIGKILL, a body sent in chunks over the limit."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import HERE, ServerProcess, marks, wait_until

SCORE = "/v1/score"


def raw_post(url: str, path: str, payload: Any) -> socket.socket:
    """Send a POST and return the open socket without reading the answer (to disconnect later)."""
    host, port = url.removeprefix("http://").split(":")
    body = json.dumps(payload).encode()
    connection = socket.create_connection((host, int(port)))
    head = (
        f"POST {path} HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\n\r\n"
    ).encode()
    connection.sendall(head + body)
    return connection


def health(server: ServerProcess) -> dict[str, Any]:
    return dict(httpx.get(server.url + "/health", timeout=10).json())


def test_a_client_that_disconnects_has_its_async_work_cancelled(start_server, markers: Path) -> None:
    server = start_server("serve_rewards:exact_async", "--timeout", "120")
    connection = raw_post(server.url, SCORE, {"samples": [{"final_response": "slow:300", "answer": "x"}] * 3})
    wait_until(lambda: marks(markers, "started") == 3, timeout=60, what="the three samples to start")
    assert health(server)["in_flight_samples"] == 3
    connection.close()
    wait_until(lambda: marks(markers, "cancelled") == 3, timeout=60, what="the three samples to be cancelled")
    wait_until(lambda: health(server)["in_flight_samples"] == 0, timeout=60, what="the bound to be released")
    assert marks(markers, "finished") == 0
    metrics = httpx.get(server.url + "/metrics", timeout=10).text
    assert 'rewardkit_serve_requests_total{route="/v1/score",status="499"} 1.0' in metrics


def test_a_client_that_disconnects_drops_its_queued_sync_samples(start_server, markers: Path) -> None:
    server = start_server("serve_rewards:sleepy", "--concurrency", "1", "--timeout", "120")
    connection = raw_post(server.url, SCORE, {"samples": [{"final_response": "slow:2"}] * 5})
    wait_until(lambda: marks(markers, "started") == 1, timeout=60, what="the first sample to start")
    connection.close()
    wait_until(lambda: health(server)["in_flight_samples"] == 0, timeout=60, what="the bound to be released")
    wait_until(lambda: marks(markers, "finished") == 1, timeout=60, what="the running sample to end")
    time.sleep(3)  # long enough for a second queued sample to have started, had it not been dropped
    assert marks(markers, "started") == 1


def test_sigterm_drains_requests_in_flight_then_exits(start_server, markers: Path) -> None:
    server = start_server("serve_rewards:exact_async", "--timeout", "120")
    answers: list[httpx.Response] = []
    payload = {"samples": [{"final_response": "slow:3", "answer": "slow:3"}, {"final_response": "boom", "answer": "x"}]}
    request = threading.Thread(target=lambda: answers.append(httpx.post(server.url + SCORE, json=payload, timeout=120)))
    request.start()
    wait_until(lambda: marks(markers, "started") == 2, timeout=60, what="the request to be in flight")
    server.process.send_signal(signal.SIGTERM)
    wait_until(lambda: not _accepts(server.url), timeout=30, what="the server to stop accepting connections")
    request.join(120)
    assert server.process.wait(120) == 0
    (answer,) = answers
    assert answer.status_code == 200
    results = answer.json()["results"]
    assert results[0]["reward"] == 1.0
    assert results[1]["failure"]["tag"] == "reward_error"
    assert marks(markers, "cancelled") == 0


def _accepts(url: str) -> bool:
    host, port = url.removeprefix("http://").split(":")
    try:
        socket.create_connection((host, int(port)), timeout=2).close()
    except OSError:
        return False
    return True


def test_a_killed_worker_is_replaced_and_the_server_keeps_answering(start_server) -> None:
    server = start_server("serve_rewards:exact", "--workers", "2")
    sample = {"samples": [{"final_response": "4", "answer": "4"}]}

    def two_workers(without: int | None = None) -> set[int] | None:
        seen = {int(health(server)["worker"].rsplit("/", 1)[1]) for _ in range(40)}
        return seen if len(seen) == 2 and without not in seen else None

    pids = wait_until(two_workers, timeout=120, what="two workers")
    victim = min(pids)  # type: ignore[call-overload]
    os.kill(victim, signal.SIGKILL)
    for _ in range(30):  # answered throughout, by the surviving worker and then the new one
        response = httpx.post(server.url + SCORE, json=sample, timeout=30)
        assert response.status_code == 200
        assert response.json()["results"][0]["reward"] == 1.0
    wait_until(lambda: two_workers(without=victim), timeout=120, what="a new worker in place of the killed one")
    metrics = httpx.get(server.url + "/metrics", timeout=10).text  # summed over the workers, dead ones too
    assert 'rewardkit_serve_samples_total{reward="exact"} 30.0' in metrics
    assert server.stop() == 0


def test_a_chunked_body_over_the_limit_is_413_without_reading_it_all(start_server) -> None:
    server = start_server("serve_rewards:exact", "--max-body-size", "4k")

    def chunks():
        yield b'{"samples": ['
        for _ in range(1000):
            yield b'{"final_response": "' + b"x" * 100 + b'", "answer": "x"},'
        yield b"{}]}"

    response = httpx.post(server.url + SCORE, content=chunks(), headers={"content-type": "application/json"}, timeout=60)
    assert response.status_code == 413
    assert "4096 bytes" in response.json()["error"]["message"]
    assert health(server)["status"] == "ok"


def test_a_reward_that_cannot_be_imported_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "rewardkit", "serve", "serve_rewards:exactt", "--app-dir", str(HERE)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 2
    assert "serve_rewards:exactt" in result.stderr
    assert "Traceback" not in result.stderr
    unknown = subprocess.run(
        [sys.executable, "-m", "rewardkit", "serve", "math_rewardd"], capture_output=True, text=True, timeout=300, check=False
    )
    assert unknown.returncode == 2
    assert "did you mean 'math_reward'" in unknown.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "no reward to serve"),
        (("math_reward", "--timeout", "0"), "timeout must be a positive number"),
        (("math_reward", "--ray", "--num-replicas", "2", "--max-replicas", "3"), "not both"),
    ],
)
def test_bad_options_are_usage_errors(args: tuple[str, ...], message: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "rewardkit", "serve", *args], capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
