"""The predefined fields ``prompt``, ``completion``, ``completion_ids`` and ``completion_length``:
one list (``rewardkit.runtime.define.fields``) for the runtime and ``rewardkit check``."""

from __future__ import annotations

import pytest

from rewardkit import PREDEFINED_FIELDS, FieldCollisionError, build_fields
from rewardkit.checks import check_source
from rewardkit.checks.config import CheckConfig, TaskField

NEW_FIELDS = ("prompt", "completion", "completion_ids", "completion_length")

SOURCE = """\
from rewardkit import reward

@reward
def uses_them(prompt: str, completion: list, completion_ids: list, completion_length: int, answer: str) -> float:
    return 1.0

@reward
def misspelt(promt: str) -> float:
    return 1.0
"""


def test_they_are_predefined_fields() -> None:
    assert set(NEW_FIELDS) <= set(PREDEFINED_FIELDS)
    fields = build_fields({"answer": "4"}, prompt="q", completion=[], completion_ids=[1], completion_length=1)
    assert fields["completion_length"] == 1
    with pytest.raises(FieldCollisionError, match="'prompt'"):
        build_fields({"prompt": "a task column"}, where="data.jsonl:3")


def test_rewardkit_check_knows_them() -> None:
    config = CheckConfig(task_fields={"answer": TaskField("answer", "pyproject")})
    diagnostics = check_source(SOURCE, "rewards.py", config)
    assert [(d.code, d.line) for d in diagnostics] == [("RK102", 8)]
    assert "`prompt`" in diagnostics[0].message
