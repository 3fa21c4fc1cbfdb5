"""Shared set-up for the math grader's tests."""

from __future__ import annotations

import pytest

from rewardkit.math import warm_up


@pytest.fixture(scope="session", autouse=True)
def warm_symbolic_workers() -> None:
    """Start the default sandbox's workers before the first test, as an RL user calls ``warm_up()``:
    tests of verdicts must not see cold-start timeouts (the cold start has tests of its own, in fresh
    processes and with fresh sandboxes)."""
    warm_up()
