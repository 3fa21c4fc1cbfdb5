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
# The modes of rewardkit.runtime.define.options, without importing rewardkit (see above).
EXECUTION_MODES = ("inline", "thread", "process")
_PREVIOUS_OPTIONS = pytest.StashKey[Any]()


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
        "rewardkit_execution",
        type="string",
        default="",
        help="how golden reward cases and rewardkit.testing run rewards: inline, thread or process "
        "(default: each reward's own @reward(execution=...), else thread, as calculate_rewards "
        "runs it in training); set it to what your training passes",
    )
    parser.addini(
        "rewardkit_timeout",
        type="string",
        default="",
        help="seconds per reward call in golden reward cases and rewardkit.testing (default: each "
        "reward's own @reward(timeout=...), else none); set it to what your training passes",
    )
    parser.addini(
        "rewardkit_golden_files",
        type="args",
        default=list(DEFAULT_GOLDEN_FILES),
        help="glob patterns of rewardkit golden files to collect (default: golden_*.toml golden_*.jsonl)",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("rewardkit_regen", False) and importlib.util.find_spec("tomlkit") is None:
        from rewardkit.install import install_command  # only on this error: the plugin stays light

        raise pytest.UsageError(
            "--rewardkit-regen needs tomlkit to rewrite golden TOML files keeping their "
            f"comments and layout: {install_command('testing')}"
        )
    execution = config.getini("rewardkit_execution").strip() or None
    timeout = config.getini("rewardkit_timeout").strip() or None
    if execution is None and timeout is None:
        return  # rewards run as their definitions say: nothing to import
    from rewardkit.testing.calling import RunOptions, configure

    if execution not in (None, *EXECUTION_MODES):
        raise pytest.UsageError(
            f"ini option rewardkit_execution must be one of {', '.join(EXECUTION_MODES)}, got {execution!r}"
        )
    try:
        seconds = None if timeout is None else float(timeout)
    except ValueError:
        seconds = -1.0
    if seconds is not None and not seconds > 0:
        raise pytest.UsageError(f"ini option rewardkit_timeout must be positive seconds, got {timeout!r}")
    config.stash[_PREVIOUS_OPTIONS] = configure(RunOptions(execution, seconds))


def pytest_unconfigure(config: pytest.Config) -> None:
    previous = config.stash.get(_PREVIOUS_OPTIONS, None)
    if previous is not None:
        from rewardkit.testing.calling import configure

        configure(previous)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> GoldenFile | None:
    """A golden file for each file matching the patterns that reads as one: a file that is
    clearly something else (an unrelated ``tests/data/golden_outputs.jsonl``) is left alone."""
    patterns = parent.config.getini("rewardkit_golden_files")
    if any(file_path.match(pattern) for pattern in patterns):
        from pytest_rewardkit.golden_files import is_golden_file

        if not is_golden_file(file_path):
            return None
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
