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


def pre_commit_try_repo(
    tmp_path: Path, hook: str, files: dict[str, str]
) -> tuple[Path, list[str], dict[str, str]]:
    """A user's git repository holding ``files`` (staged), and the ``pre-commit try-repo``
    command (with its environment) that runs this checkout's ``hook`` on it.

    ``try-repo`` installs the source repository's committed HEAD, so the working tree is copied
    into a temporary git repository and committed there (it works before the project's own
    commit)."""
    required_tool("git")
    pre_commit = required_tool("pre-commit")
    hook_source = copy_project(tmp_path / "rewardkit-src")
    assert (hook_source / ".pre-commit-hooks.yaml").is_file()
    git("init", "-q", cwd=hook_source)
    git("add", "-A", cwd=hook_source)
    git("commit", "-q", "-m", "snapshot", cwd=hook_source)
    user_repo = tmp_path / "user-repo"
    user_repo.mkdir()
    git("init", "-q", cwd=user_repo)
    for name, text in files.items():
        (user_repo / name).write_text(text, encoding="utf-8")
    git("add", "-A", cwd=user_repo)
    environment = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    environment.pop("VIRTUAL_ENV", None)
    command = [pre_commit, "try-repo", str(hook_source), hook, "--all-files", "--color", "never"]
    return user_repo, command, environment
