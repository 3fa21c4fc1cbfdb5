"""`rewardkit eval math --reward-url`: the eval runner grades with a served reward."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import STARTUP_SECONDS, ServerProcess, ThreadServer, free_port, wait_until

from rewardkit.evaluation import run_math_eval
from rewardkit.evaluation.cli import main as eval_main
from rewardkit.runtime.define.failures import FailureTag
from rewardkit.serve import RewardSpec, ServeConfig, create_app
from rewardkit.serve.grading import RemoteGrader, split_reward_url

CASES = [
    {"id": "right", "response": "so \\boxed{\\frac{1}{2}}", "gold": "0.5"},
    {"id": "wrong", "response": "\\boxed{3}", "gold": "4"},
    {"id": "none", "response": "no box here", "gold": "4"},
]


def test_split_reward_url() -> None:
    assert split_reward_url("http://rm:8000") == ("http://rm:8000", None)
    assert split_reward_url("http://rm:8000/v1/rewards/math_reward/") == (
        "http://rm:8000",
        "math_reward",
    )
    assert split_reward_url("https://rm/prefix/v1/rewards/acc") == ("https://rm/prefix", "acc")
    with pytest.raises(ValueError, match="not an http"):
        split_reward_url("rm:8000")


def test_eval_grades_with_the_served_math_reward(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "cases.jsonl"
    data.write_text("".join(json.dumps(case) + "\n" for case in CASES))
    output = tmp_path / "results.jsonl"
    with ThreadServer(create_app(ServeConfig(rewards=(RewardSpec.parse("math_reward"),)))) as url:
        grader = RemoteGrader(url + "/v1/rewards/math_reward")
        assert grader("\\boxed{4}", "4").correct
        status = eval_main(
            ["math", str(data), "--reward-url", url, "--workers", "0", "--output", str(output)]
        )
    assert status == 0, capsys.readouterr().err
    results = {
        row["id"]: row for row in map(json.loads, output.read_text().splitlines()) if "id" in row
    }
    assert results["right"]["passed"] is True
    assert results["wrong"]["tag"] == FailureTag.WRONG_ANSWER.value
    assert results["none"]["tag"] == FailureTag.NO_ANSWER.value


def _eval_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "rewardkit", "eval", "math", *args]


def _rows(path: Path) -> dict[str, dict[str, object]]:
    return {row["id"]: row for row in map(json.loads, path.read_text().splitlines())}


def test_a_server_down_before_the_run_is_exit_3_and_nothing_is_graded(tmp_path: Path) -> None:
    data = tmp_path / "cases.jsonl"
    data.write_text("".join(json.dumps(case) + "\n" for case in CASES))
    output = tmp_path / "results.jsonl"
    url = f"http://127.0.0.1:{free_port()}"
    done = subprocess.run(
        _eval_command(str(data), "--reward-url", url, "--workers", "2", "--output", str(output)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 3, done.stderr
    assert f"the reward server at {url} does not answer: GET /health: ConnectError" in done.stderr
    assert "nothing was graded" in done.stderr
    assert not output.exists() or output.read_text() == ""


def test_an_unknown_served_reward_is_a_usage_error(
    start_server: Callable[..., ServerProcess], tmp_path: Path
) -> None:
    server = start_server("math_reward")
    done = subprocess.run(
        _eval_command("--reward-url", server.url + "/v1/rewards/maths", "--workers", "0"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "no reward named 'maths'" in done.stderr
    assert "math_reward" in done.stderr


def test_the_header_names_the_served_reward_and_the_url(
    start_server: Callable[..., ServerProcess], tmp_path: Path
) -> None:
    server = start_server("math_reward")
    data = tmp_path / "cases.jsonl"
    data.write_text("".join(json.dumps(case) + "\n" for case in CASES))
    done = subprocess.run(
        _eval_command(str(data), "--reward-url", server.url, "--workers", "1"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert f"graded by the served reward 'math_reward' at {server.url}" in done.stdout


def test_a_server_that_dies_mid_run_fails_the_rest_fast_as_harness_errors(
    start_server: Callable[..., ServerProcess], tmp_path: Path
) -> None:
    """The first case is graded; then the server is killed. The next case is a HARNESS_ERROR
    naming the server (after the client's retries, not a WRONG_ANSWER timeout), and every later
    one is failed at once without a request: the time a dead server costs is bounded."""
    server = start_server("math_reward")
    output = tmp_path / "results.jsonl"
    padding = " " * (20 << 10)  # one case per task: the input is read a task (16 KiB) at a time
    cases = [{"id": f"q{i}", "response": padding + "\\boxed{4}", "gold": "4"} for i in range(6)]
    lines = [json.dumps(case) + "\n" for case in cases]
    command = _eval_command(
        "/dev/stdin", "--reward-url", server.url, "--workers", "0", "--output", str(output)
    )
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as run:
        assert run.stdin is not None
        run.stdin.write(lines[0])
        run.stdin.flush()
        wait_until(
            lambda: output.exists() and output.read_text().count("\n") >= 1,
            timeout=STARTUP_SECONDS,
            what="the first result",
        )
        server.process.kill()
        server.process.wait(60)
        stdout, stderr = run.communicate("".join(lines[1:]), timeout=300)
    assert run.returncode == 0, stderr  # one case was scored
    rows = _rows(output)
    assert rows["q0"]["passed"] is True
    for case in cases[1:]:
        row = rows[case["id"]]
        assert row["tag"] == FailureTag.HARNESS_ERROR.value, row
        assert row["detail"]["reason"] == "reward_server", row  # type: ignore[index]
        assert server.url in row["detail"]["error"], row  # type: ignore[index]
    assert "failed 3 times; last: ConnectError" in rows["q1"]["detail"]["error"]  # type: ignore[index]
    assert all("not sent" in rows[f"q{i}"]["detail"]["error"] for i in range(2, 6))  # type: ignore[index]
    assert "reward_server 5" in stdout


def test_with_worker_processes_a_dead_server_is_never_a_timeout_verdict(tmp_path: Path) -> None:
    """The old symptom: the client's retries ran inside the case's budget, the runner killed the
    worker at timeout + 1 s, and every case was a WRONG_ANSWER (reason timeout)."""
    data = tmp_path / "cases.jsonl"
    data.write_text("".join(json.dumps(case) + "\n" for case in CASES * 4))
    run = run_math_eval(
        [dict(case, id=f"{case['id']}{i}") for i in range(4) for case in CASES],
        grader=RemoteGrader(f"http://127.0.0.1:{free_port()}"),
        workers=2,
        timeout=0.1,
    )
    assert run.summary.scored == 0
    assert {(result.outcome, result.reason) for result in run.results} == {
        ("HARNESS_ERROR", "reward_server")
    }


def test_reward_url_and_grader_are_exclusive(capsys: pytest.CaptureFixture[str]) -> None:
    status = eval_main(
        ["math", "--reward-url", "http://rm:8000", "--grader", "rewardkit.math:grade"]
    )
    assert status == 2
    assert "give one" in capsys.readouterr().err


def _without_token_env() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key != "REWARDKIT_SERVE_TOKEN"}


def test_the_token_goes_from_a_file_or_the_environment(
    start_server: Callable[..., ServerProcess], tmp_path: Path
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("s3cret-token\n")
    server = start_server("math_reward", "--token-file", str(token_file))
    data = tmp_path / "cases.jsonl"
    data.write_text("".join(json.dumps(case) + "\n" for case in CASES))
    base = _eval_command(str(data), "--reward-url", server.url, "--workers", "0")
    environ = _without_token_env()
    refused = subprocess.run(base, capture_output=True, text=True, timeout=300, env=environ)
    assert refused.returncode == 2, refused.stderr
    assert "HTTP 401" in refused.stderr
    assert "sent no token" in refused.stderr
    assert "--reward-token-file or $REWARDKIT_SERVE_TOKEN" in refused.stderr
    by_file = subprocess.run(
        [*base, "--reward-token-file", str(token_file)],
        capture_output=True,
        text=True,
        timeout=300,
        env=environ,
    )
    assert by_file.returncode == 0, by_file.stderr
    by_environment = subprocess.run(
        base,
        capture_output=True,
        text=True,
        timeout=300,
        env={**environ, "REWARDKIT_SERVE_TOKEN": "s3cret-token"},
    )
    assert by_environment.returncode == 0, by_environment.stderr
    wrong = subprocess.run(
        base,
        capture_output=True,
        text=True,
        timeout=300,
        env={**environ, "REWARDKIT_SERVE_TOKEN": "guess"},
    )
    assert wrong.returncode == 2, wrong.stderr
    assert "sent a token it does not accept" in wrong.stderr


def test_a_token_file_needs_a_reward_url_and_must_be_readable(tmp_path: Path) -> None:
    alone = subprocess.run(
        _eval_command("--reward-token-file", str(tmp_path / "t")),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert alone.returncode == 2
    assert "--reward-token-file needs --reward-url" in alone.stderr
    missing = subprocess.run(
        _eval_command(
            "--reward-url", "http://127.0.0.1:9", "--reward-token-file", str(tmp_path / "t")
        ),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert missing.returncode == 2
    assert "--reward-token-file: cannot read the token file" in missing.stderr
