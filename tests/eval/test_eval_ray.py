"""`--executor ray` against a local Ray instance started by the test (one small run)."""

from __future__ import annotations

import json
import os

import pytest

from rewardkit.evaluation import run_math_eval, sample_path


@pytest.fixture(scope="module")
def local_ray():
    if os.environ.get("CI") == "true":
        import ray
    else:
        ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


def test_ray_executor_grades_like_local_workers(local_ray) -> None:
    rows = [json.loads(line) for line in sample_path().read_text().splitlines()][:24]
    streamed: list[str] = []
    on_ray = run_math_eval(rows, executor="ray", chunk_size=4, on_result=lambda r: streamed.append(r.id))
    local = run_math_eval(rows, workers=0)
    assert sorted(streamed) == sorted(row["id"] for row in rows)
    assert {r.id: (r.outcome, r.reason) for r in on_ray.results} == {r.id: (r.outcome, r.reason) for r in local.results}
    assert on_ray.report["timings"]["executor"] == "ray executor"
    assert on_ray.summary.score == local.summary.score
