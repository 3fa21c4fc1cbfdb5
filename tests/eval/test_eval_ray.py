"""`--executor ray` against a local Ray instance started by the test (one small run).

The run happens in a child Python process so Ray's gRPC threads never live in the test
process (forking worker pools after gRPC has started hangs)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import json, ray
    from rewardkit.evaluation import run_math_eval, sample_path

    rows = [json.loads(line) for line in sample_path().read_text().splitlines()][:24]
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        streamed = []
        on_ray = run_math_eval(rows, executor="ray", chunk_size=4, on_result=lambda r: streamed.append(r.id))
    finally:
        ray.shutdown()
    local = run_math_eval(rows, workers=0)
    print(json.dumps({
        "ids": sorted(row["id"] for row in rows),
        "streamed": sorted(streamed),
        "ray": {r.id: [r.outcome, r.reason] for r in on_ray.results},
        "local": {r.id: [r.outcome, r.reason] for r in local.results},
        "executor": on_ray.report["timings"]["executor"],
        "scores": [on_ray.summary.score, local.summary.score],
    }))
    """
)


def test_ray_executor_grades_like_local_grading() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["streamed"] == result["ids"]  # every case came back once
    assert result["ray"] == result["local"]
    assert result["executor"] == "ray executor"
    assert result["scores"][0] == result["scores"][1]
