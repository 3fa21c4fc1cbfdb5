"""``--rewardkit-regen``: rewrite the ``expect`` value of a reward case in place.

Only that value changes: TOML files are edited with tomlkit, which keeps comments,
order and formatting; in JSON Lines only the case's own line is rewritten.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_rewardkit.golden_files import RewardCase


def _plain(value: Any) -> Any:
    """An extras value as TOML/JSON can hold it (enums as their text, tuples as lists)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    return str(value)


def new_expect(case: RewardCase, result: Any) -> float | dict[str, Any]:
    """The ``expect`` value the current result gives, in the shape the case already uses.

    A number stays a number; a table keeps its keys (``reward`` and the extras it lists),
    dropping those the reward no longer returns or that TOML cannot hold (None).
    """
    reward = float(result.reward)
    if not isinstance(case.expect, Mapping):
        return reward
    table: dict[str, Any] = {"reward": reward}
    for key in case.expect:
        if key != "reward" and key in result.extras:
            value = _plain(result.extras[key])
            if value is not None:
                table[key] = value
    return table


def _rewrite_toml(path: Path, index: int, value: float | dict[str, Any]) -> None:
    import tomlkit
    from tomlkit.items import InlineTable, Table

    document = tomlkit.parse(path.read_text(encoding="utf-8"))
    case = document["reward"][index]  # type: ignore[index]
    old = case.get("expect")
    if isinstance(value, dict) and isinstance(old, (InlineTable, Table)):
        # Update the table in place so its style (inline or [reward.expect]) and spacing stay.
        for key in [key for key in old if key not in value]:
            del old[key]
        for key, item in value.items():
            old[key] = item
    elif isinstance(value, dict):
        table = tomlkit.inline_table()
        table.update(value)
        case["expect"] = table
    else:
        case["expect"] = value
    path.write_text(tomlkit.dumps(document), encoding="utf-8")


def _rewrite_jsonl(path: Path, line: int, value: float | dict[str, Any]) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    original = lines[line - 1]
    ending = original[len(original.rstrip("\r\n")) :]
    data = json.loads(original)
    data["expect"] = value
    lines[line - 1] = json.dumps(data, ensure_ascii=False) + ending
    path.write_text("".join(lines), encoding="utf-8")


def rewrite_expect(case: RewardCase, value: float | dict[str, Any]) -> None:
    """Write ``value`` as the ``expect`` of ``case`` in its file, leaving the rest unchanged."""
    if case.path.suffix.lower() == ".toml":
        _rewrite_toml(case.path, case.index, value)
    else:
        _rewrite_jsonl(case.path, case.line, value)
