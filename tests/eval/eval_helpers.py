"""Helpers for the `rewardkit eval` tests (a uniquely named module: several test folders have
a conftest.py, so `from conftest import ...` could find another folder's)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = PROJECT_ROOT / "test-artifacts"


def write_jsonl(path: Path, rows: Iterable[Mapping[str, Any] | str]) -> Path:
    """Write rows (dicts, or raw strings for malformed lines) one per line."""
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write((row if isinstance(row, str) else json.dumps(row)) + "\n")
    return path


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Parse every line of a JSONL file."""
    return [
        json.loads(line)
        for line in Path(path).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


def cli_command(*args: str) -> list[str]:
    """The CLI as a subprocess command (`python -m rewardkit eval math ...`)."""
    return [sys.executable, "-m", "rewardkit", "eval", "math", *args]
