"""Fixtures for the `rewardkit eval` tests: running the real CLI, the artifacts folder."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from eval_helpers import ARTIFACTS, cli_command, cli_env


@pytest.fixture
def run_cli(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run `rewardkit eval math ARGS` in a subprocess with stdout/stderr captured (not a TTY)."""

    def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        env = cli_env()
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
