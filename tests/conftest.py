"""Shared test configuration: pytester for the plugin's real pytest runs, the ``slow``
marker on the tests listed in slow_tests.txt (``pytest -m "not slow"``: the inner loop), and
``PYTHONPATH``/``sys.path`` kept from leaking out of a test."""

from __future__ import annotations

import os
import signal
import sys
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


@pytest.fixture(autouse=True)
def _import_path_stays_in_the_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """An in-process ``rewardkit serve`` service adds its app directory (the checkout, by default)
    to ``PYTHONPATH`` and ``sys.path``, as it must for its workers; undo that after every test,
    wherever it is, so that later tests' fresh environments (the wheel's venv, the VS Code
    test's bare venv) do not find this checkout's rewardkit through it."""
    if "PYTHONPATH" in os.environ:
        monkeypatch.setenv("PYTHONPATH", os.environ["PYTHONPATH"])
    else:
        monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.setattr(sys, "path", list(sys.path))
