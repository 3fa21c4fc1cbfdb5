"""A real `rewardkit serve` process against what a fault campaign threw at it: rewards raising
KeyboardInterrupt/SystemExit/GeneratorExit, requests without the token, slow and half-open
connections, a label lacking a field, bodies JSON cannot read, targets with a typo."""

from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from conftest import HERE, ServerProcess, marks, wait_until
from test_serve_faults import raw_post

from rewardkit.serve import RemoteReward

ABORTS = ("KeyboardInterrupt", "SystemExit", "GeneratorExit")
PROMPT = "<|im_start|>user\nWhat is 6*7?<|im_end|>\n<|im_start|>assistant\n"


def connect(server: ServerProcess) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=120)


def read_to_end(connection: socket.socket) -> bytes:
    """Everything the server sends before it closes the connection."""
    parts = []
    while chunk := connection.recv(65536):
        parts.append(chunk)
    return b"".join(parts)


def serve_command(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rewardkit", "serve", *args, "--app-dir", str(HERE)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


# -- 33.7: a reward raising what ends a process fails its sample; the server keeps serving -------


def test_a_reward_raising_keyboardinterrupt_systemexit_or_generatorexit_fails_only_its_sample(
    start_server,
) -> None:
    modes = (
        "abort_thread",
        "abort_process",
        "abort_async",
        "abort_async_inline",
        "abort_async_process",
    )
    server = start_server(*(f"serve_rewards:{mode}" for mode in modes))
    for mode in modes:
        for kind in ABORTS:
            samples = [{"final_response": kind}, {"final_response": "fine"}]
            response = httpx.post(
                f"{server.url}/v1/rewards/{mode}/score", json={"samples": samples}, timeout=120
            )
            assert response.status_code == 200, (mode, kind, response.text)
            failed, fine = response.json()["results"]
            assert failed["failure"]["tag"] == "reward_error", (mode, kind)
            assert failed["failure"]["type"] == "RewardAbortedError"
            assert kind in failed["failure"]["message"]
            assert fine == {"reward": 1.0, "extras": {}, "failure": None, "applicable": True}
        payload = {"query": [PROMPT + "KeyboardInterrupt"], "prompts": [PROMPT], "labels": [None]}
        openrlhf = httpx.post(f"{server.url}/get_reward/{mode}", json=payload, timeout=120)
        assert openrlhf.json()["extra_logs"]["error"] == [1.0]
    assert server.process.poll() is None
    metrics = httpx.get(server.url + "/metrics", timeout=10).text
    assert (
        'rewardkit_serve_sample_failures_total{reward="abort_async",tag="reward_error"} 4.0'
        in metrics
    )
    assert server.stop() == 0


# -- 33.8: the bearer token --------------------------------------------------------------------


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "token"
    path.write_text("s3cret-token-for-tests\n")
    return path


def test_with_a_token_every_route_but_health_needs_it(start_server, token_file: Path) -> None:
    server = start_server("serve_rewards:exact", "--token-file", str(token_file))
    sample = {"samples": [{"final_response": "4", "answer": "4"}]}
    assert httpx.get(server.url + "/health", timeout=10).status_code == 200
    for method, path in (
        ("POST", "/v1/score"),
        ("POST", "/get_reward"),
        ("GET", "/metrics"),
        ("GET", "/docs"),
        ("GET", "/v1/rewards"),
    ):
        bare = httpx.request(method, server.url + path, json=sample, timeout=10)
        assert bare.status_code == 401, path
        assert bare.headers["www-authenticate"].startswith("Bearer")
        assert "Authorization: Bearer" in bare.json()["error"]["message"]
        wrong = httpx.request(
            method,
            server.url + path,
            json=sample,
            headers={"authorization": "Bearer nope"},
            timeout=10,
        )
        assert wrong.status_code == 401
        assert wrong.json()["error"] == {
            "type": "Unauthorized",
            "message": "the bearer token is wrong",
        }
    good = {"authorization": "Bearer s3cret-token-for-tests"}
    assert (
        httpx.post(server.url + "/v1/score", json=sample, headers=good, timeout=30).json()[
            "results"
        ][0]["reward"]
        == 1.0
    )
    metrics = httpx.get(server.url + "/metrics", headers=good, timeout=10).text
    assert 'rewardkit_serve_rejected_requests_total{reason="unauthorized"} 10.0' in metrics


async def test_remote_reward_sends_the_token_given_or_from_the_environment(
    start_server, token_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = start_server("serve_rewards:exact", "--token-file", str(token_file))
    async with RemoteReward(
        server.url, "exact", token="s3cret-token-for-tests", retries=0
    ) as remote:
        assert (await remote(final_response="4", answer="4")).reward == 1.0
    monkeypatch.setenv("REWARDKIT_SERVE_TOKEN", "s3cret-token-for-tests")
    async with RemoteReward(server.url, "exact", retries=0) as remote:
        assert (await remote(final_response="4", answer="5")).reward == 0.0
    monkeypatch.delenv("REWARDKIT_SERVE_TOKEN")
    async with RemoteReward(server.url, "exact", retries=0) as remote:
        with pytest.raises(Exception, match="requires a bearer token"):
            await remote(final_response="4", answer="4")


def test_the_token_can_come_from_the_environment_and_open_binding_warns(
    start_server, tmp_path: Path
) -> None:
    server = ServerProcess(
        ["serve_rewards:exact", "--host", "0.0.0.0"], workdir=tmp_path
    ).wait_ready()
    try:
        assert "without a token" in server.output()
    finally:
        server.stop()
    guarded = ServerProcess(
        ["serve_rewards:exact"], workdir=tmp_path, env={"REWARDKIT_SERVE_TOKEN": "from-env"}
    ).wait_ready()
    try:
        assert httpx.get(guarded.url + "/v1/rewards", timeout=10).status_code == 401
        assert (
            httpx.get(
                guarded.url + "/v1/rewards",
                headers={"authorization": "bearer from-env"},
                timeout=10,
            ).status_code
            == 200
        )
        assert "without a token" not in guarded.output()
    finally:
        guarded.stop()


def test_an_empty_token_file_is_a_usage_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.write_text("\n")
    result = serve_command("serve_rewards:exact", "--token-file", str(empty))
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "is empty" in result.stderr


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "huge"])
def test_a_token_file_that_is_a_fifo_or_endless_is_refused_at_once(
    tmp_path: Path, kind: str
) -> None:
    """A FIFO nobody writes would block the start forever, a link to /dev/zero or an 8 GB file would
    be read until the memory is gone: each is one line and exit 2."""
    token_file = tmp_path / "token"
    if kind == "fifo":
        os.mkfifo(token_file)
    elif kind == "dev_zero":
        token_file.symlink_to("/dev/zero")
    else:
        with token_file.open("wb") as sparse:
            sparse.truncate(8 << 30)
    result = serve_command("serve_rewards:exact", "--token-file", str(token_file))
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    expected = "larger than" if kind == "huge" else "not a regular file"
    assert expected in result.stderr
    assert str(token_file) in result.stderr


# -- 33.9: slow and half-open clients -----------------------------------------------------------


def _small_descriptor_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))


def test_1100_half_open_connections_do_not_stop_real_clients(tmp_path: Path) -> None:
    """With 1,024 descriptors (the campaign's limit, which the server cannot raise), 1,100
    connections that send nothing or half a request; real requests get 503 (retried) or 200,
    never a reset."""
    server = ServerProcess(["serve_rewards:exact", "--log-level", "warning"], workdir=tmp_path)
    server.process.kill()  # restarted below with the small limit
    server.process.wait()
    command = [
        sys.executable,
        "-m",
        "rewardkit",
        "serve",
        "serve_rewards:exact",
        "--port",
        str(server.port),
        "--app-dir",
        str(HERE),
    ]
    with server.log.open("wb") as output:
        server.process = subprocess.Popen(
            command, stdout=output, stderr=subprocess.STDOUT, preexec_fn=_small_descriptor_limit
        )
    idle: list[socket.socket] = []
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 1300:  # this process holds the 1,100 connections: it needs the descriptors
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
    try:
        server.wait_ready()
        for index in range(1100):
            connection = connect(server)
            if index % 2:
                connection.sendall(b"POST /v1/score HTTP/1.1\r\nhost: x\r\n")
            idle.append(connection)
        answers: list[int] = []

        def served() -> bool:
            response = httpx.post(
                server.url + "/v1/score",
                json={"samples": [{"final_response": "4", "answer": "4"}]},
                timeout=60,
            )
            answers.append(response.status_code)
            if response.status_code == 503:
                assert response.json()["error"]["type"] == "TooManyConnections"
                assert response.headers["retry-after"] == "1"
            return response.status_code == 200

        wait_until(served, timeout=120, what="a real request to be served", interval=1.0)
        for _ in range(20):
            assert served()
        assert set(answers) <= {200, 503}
    finally:
        for connection in idle:
            connection.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        assert server.stop() == 0


def test_a_client_slow_with_its_headers_or_body_gets_408_and_is_closed(start_server) -> None:
    server = start_server("serve_rewards:exact", "--read-timeout", "1")
    silent = connect(server)
    partial = connect(server)
    partial.sendall(b"POST /v1/score HTTP/1.1\r\nhost: x\r\n")
    slow_body = connect(server)
    slow_body.sendall(
        b"POST /v1/score HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"
    )
    assert read_to_end(silent) == b""  # closed without a word: it never asked anything
    assert read_to_end(partial).startswith(b"HTTP/1.1 408 ")
    answer = read_to_end(slow_body)
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert b"--read-timeout" in answer
    sample = {"samples": [{"final_response": "4", "answer": "4"}]}
    assert httpx.post(server.url + "/v1/score", json=sample, timeout=30).status_code == 200
    metrics = httpx.get(server.url + "/metrics", timeout=10).text
    assert 'rewardkit_serve_rejected_requests_total{reason="read_timeout"} 1.0' in metrics


def test_over_the_connection_cap_with_every_connection_busy_a_request_gets_503(
    start_server, markers: Path
) -> None:
    server = start_server("serve_rewards:exact_async", "--max-connections", "3", "--timeout", "120")
    busy = [
        raw_post(
            server.url, "/v1/score", {"samples": [{"final_response": "slow:120", "answer": "x"}]}
        )
        for _ in range(3)
    ]
    wait_until(lambda: marks(markers, "started") == 3, timeout=60, what="three requests in flight")
    refused = httpx.post(
        server.url + "/v1/score",
        json={"samples": [{"final_response": "x", "answer": "x"}]},
        timeout=30,
    )
    assert refused.status_code == 503
    assert refused.headers["retry-after"] == "1"
    assert "--max-connections" in refused.json()["error"]["message"]
    for connection in busy:
        connection.close()
    sample = {"samples": [{"final_response": "x", "answer": "x"}]}
    wait_until(
        lambda: httpx.post(server.url + "/v1/score", json=sample, timeout=30).status_code == 200,
        timeout=60,
        what="the freed connections to let requests in",
    )


# -- 33.10: per-sample failures and documented errors on every route ----------------------------


def test_get_reward_fails_only_the_sample_whose_label_lacks_a_field(start_server) -> None:
    server = start_server("serve_rewards:exact")
    labels = [
        json.dumps({"answer": "42"}),
        json.dumps({"solution": "42"}),
        json.dumps({"answer": "41"}),
    ]
    payload = {"query": [PROMPT + "42"] * 3, "prompts": [PROMPT] * 3, "labels": labels}
    response = httpx.post(server.url + "/get_reward", json=payload, timeout=60)
    assert response.status_code == 200
    body = response.json()
    assert body["rewards"] == [1.0, 0.0, 0.0]
    assert body["extra_logs"]["error"] == [0.0, 1.0, 0.0]
    empty = httpx.post(server.url + "/v1/score", json={"samples": []}, timeout=60)
    assert empty.status_code == 200
    assert empty.json()["results"] == []
    none = httpx.post(
        server.url + "/get_reward", json={"query": [], "prompts": [], "labels": []}, timeout=60
    )
    assert none.status_code == 200
    assert none.json()["rewards"] == []


UNREADABLE = [
    (
        b'{"samples": [{"final_response": ' + b"9" * 5000 + b', "answer": "4"}]}',
        "a number too long",
    ),
    (b'{"samples": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested too deeply"),
    (b'{"samples": [{"final_response": "\xff\xfe", "answer": "4"}]}', "not valid UTF-8"),
    (b'{"samples": [{"final_response": "4",]}', "malformed JSON"),
]


def test_every_400_carries_the_documented_error_body(start_server) -> None:
    server = start_server("serve_rewards:exact")
    for body, reason in UNREADABLE:
        for path in ("/v1/score", "/get_reward"):
            response = httpx.post(
                server.url + path,
                content=body,
                headers={"content-type": "application/json"},
                timeout=60,
            )
            assert response.status_code == 400, (reason, path)
            error = response.json()["error"]
            assert set(error) == {"type", "message"}
            assert reason in error["message"]
    assert httpx.get(server.url + "/nowhere", timeout=10).json()["error"]["message"] == "Not Found"


@pytest.mark.parametrize(
    ("target", "why"),
    [
        ("serve_rewards:inline_sync", "execution='inline'"),
        ("serve_rewards:batch_rank", "@group_reward"),
    ],
)
def test_a_reward_that_cannot_be_served_is_one_line_and_exit_2(target: str, why: str) -> None:
    result = serve_command(target)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1, result.stderr
    assert why in result.stderr
    assert "cannot be served" in result.stderr


# -- 37.6 and 37.10: messages that fit the one reading them ----------------------------------


def test_a_misspelled_field_tells_the_client_what_it_sent_and_what_the_reward_needs(
    start_server,
) -> None:
    server = start_server("serve_rewards:exact")
    response = httpx.post(
        server.url + "/v1/score",
        json={"samples": [{"final_response": "4", "answr": "4"}]},
        timeout=60,
    )
    assert response.status_code == 400
    message = response.json()["error"]["message"]
    assert "sample 0 has 'answr', 'final_response'" in message
    assert "takes the fields final_response, answer" in message
    assert "Did you mean 'answr'? Send it as 'answer'" in message
    assert "rename the parameter" not in message
    assert str(HERE) not in message
    assert "serve_rewards.py" not in message


def test_a_missing_module_attribute_gets_a_did_you_mean_and_no_sys_path_blame() -> None:
    result = serve_command("serve_rewards:exactt")
    assert result.returncode == 2
    assert "did you mean 'exact'" in result.stderr
    assert "Its rewards:" in result.stderr
    assert "sys.path" not in result.stderr
    missing = serve_command("no_such_module_here:exact")
    assert missing.returncode == 2
    assert "no module named 'no_such_module_here'" in missing.stderr


def test_the_token_reaches_every_worker(tmp_path: Path) -> None:
    server = ServerProcess(
        ["serve_rewards:exact", "--workers", "2"],
        workdir=tmp_path,
        env={"REWARDKIT_SERVE_TOKEN": "for-workers"},
    ).wait_ready()
    try:
        sample = {"samples": [{"final_response": "4", "answer": "4"}]}
        good = {"authorization": "Bearer for-workers"}
        seen: set[str] = set()

        def both_workers_answered() -> bool:
            assert httpx.post(server.url + "/v1/score", json=sample, timeout=30).status_code == 401
            answer = httpx.post(server.url + "/v1/score", json=sample, headers=good, timeout=30)
            assert answer.status_code == 200
            seen.add(answer.headers["x-rewardkit-worker"])
            return len(seen) == 2

        wait_until(
            both_workers_answered,
            timeout=120,
            what="both workers to answer with the token",
            interval=0.0,
        )
    finally:
        assert server.stop() == 0


class _FakeConnection:
    def __init__(self) -> None:
        self.closed = False

    def close_idle(self) -> None:
        self.closed = True


def test_the_guard_evicts_only_as_many_idle_connections_as_the_cap_needs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from rewardkit.serve import connections

    monkeypatch.setattr(connections, "EVICT_AFTER", 0.0)
    guard = connections.ConnectionGuard(4, 30.0, descriptors=10_000)
    idle = [_FakeConnection() for _ in range(10)]
    for connection in idle:
        guard.opened(connection)  # each one over the cap evicts the one idle longest
    asking = _FakeConnection()
    guard.opened(asking)
    guard.busy(asking)
    assert guard.admit()
    assert guard.open == 4
    assert not asking.closed
    assert [connection.closed for connection in idle] == [True] * 7 + [False] * 3
    for connection in idle:
        if connection.closed:
            guard.closed(connection)  # the loop reports them gone: not counted twice
    assert guard.open == 4
    guard.busy(idle[-1])
    guard.busy(idle[-2])
    guard.busy(idle[-3])
    for _ in range(2):
        newcomer = _FakeConnection()
        guard.opened(newcomer)  # nothing idle to make room for
        guard.busy(newcomer)
    assert not guard.admit()
