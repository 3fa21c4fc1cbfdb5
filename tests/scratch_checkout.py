"""Scratch copies of this checkout and scratch git repositories, for tests that build, install
or commit: nothing (an ``*.egg-info``, a ``build/``, a commit) is written into the checkout, and
its uncommitted changes are what they test."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]
NOT_COPIED = shutil.ignore_patterns(
    ".git",
    ".venv",
    "venv",
    "node_modules",
    "__pycache__",
    "*.egg-info",
    "build",
    "dist",
    ".pytest_cache",
    ".ruff_cache",
    ".mypy_cache",
    ".hypothesis",
    "test-artifacts",
    "*.vsix",
    ".vscode-test",
)


def copy_project(destination: Path) -> Path:
    """Copy the working tree to ``destination`` (which must not exist) and return it."""
    shutil.copytree(PROJECT, destination, ignore=NOT_COPIED)
    return destination


def required_tool(name: str) -> str:
    """The path of command ``name`` (also looked up next to this Python); a failure in CI
    when it is missing, a skip naming it elsewhere."""
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{name} is required in CI")
        pytest.skip(f"{name} is not installed")
    return found


def git(*args: str, cwd: Path) -> str:
    """Run git in ``cwd`` with a throwaway identity and no signing; its stdout."""
    return subprocess.run(
        [
            "git",
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "-c",
            "commit.gpgsign=false",
            *args,
        ],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
