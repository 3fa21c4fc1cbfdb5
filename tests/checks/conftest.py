"""Fixtures of the checks tests: a small project with a bad and a good reward."""

from __future__ import annotations

from pathlib import Path

import pytest

from .cli_helpers import BAD, GOOD


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.rewardkit]\ntask_fields = ["answer"]\n', encoding="utf-8"
    )
    (tmp_path / "rewards").mkdir()
    (tmp_path / "rewards" / "bad.py").write_text(BAD, encoding="utf-8")
    (tmp_path / "rewards" / "good.py").write_text(
        GOOD.replace("'qa'", "'qa_good'"), encoding="utf-8"
    )
    return tmp_path
