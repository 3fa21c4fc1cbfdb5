"""Test helpers of the adapter tests: optional heavy modules that CI must have."""

from __future__ import annotations

import importlib
import os
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
