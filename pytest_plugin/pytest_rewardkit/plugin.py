"""pytest entry point (``pytest11``) of rewardkit: golden files, fixtures and options.

Collects ``golden_*.toml``/``golden_*.jsonl`` files (one test per case), adds the
``golden`` and ``reward_case`` fixtures, ``--rewardkit-regen`` and a summary section.
Imports stay light: this module loads in every pytest run where rewardkit is installed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_rewardkit.fixtures import golden, reward_case
from pytest_rewardkit.items import GoldenFile
from pytest_rewardkit.summary import write_summary

DEFAULT_GOLDEN_FILES = ["golden_*.toml", "golden_*.jsonl"]

__all__ = ["golden", "reward_case"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rewardkit", "rewardkit: golden answer pairs and reward cases")
    group.addoption(
        "--rewardkit-regen",
        action="store_true",
        dest="rewardkit_regen",
        default=False,
        help="rewrite the 'expect' values of golden reward cases that differ from the current "
        "reward (equivalence labels are never rewritten); rewritten cases still fail, so "
        "review the diff and rerun",
    )
    parser.addini(
        "rewardkit_golden_files",
        type="args",
        default=list(DEFAULT_GOLDEN_FILES),
        help="glob patterns of rewardkit golden files to collect (default: golden_*.toml golden_*.jsonl)",
    )


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> GoldenFile | None:
    patterns = parent.config.getini("rewardkit_golden_files")
    if any(file_path.match(pattern) for pattern in patterns):
        return GoldenFile.from_parent(parent, path=file_path)
    return None


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    write_summary(terminalreporter, config)
