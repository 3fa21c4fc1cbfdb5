"""`RemoteGrader.harness_seconds`: the HTTP time the eval runner adds to a case's kill deadline,
read from the grader's `RemoteReward` (every attempt timing out, the backoffs, a health probe)."""

from __future__ import annotations

import pytest

from rewardkit.serve.client import RemoteReward
from rewardkit.serve.grading import RemoteGrader


def test_harness_seconds_cover_every_attempt_the_backoffs_and_a_probe() -> None:
    grader = RemoteGrader(
        "http://127.0.0.1:9/v1/rewards/math_reward", request_timeout=60.0, retries=2, backoff=0.25
    )
    # 3 attempts of 60 s, backoffs of 0.25 s and 0.5 s, 5 s for the health probe
    assert grader.harness_seconds == pytest.approx(185.75)
    assert (grader.served_name, grader.base) == ("math_reward", "http://127.0.0.1:9")


def test_backoffs_are_capped_at_ten_seconds() -> None:
    remote = RemoteReward("http://127.0.0.1:9", timeout=1.0, retries=6, backoff=1.0)
    # waits 1, 2, 4, 8, 10, 10 s between 7 attempts of at most 1 s
    assert remote.longest_call_seconds == pytest.approx(7 * 1.0 + 35.0)
