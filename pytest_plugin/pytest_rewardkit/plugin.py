"""pytest entry point (``pytest11``) of rewardkit: golden files, fixtures and options.

Collects ``golden_*.toml``/``golden_*.jsonl`` files (one test per case), adds the
``golden`` and ``reward_case`` fixtures, ``--rewardkit-regen`` and a summary section.
This module loads in every pytest run where rewardkit is installed, so it imports
nothing of rewardkit until a golden file or one of its fixtures is used: a project
without golden files pays nothing and sees nothing.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_rewardkit.summary import write_summary

if TYPE_CHECKING:
    from pytest_rewardkit.fixtures import GoldenChecker, RewardCaseRunner
    from pytest_rewardkit.items import GoldenFile

DEFAULT_GOLDEN_FILES = ["golden_*.toml", "golden_*.jsonl"]


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


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("rewardkit_regen", False) and importlib.util.find_spec("tomlkit") is None:
        raise pytest.UsageError(
            "--rewardkit-regen needs tomlkit to rewrite golden TOML files keeping their "
            "comments and layout: pip install 'rewardkit[testing]'"
        )


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> GoldenFile | None:
    patterns = parent.config.getini("rewardkit_golden_files")
    if any(file_path.match(pattern) for pattern in patterns):
        from pytest_rewardkit.items import GoldenFile

        return GoldenFile.from_parent(parent, path=file_path)
    return None


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    write_summary(terminalreporter, config)


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> GoldenChecker:
    """``golden.assert_equivalent(a, b, policy=...)`` / ``assert_not_equivalent`` / ``check(case)``."""
    from pytest_rewardkit.fixtures import GoldenChecker

    return GoldenChecker(request.config)


@pytest.fixture
def reward_case() -> Iterator[RewardCaseRunner]:
    """``reward_case(reward, **fields) -> RewardResult`` for any reward, sync or async."""
    from pytest_rewardkit.fixtures import RewardCaseRunner

    runner = RewardCaseRunner()
    yield runner
    runner.close()
