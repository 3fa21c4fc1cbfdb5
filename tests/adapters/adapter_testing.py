"""Test helpers of the adapter tests: optional heavy modules and ``../shared`` files that CI must have."""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from types import ModuleType

import pytest


def require_module(name: str, why: str) -> ModuleType:
    """Import ``name``, or skip the test; under ``CI=true`` a missing module fails it instead."""
    try:
        return importlib.import_module(name)
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{name} is not installed but CI needs it: {why}")
        pytest.skip(f"{name} is not installed ({why})")


REPOSITORY = Path(__file__).resolve().parents[2]


def shared_directory() -> Path:
    """``../shared`` beside the repository (``REWARDKIT_SHARED`` overrides it, e.g. for a git worktree)."""
    override = os.environ.get("REWARDKIT_SHARED")
    return Path(override) if override else REPOSITORY.parent / "shared"


def require_shared(relative: str, why: str) -> Path:
    """The path ``relative`` under ``../shared``, or skip naming what is missing; under
    ``CI=true`` a missing path fails the test instead."""
    path = shared_directory() / relative
    if not path.exists():
        message = f"{path} is missing ({why}); set REWARDKIT_SHARED to the shared directory"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path
