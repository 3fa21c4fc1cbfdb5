"""rewardkit's own code, examples and tests pass ``rewardkit check`` (deliberately broken rewards
in tests carry an inline ``# rewardkit: ignore[...]``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


DELIBERATELY_BROKEN = ROOT / "tests" / "checks" / "fix_golden"
"""Broken reward modules and their fixed forms, compared byte for byte by test_fix_golden.py
(an inline ignore would change them; they have their own pyproject.toml, so no exclude reaches)."""


def _tests_but_the_deliberately_broken() -> list[str]:
    paths = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if DELIBERATELY_BROKEN not in path.parents:
            paths.append(str(path.relative_to(ROOT)))
    return paths


def test_the_repository_passes_its_own_static_checks() -> None:
    paths = ["rewardkit", "lsp", "pytest_plugin", "examples", "benchmarks", *_tests_but_the_deliberately_broken()]
    result = subprocess.run(
        [sys.executable, "-m", "rewardkit", "check", *paths],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
