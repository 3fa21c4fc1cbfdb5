"""``rewardkit serve`` (the real CLI in a subprocess) serves ``code_reward`` (issue 35,
acceptance): its JSON API and OpenRLHF's ``/get_reward``, a failing sample first, each score
what ``grade_code`` gives called directly (the samples of tests/code/code_samples.py)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "code"))  # the code tests' samples

from code_samples import SAMPLES, as_label, direct_scores

from rewardkit.code import code_reward

TESTS_FIELD = next(name for name in code_reward.parameters if name != "final_response")
PROMPT = "Write the program.\n"


def test_serve_scores_code_as_grade_code_does(start_server: Callable[..., object]) -> None:
    server = start_server("rewardkit.code:code_reward")
    url = server.url  # type: ignore[attr-defined]
    expected = direct_scores()
    assert expected[0] == 0.0  # the first sample fails

    samples = [{"final_response": response, TESTS_FIELD: tests} for response, tests in SAMPLES]
    scored = httpx.post(
        f"{url}/v1/rewards/{code_reward.name}/score", json={"samples": samples}, timeout=120
    )
    assert scored.status_code == 200, scored.text
    results = scored.json()["results"]
    assert [item["reward"] for item in results] == pytest.approx(expected)
    assert all(item["failure"] is None for item in results)

    queries = [PROMPT + response for response, _ in SAMPLES]
    labels = [as_label(TESTS_FIELD, tests) for _, tests in SAMPLES]
    payload = {"query": queries, "prompts": [PROMPT] * len(SAMPLES), "labels": labels}
    openrlhf = httpx.post(f"{url}/get_reward", json=payload, timeout=120)
    assert openrlhf.status_code == 200, openrlhf.text
    assert openrlhf.json()["rewards"] == pytest.approx(expected)

    malformed = [{"final_response": SAMPLES[1][0], TESTS_FIELD: {"inputs": ["1\n"]}}, samples[1]]
    failed = httpx.post(
        f"{url}/v1/rewards/{code_reward.name}/score", json={"samples": malformed}, timeout=120
    )
    assert failed.status_code == 200, failed.text
    first, second = failed.json()["results"]
    assert first["failure"] is not None  # the tests that cannot be read fail their sample only
    assert json.dumps(first["failure"])
    assert second["reward"] == pytest.approx(expected[1])
