"""Helpers of the VS Code extension tests: paths, running tools, and skip-or-fail for missing ones.

A missing tool skips with its reason on a developer's machine and fails under ``CI=true``,
so CI never passes by skipping.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXTENSION_DIR = REPO / "vscode-extension"
FAKE_PYTHON_EXTENSION = Path(__file__).resolve().parent / "fake-python-extension"
INSTALL_SCRIPT = EXTENSION_DIR / "scripts" / "install-code-server.sh"
ARTIFACTS = REPO / "test-artifacts"


def in_ci() -> bool:
    """Whether missing tools must fail instead of skip."""
    return os.environ.get("CI", "").lower() == "true"


def missing(reason: str) -> None:
    """Skip the test with ``reason``, or fail it under ``CI=true``."""
    if in_ci():
        pytest.fail(f"CI=true and {reason}", pytrace=False)
    pytest.skip(reason)


def require_executable(name: str, hint: str) -> str:
    """The path of ``name`` on PATH, or skip/fail naming how to get it."""
    path = shutil.which(name)
    if path is None:
        missing(f"`{name}` is not on PATH ({hint})")
    assert path is not None
    return path


def tool_env(**extra: str) -> dict[str, str]:
    """Environment for npm/npx/node subprocesses: quiet, non-interactive, this Python first."""
    env = dict(os.environ)
    env.update(
        npm_config_yes="true",
        npm_config_update_notifier="false",
        npm_config_fund="false",
        npm_config_audit="false",
        REWARDKIT_TEST_PYTHON=sys.executable,
    )
    env.update(extra)
    return env


def run(
    command: Sequence[str], *, cwd: Path, timeout: float, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``command``; on failure, fail the test with the command and the end of its output."""
    completed = subprocess.run(
        list(command),
        cwd=cwd,
        env=env or tool_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if completed.returncode != 0:
        output = (completed.stdout + "\n" + completed.stderr).strip().splitlines()
        tail = "\n".join(output[-60:])
        pytest.fail(
            f"`{' '.join(command)}` in {cwd} exited {completed.returncode}:\n{tail}", pytrace=False
        )
    return completed


def run_install_script(timeout: float) -> subprocess.CompletedProcess[str]:
    """Run `vscode-extension/scripts/install-code-server.sh`; its last stdout line is the executable."""
    return subprocess.run(
        ["bash", str(INSTALL_SCRIPT)],
        env=tool_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
