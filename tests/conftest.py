"""Shared test configuration: pytester for the plugin's real pytest runs, and the ``slow``
marker on the tests listed in slow_tests.txt (``pytest -m "not slow"``: the inner loop)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

SLOW_LIST = Path(__file__).with_name("slow_tests.txt")

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    # A run started in the background by a non-interactive shell (`cmd &`) ignores SIGINT, and
    # subprocesses inherit that: the tests that Ctrl-C a `rewardkit eval` would see it go on.
    # With a handler here, the subprocesses start with SIGINT's default action again.
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _slow_tests() -> frozenset[str]:
    lines = SLOW_LIST.read_text(encoding="utf-8").splitlines()
    return frozenset(line for line in lines if line and not line.startswith("#"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    slow = _slow_tests()
    for item in items:
        if item.nodeid in slow or item.nodeid.split("::", 1)[0] in slow:
            item.add_marker(pytest.mark.slow)
