"""Helpers for the `rewardkit eval` tests (a uniquely named module: several test folders have
a conftest.py, so `from conftest import ...` could find another folder's)."""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = PROJECT_ROOT / "test-artifacts"


def write_jsonl(path: Path, rows: Iterable[Mapping[str, Any] | str]) -> Path:
    """Write rows (dicts, or raw strings for malformed lines) one per line."""
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write((row if isinstance(row, str) else json.dumps(row)) + "\n")
    return path


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Parse every line of a JSONL file (a results file holds case rows only)."""
    records = [
        json.loads(line)
        for line in Path(path).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    assert not any("rewardkit_results" in record for record in records), "metadata in the rows"
    return records


def read_metadata(path: Path) -> dict[str, Any]:
    """The run's metadata of a results file (the hidden file beside it)."""
    return json.loads((path.parent / f".{path.name}.rewardkit.json").read_text(encoding="utf-8"))


def require_module(name: str, why: str) -> Any:
    """Import `name`, or skip the test naming it; under `CI=true` a missing module fails it."""
    try:
        return importlib.import_module(name)
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{name} is not installed but CI needs it: {why}")
        pytest.skip(f"needs {name} ({why})")


def cli_command(*args: str) -> list[str]:
    """The CLI as a subprocess command (`python -m rewardkit eval math ...`)."""
    return [sys.executable, "-m", "rewardkit", "eval", "math", *args]


def cli_env() -> dict[str, str]:
    """The environment of a CLI subprocess: this folder importable (test graders for
    `--grader eval_test_graders:...`), the inherited PYTHONPATH kept after it."""
    inherited = os.environ.get("PYTHONPATH")
    path = [str(Path(__file__).parent), *([inherited] if inherited else [])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path)}


def decoded_report_data(page: str) -> str:
    """The cases embedded (compressed) in an HTML report, as JSON text (to search it)."""
    from rewardkit.evaluation.main.html_report import decode_data

    return json.dumps(decode_data(page), ensure_ascii=False)
