"""pytest plugin for rewardkit: golden answer pairs, golden reward cases, fixtures.

``golden_params`` loads a golden file's cases for ``pytest.mark.parametrize``, for teams
that keep their checks in Python files::

    @pytest.mark.parametrize("case", golden_params("data/pairs.toml"))
    def test_pairs(case, golden):
        golden.check(case)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Literal

from pytest_rewardkit.golden_files import GoldenFileError, PairCase, RewardCase, load_golden_file

__all__ = ["GoldenFileError", "PairCase", "RewardCase", "golden_params", "load_golden_file"]


def golden_params(path: str | Path, *, kind: Literal["pair", "reward"] | None = None) -> list[Any]:
    """The cases of a golden file as ``pytest.param``s with the cases' ids (for ``parametrize``).

    A relative ``path`` is taken from the calling test file's folder. ``kind`` keeps only
    pairs or only reward cases. Name such files other than ``golden_*`` (e.g.
    ``pairs.toml``) so the plugin does not also collect them.
    """
    import pytest

    file_path = Path(path)
    if not file_path.is_absolute():
        caller = Path(sys._getframe(1).f_code.co_filename)
        file_path = caller.parent / file_path
    cases = load_golden_file(file_path).cases
    return [
        pytest.param(
            case,
            id=case.id,
            marks=() if case.xfail is None else pytest.mark.xfail(reason=case.xfail, strict=True),
        )
        for case in cases
        if kind is None or case.kind == kind
    ]
