"""`--executor ray` against a local Ray instance started by the test (one small run).

The run happens in a child Python process so Ray's gRPC threads never live in the test
process (forking worker pools after gRPC has started hangs)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent(
    """
    import json, sys, ray
    from rewardkit.evaluation import run_math_eval, sample_path

    rows = [json.loads(line) for line in sample_path().read_text().splitlines()][:24]
    # a file whose line 2 has a bare CR between JSON tokens (whitespace, not a line break)
    with open(sys.argv[1], "wb") as handle:
        handle.write(b'{"id": "a", "response": "\\\\\\\\boxed{1}", "gold": "1"}\\n')
        handle.write(b'{"id": "cr",\\r"response": "\\\\\\\\boxed{2}", "gold": "2"}\\n')
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        streamed = []
        on_ray = run_math_eval(rows, executor="ray", chunk_size=4, on_result=lambda r: streamed.append(r.id))
        file_on_ray = run_math_eval(sys.argv[1], executor="ray")
    finally:
        ray.shutdown()
    local = run_math_eval(rows, workers=0)
    file_local = run_math_eval(sys.argv[1], workers=0)
    print(json.dumps({
        "file_on_ray": [[r.id, r.line, r.outcome] for r in file_on_ray.results],
        "file_local": [[r.id, r.line, r.outcome] for r in file_local.results],
        "ids": sorted(row["id"] for row in rows),
        "streamed": sorted(streamed),
        "ray": {r.id: [r.outcome, r.reason] for r in on_ray.results},
        "local": {r.id: [r.outcome, r.reason] for r in local.results},
        "executor": on_ray.report["timings"]["executor"],
        "scores": [on_ray.summary.score, local.summary.score],
    }))
    """
)


def test_ray_executor_grades_like_local_grading(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "cr.jsonl")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["streamed"] == result["ids"]  # every case came back once
    assert result["ray"] == result["local"]
    assert result["executor"] == "ray executor"
    assert result["scores"][0] == result["scores"][1]
    # one line reader for every executor (issue 27 item 14): the bare CR is not a line break
    assert result["file_on_ray"] == result["file_local"] == [["a", 1, "PASS"], ["cr", 2, "PASS"]]


def test_ray_executor_without_ray_is_a_usage_error(tmp_path: Path) -> None:
    # An install without the ray extra: one line naming the extra, exit 2, no output file.
    output = tmp_path / "results.jsonl"
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules["ray"] = None  # as if the extra were not installed
        from rewardkit.cli import main
        sys.exit(main(["eval", "math", "--executor", "ray", "--output", {str(output)!r}]))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 2, proc.stderr
    checkout = Path(__file__).resolve().parents[2]
    assert f'pip install "{checkout}[ray]"' in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not output.exists()
