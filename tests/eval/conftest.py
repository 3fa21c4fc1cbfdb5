"""Fixtures for the `rewardkit eval` tests: JSONL writing and running the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = PROJECT_ROOT / "test-artifacts"


def write_jsonl(path: Path, rows: Iterable[Mapping[str, Any] | str]) -> Path:
    """Write rows (dicts, or raw strings for malformed lines) one per line."""
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write((row if isinstance(row, str) else json.dumps(row)) + "\n")
    return path


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Parse every line of a JSONL file."""
    return [
        json.loads(line)
        for line in Path(path).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


def cli_command(*args: str) -> list[str]:
    """The CLI as a subprocess command (`python -m rewardkit eval math ...`)."""
    return [sys.executable, "-m", "rewardkit", "eval", "math", *args]


@pytest.fixture
def run_cli(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run `rewardkit eval math ARGS` in a subprocess with stdout/stderr captured (not a TTY)."""

    def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent)}
        return subprocess.run(
            cli_command(*args),
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=tmp_path,
            env=env,
        )

    return run


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    """`test-artifacts/` at the project root (gitignored): screenshots and the like."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
