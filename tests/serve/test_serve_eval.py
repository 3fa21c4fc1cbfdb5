"""`rewardkit eval math --reward-url`: the eval runner grades with a served reward."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ThreadServer

from rewardkit.evaluation.cli import main as eval_main
from rewardkit.failures import FailureTag
from rewardkit.serve import RewardSpec, ServeConfig, create_app
from rewardkit.serve.grading import RemoteGrader, split_reward_url

CASES = [
    {"id": "right", "response": "so \\boxed{\\frac{1}{2}}", "gold": "0.5"},
    {"id": "wrong", "response": "\\boxed{3}", "gold": "4"},
    {"id": "none", "response": "no box here", "gold": "4"},
]


def test_split_reward_url() -> None:
    assert split_reward_url("http://rm:8000") == ("http://rm:8000", None)
    assert split_reward_url("http://rm:8000/v1/rewards/math_reward/") == ("http://rm:8000", "math_reward")
    assert split_reward_url("https://rm/prefix/v1/rewards/acc") == ("https://rm/prefix", "acc")
    with pytest.raises(ValueError, match="not an http"):
        split_reward_url("rm:8000")


def test_eval_grades_with_the_served_math_reward(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "cases.jsonl"
    data.write_text("".join(json.dumps(case) + "\n" for case in CASES))
    output = tmp_path / "results.jsonl"
    with ThreadServer(create_app(ServeConfig(rewards=(RewardSpec.parse("math_reward"),)))) as url:
        grader = RemoteGrader(url + "/v1/rewards/math_reward")
        assert grader("\\boxed{4}", "4").correct
        status = eval_main(["math", str(data), "--reward-url", url, "--workers", "0", "--output", str(output)])
    assert status == 0, capsys.readouterr().err
    results = {row["id"]: row for row in map(json.loads, output.read_text().splitlines()) if "id" in row}
    assert results["right"]["passed"] is True
    assert results["wrong"]["tag"] == FailureTag.WRONG_ANSWER.value
    assert results["none"]["tag"] == FailureTag.NO_ANSWER.value


def test_an_unreachable_server_is_our_side_failure(tmp_path: Path) -> None:
    data = tmp_path / "cases.jsonl"
    data.write_text(json.dumps(CASES[0]) + "\n")
    output = tmp_path / "results.jsonl"
    status = eval_main(["math", str(data), "--reward-url", "http://127.0.0.1:9", "--workers", "0", "--output", str(output)])
    assert status == 3  # nothing could be scored: every case a HARNESS_ERROR
    (row,) = [row for row in map(json.loads, output.read_text().splitlines()) if "id" in row]
    assert row["tag"] == FailureTag.HARNESS_ERROR.value


def test_reward_url_and_grader_are_exclusive(capsys: pytest.CaptureFixture[str]) -> None:
    status = eval_main(["math", "--reward-url", "http://rm:8000", "--grader", "rewardkit.math:grade"])
    assert status == 2
    assert "give one" in capsys.readouterr().err
