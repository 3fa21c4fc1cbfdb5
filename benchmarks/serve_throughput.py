"""Throughput and latency of `rewardkit serve` against the minimal FastAPI server a user would
write around the same reward, in the same run, on the 800 shared math responses.

Each client sends OpenRLHF's request for one rollout (``POST /get_reward`` with one query, its
prompt and its gold as the label), as OpenRLHF's ``--reward.remote_url`` does, and waits for the
answer before sending the next; 1, 16 and 64 such clients run at once. Every server is one
uvicorn process (and `rewardkit serve --workers 2` besides), started fresh; each is warmed with
one pass over the 800 responses first (the grader's caches, sympy's import), so the figures are
steady state; all run at once and are measured in turn, ``--rounds`` times (the median shown).
To say where the time goes, the run also measures, in this process, the reward called directly
and through ``to_openrlhf`` on the same samples, and a server whose reward does nothing (the
cost of HTTP, JSON and the server itself). What the bearer token and the read deadlines cost is
measured twice: servers with and without them ("rewardkit serve, token"; "rewardkit app,
uvicorn protocol": no header deadline or connection cap), and each check timed in this process
as a share of a request's server time.

    python benchmarks/serve_throughput.py [--data ../shared/data/math-cot-responses.jsonl]

The machine is shared: compare the ratios within one run, not absolute figures across runs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

PROMPT = "<|im_start|>user\n{question}<|im_end|>\n<|im_start|>assistant\n"
LEVELS = (1, 16, 64)

MINIMAL_SERVER = textwrap.dedent(
    '''
    """What a user writes around a rewardkit reward, after OpenRLHF's own serve_rm.py."""
    import sys

    import uvicorn
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse

    from rewardkit.adapters import to_openrlhf

    reward_func = to_openrlhf("math_reward", return_tensors=False)
    app = FastAPI()


    @app.post("/get_reward")
    async def get_reward(request: Request):
        data = await request.json()
        return JSONResponse(reward_func(data["query"], data["prompts"], data["labels"]))


    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
    '''
)

UNGUARDED_SERVER = textwrap.dedent(
    '''
    """rewardkit serve's app on uvicorn's own HTTP protocol: no header deadline, no connection cap."""
    import sys

    import uvicorn

    from rewardkit.serve import RewardSpec, ServeConfig, create_app

    app = create_app(ServeConfig(rewards=(RewardSpec.parse("math_reward"),)))
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
    '''
)

TOKEN = "benchmark-token-0123456789"
"""The bearer token of the "token" server (sent by every client of that server)."""

NULL_REWARD = textwrap.dedent(
    """
    from rewardkit import reward


    @reward(name="null_reward")
    def null_reward(final_response: str, answer: str) -> float:
        return 0.0
    """
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def server(command: list[str], port: int, workdir: Path, env: dict[str, str] | None = None):
    """A server subprocess, ready (``/health`` answers) when the block starts, stopped after it."""
    process = subprocess.Popen(
        command,
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"{command} exited: {process.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
        try:
            if (
                httpx.get(url + ("/docs" if env is None else "/health"), timeout=5).status_code
                == 200
            ):
                break
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"{command} did not start")
        time.sleep(0.2)
    try:
        yield url
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()


def payloads(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenRLHF's request for each response: one query (prompt + response), its prompt, its gold."""
    result = []
    for row in rows:
        prompt = PROMPT.format(question=row["question"])
        result.append(
            {
                "query": [prompt + row["response"] + "<|im_end|>"],
                "prompts": [prompt],
                "labels": [row["gold"]],
            }
        )
    return result


async def run_clients(
    url: str, requests: list[dict[str, Any]], clients: int, headers: dict[str, str] | None = None
) -> dict[str, float]:
    """``clients`` clients share ``requests``, each sending its next one when the last is answered."""
    queue = iter(requests)
    latencies: list[float] = []
    rewards = 0.0
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)

    async def client(session: httpx.AsyncClient) -> None:
        nonlocal rewards
        for payload in queue:
            started = time.perf_counter()
            response = await session.post(url + "/get_reward", json=payload)
            latencies.append(time.perf_counter() - started)
            response.raise_for_status()
            rewards += sum(response.json()["rewards"])

    async with httpx.AsyncClient(timeout=300, limits=limits, headers=headers) as session:
        started = time.perf_counter()
        await asyncio.gather(*(client(session) for _ in range(clients)))
        elapsed = time.perf_counter() - started
    latencies.sort()
    return {
        "samples_per_s": len(requests) / elapsed,
        "p50_ms": 1000 * statistics.median(latencies),
        "p99_ms": 1000 * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))],
        "reward_sum": rewards,
    }


def in_process_costs(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Microseconds per sample of the reward called directly and through ``to_openrlhf`` (warm)."""
    from rewardkit.adapters import to_openrlhf
    from rewardkit.math.reward import math_reward

    adapter = to_openrlhf(math_reward, return_tensors=False)
    requests = payloads(rows)

    def grade_all() -> None:
        for row in rows:
            with contextlib.suppress(
                Exception
            ):  # a bad gold raises MathHarnessError, as in the servers
                math_reward(final_response=row["response"], answer=row["gold"])

    grade_all()  # warm the grader's caches, as the servers are
    started = time.perf_counter()
    grade_all()
    direct = (time.perf_counter() - started) / len(rows)
    started = time.perf_counter()
    for payload in requests:
        adapter(payload["query"], payload["prompts"], payload["labels"])
    adapted = (time.perf_counter() - started) / len(rows)
    return {"reward_us": 1e6 * direct, "to_openrlhf_us": 1e6 * adapted}


def guard_costs(rounds: int = 20_000) -> dict[str, float]:
    """Microseconds per request of what the token and the deadlines add, in this process: the
    bearer check, the body read under its deadline (against the bare read), and the connection
    bookkeeping of one keep-alive request. Timed directly: a throughput difference of a few
    percent is below the noise of servers measured one after another on a shared machine."""
    from rewardkit.serve.app import Gatekeeper, within
    from rewardkit.serve.auth import BearerCheck
    from rewardkit.serve.connections import ConnectionGuard

    headers = [
        (b"host", b"127.0.0.1:8000"),
        (b"content-type", b"application/json"),
        (b"content-length", b"400"),
    ]
    scope = {
        "path": "/get_reward",
        "headers": [*headers, (b"authorization", f"Bearer {TOKEN}".encode())],
    }
    check = BearerCheck(TOKEN)
    started = time.perf_counter()
    for _ in range(rounds):
        check.problem(scope)
    token_us = 1e6 * (time.perf_counter() - started) / rounds

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"x" * 400, "more_body": False}

    async def reads(deadline: bool) -> float:
        started = time.perf_counter()
        for _ in range(rounds):
            if deadline:
                await within(30.0, Gatekeeper._body(receive, 1 << 25))
            else:
                await Gatekeeper._body(receive, 1 << 25)
        return 1e6 * (time.perf_counter() - started) / rounds

    bare = asyncio.run(reads(False))
    timed = asyncio.run(reads(True))
    guard = ConnectionGuard(2048, 30.0)
    connection = object()
    guard.opened(connection)
    started = time.perf_counter()
    for _ in range(rounds):
        guard.busy(connection)
        guard.admit()
        guard.idle_again(connection)
    bookkeeping = 1e6 * (time.perf_counter() - started) / rounds
    return {"token_us": token_us, "body_deadline_us": timed - bare, "connection_us": bookkeeping}


def server_commands(workdir: Path) -> dict[str, tuple[list[str], int]]:
    (workdir / "minimal_server.py").write_text(MINIMAL_SERVER)
    (workdir / "unguarded_server.py").write_text(UNGUARDED_SERVER)
    (workdir / "null_rewards.py").write_text(NULL_REWARD)
    commands = {}
    for name, args in {
        "minimal FastAPI": [sys.executable, "minimal_server.py"],
        "rewardkit serve": [
            sys.executable,
            "-m",
            "rewardkit",
            "serve",
            "math_reward",
            "--log-level",
            "warning",
        ],
        "rewardkit serve, token": [
            sys.executable,
            "-m",
            "rewardkit",
            "serve",
            "math_reward",
            "--log-level",
            "warning",
        ],
        "rewardkit app, uvicorn protocol": [sys.executable, "unguarded_server.py"],
        "rewardkit serve --workers 2": [
            sys.executable,
            "-m",
            "rewardkit",
            "serve",
            "math_reward",
            "--workers",
            "2",
            "--log-level",
            "warning",
        ],
        "rewardkit serve, null reward": [
            sys.executable,
            "-m",
            "rewardkit",
            "serve",
            "null_rewards:null_reward",
            "--log-level",
            "warning",
        ],
    }.items():
        port = free_port()
        by_argv = name in ("minimal FastAPI", "rewardkit app, uvicorn protocol")
        commands[name] = ([*args, str(port)] if by_argv else [*args, "--port", str(port)], port)
    return commands


def server_side_seconds(url: str, headers: dict[str, str] | None = None) -> float | None:
    """The mean time the server itself spent per sample (its sample-duration histogram)."""
    try:
        text = httpx.get(url + "/metrics", timeout=10, headers=headers).text
    except httpx.HTTPError:
        return None
    total = count = 0.0
    for line in text.splitlines():
        if line.startswith("rewardkit_serve_sample_duration_seconds_sum"):
            total += float(line.rsplit(" ", 1)[1])
        elif line.startswith("rewardkit_serve_sample_duration_seconds_count"):
            count += float(line.rsplit(" ", 1)[1])
    return total / count if count else None


def measure_all(
    requests: list[dict[str, Any]], levels: list[int], only: list[str] | None, rounds: int
) -> dict[str, dict[int, dict[str, float]]]:
    """Every server's figures per client level: all servers run at once (idle while the others
    are measured), each warmed with one pass, then measured ``rounds`` times in turn; the
    round with the median throughput is kept."""
    runs: dict[str, dict[int, list[dict[str, float]]]] = {}
    with (
        tempfile.TemporaryDirectory(prefix="rk-serve-bench-") as directory,
        contextlib.ExitStack() as stack,
    ):
        workdir = Path(directory)
        started: dict[str, tuple[str, dict[str, str] | None]] = {}
        for name, (command, port) in server_commands(workdir).items():
            if only and name != "minimal FastAPI" and name not in only:
                continue
            token = name.endswith(", token")
            env = {"REWARDKIT_SERVE_TOKEN": TOKEN} if token else None
            headers = {"authorization": f"Bearer {TOKEN}"} if token else None
            url = stack.enter_context(server(command, port, workdir, env))
            warm = asyncio.run(run_clients(url, requests, 16, headers))
            print(f"{name}: warm-up pass {warm['samples_per_s']:.0f} samples/s", flush=True)
            started[name] = (url, headers)
            runs[name] = {level: [] for level in levels}
        for _ in range(rounds):
            for name, (url, headers) in started.items():
                for level in levels:
                    runs[name][level].append(
                        asyncio.run(run_clients(url, requests, level, headers))
                    )
        for name, (url, headers) in started.items():
            seconds = server_side_seconds(url, headers)
            if seconds is not None:
                print(
                    f"{name}: the server's own time per sample (reward + adapter): {1e6 * seconds:.0f} us"
                )
    return {
        name: {
            level: sorted(figures, key=lambda item: item["samples_per_s"])[len(figures) // 2]
            for level, figures in by_level.items()
        }
        for name, by_level in runs.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default_data = (
        Path(__file__).resolve().parents[1].parent / "shared" / "data" / "math-cot-responses.jsonl"
    )
    parser.add_argument(
        "--data", type=Path, default=Path(os.environ.get("REWARDKIT_SERVE_DATA", default_data))
    )
    parser.add_argument("--levels", type=int, nargs="+", default=list(LEVELS))
    parser.add_argument(
        "--servers",
        nargs="+",
        default=None,
        metavar="NAME",
        help="only these servers (and the minimal one), by the names the table shows",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="measurements of every server, interleaved (the median is shown): load on a shared "
        "machine drifts, so servers measured one after another are not comparable",
    )
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.data.read_text().splitlines() if line.strip()]
    requests = payloads(rows)
    print(
        f"{len(rows)} responses from {args.data}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    guards = guard_costs()
    print(
        f"in this process, per request: token check {guards['token_us']:.2f} us, body deadline "
        f"{guards['body_deadline_us']:.2f} us, connection bookkeeping {guards['connection_us']:.2f} us",
        flush=True,
    )
    costs = in_process_costs(rows)
    print(
        f"in this process, warm: math_reward {costs['reward_us']:.0f} us/sample, "
        f"through to_openrlhf {costs['to_openrlhf_us']:.0f} us/sample"
    )
    results = measure_all(requests, args.levels, args.servers, args.rounds)
    print()
    print(
        f"{'server':<30} {'clients':>7} {'samples/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'vs minimal':>10}"
    )
    for name, by_level in results.items():
        for level, figures in by_level.items():
            ratio = figures["samples_per_s"] / results["minimal FastAPI"][level]["samples_per_s"]
            print(
                f"{name:<30} {level:>7} {figures['samples_per_s']:>10.0f} {figures['p50_ms']:>8.1f} "
                f"{figures['p99_ms']:>8.1f} {ratio:>9.2f}x"
            )
    sums = {
        name: by_level[args.levels[0]]["reward_sum"]
        for name, by_level in results.items()
        if "null" not in name
    }
    print(f"\nreward sums (must agree): {sums}")
    added = guards["token_us"] + guards["body_deadline_us"] + guards["connection_us"]
    for level in args.levels:
        if "rewardkit serve" in results:
            per_request_us = (
                1e6 / results["rewardkit serve"][level]["samples_per_s"]
            )  # server time per request
            print(
                f"token check + deadlines at {level} client(s): {added:.1f} us of {per_request_us:.0f} us a request "
                f"({100 * added / per_request_us:.2f}%)"
            )
    print(f"load average after the run: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
