"""Fixtures of the runtime tests: every test gets the registry back as it found it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rewardkit.runtime.define import registry


@pytest.fixture(autouse=True)
def isolated_registry() -> Iterator[None]:
    """Restore the reward registry after each test, so tests may register any name."""
    saved = dict(registry._registry)
    yield
    registry._registry.clear()
    registry._registry.update(saved)
