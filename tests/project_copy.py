"""A copy of this checkout's working tree, without caches, builds or environments.

Tests that build or install the project work on a copy, so that nothing (an ``*.egg-info``, a
``build/``) is written into the checkout, and uncommitted changes are what they test.
"""

from __future__ import annotations

import shutil
from pathlib import Path

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
