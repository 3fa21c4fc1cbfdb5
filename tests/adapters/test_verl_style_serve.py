"""``rewardkit serve`` (the real CLI, in a subprocess) serves rewards written the verl/TinyZero
way (``return score if ok else format_score``) instead of exiting 2 (issue 32.4): verl's installed
gsm8k ``compute_score`` and a TinyZero-style port, a failing sample first."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from adapter_testing import require_module

HERE = Path(__file__).resolve().parent


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_serve_answers_verl_style_rewards() -> None:
    httpx = require_module("httpx", "the serve extra installs httpx")
    require_module("verl", "the frameworks extra installs verl, whose gsm8k is served")
    port = _free_port()
    command = [
        sys.executable, "-m", "rewardkit", "serve", "--port", str(port), "--app-dir", str(HERE),
        "verl_style_rewards:decorated", "verl.utils.reward_score.gsm8k:compute_score",
    ]  # fmt: skip
    server = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=os.environ.copy()
    )
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(600):  # up to a minute on a busy machine; no timing asserted
            if server.poll() is not None:
                pytest.fail(
                    f"rewardkit serve exited {server.returncode}: {server.stdout.read() if server.stdout else ''}"
                )
            try:
                if httpx.get(url + "/health", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        samples = [
            {"solution_str": None, "ground_truth": "42"},  # fails: the reward gets None
            {"solution_str": "Assistant: <answer>42</answer>", "ground_truth": "42"},
            {"solution_str": "Assistant: <answer>41</answer>", "ground_truth": "42"},
        ]
        body = httpx.post(
            url + "/v1/rewards/verl_style_decorated/score", json={"samples": samples}, timeout=60
        ).json()
        assert [item["reward"] for item in body["results"]] == [0.0, 1.0, 0.1]
        assert body["results"][0]["failure"] is not None
        assert body["extra_keys"] == []
        gsm8k = [
            {"solution_str": None, "ground_truth": "7"},
            {"solution_str": "#### 7", "ground_truth": "7"},
        ]
        body = httpx.post(
            url + "/v1/rewards/compute_score/score", json={"samples": gsm8k}, timeout=60
        ).json()
        assert [item["reward"] for item in body["results"]] == [0.0, 1.0]
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
