"""rewardkit's own code, examples and tests pass ``rewardkit check`` (deliberately broken rewards
in tests carry an inline ``# rewardkit: ignore[...]``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_repository_passes_its_own_static_checks() -> None:
    paths = ["rewardkit", "lsp", "pytest_plugin", "examples", "tests", "benchmarks"]
    result = subprocess.run(
        [sys.executable, "-m", "rewardkit", "check", *paths],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
