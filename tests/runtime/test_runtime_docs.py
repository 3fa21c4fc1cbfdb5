"""The runtime guide's example: embedded verbatim, and it runs and computes what it says."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from rewardkit import calculate_rewards

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "runtime" / "summary_reward.py"
GUIDE = ROOT / "docs" / "runtime.md"


def test_guide_embeds_the_example_verbatim() -> None:
    example = EXAMPLE.read_text()
    guide = GUIDE.read_text()
    block = f"<!-- begin examples/runtime/summary_reward.py -->\n```python\n{example}```\n<!-- end"
    assert block in guide


def test_example_script_runs() -> None:
    completed = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, check=False, cwd=ROOT
    )
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    assert lines[0] == "1.000  The cat sat on the mat."
    assert lines[2].startswith("{'reward/mean': ")


async def test_summary_reward_with_penalty_reads_its_task_fields() -> None:
    spec = importlib.util.spec_from_file_location("summary_reward_example", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    summary = module.summary_reward_with_penalty
    assert summary.parameters == ("final_response", "answer", "length_penalty", "max_length")

    long_response = "cat sat on mat " * 10  # f1 with "a cat sat on a mat": precision 0.1, recall 1
    samples = [
        {"final_response": "A cat sat on a mat", "answer": "a cat sat on a mat", "length_penalty": 0.5, "max_length": 100},
        {"final_response": long_response, "answer": "a cat sat on a mat", "length_penalty": 0.0, "max_length": 10},
        {"final_response": long_response, "answer": "a cat sat on a mat", "length_penalty": 0.01, "max_length": 100},
        {"final_response": long_response, "answer": "a cat sat on a mat", "length_penalty": 1.0, "max_length": 10},
    ]
    results = await calculate_rewards(summary, samples)
    f1 = 2 * 0.1 * 1.0 / 1.1
    assert results[0].reward == 1.0
    assert results[1].reward == pytest.approx(f1)  # over length, but no penalty
    assert results[2].reward == pytest.approx(f1 - 0.01 * (150 - 100) / 100)
    assert results[3].reward == 0.0  # penalty larger than the similarity: clipped at 0
