"""HumanEval's 164 canonical programs pass inside both sandboxes, and a broken variant of each
(``return None`` as the body) fails: the sandboxes run real programs faithfully (stdlib, limits)."""

from __future__ import annotations

import gzip
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "adapters"))

from adapter_testing import require_shared
from grader_backends import require_backend

from rewardkit.code.sandbox import Job, Limits, get_sandbox


def _problems() -> list[dict]:
    path = require_shared("data/humaneval/HumanEval.jsonl.gz", "HumanEval's problems (MIT)")
    with gzip.open(path, "rt", encoding="utf-8") as stream:
        return [json.loads(line) for line in stream if line.strip()]


def _program(problem: dict, body: str) -> bytes:
    return (
        f"{problem['prompt']}{body}\n{problem['test']}\ncheck({problem['entry_point']})\n".encode()
    )


@pytest.mark.parametrize("backend", ["bwrap", "wasm"])
def test_canonical_solutions_pass_and_broken_ones_fail(backend: str) -> None:
    problems = _problems()
    require_backend(backend)
    sandbox = get_sandbox(backend, workers=2)
    limits = Limits(timeout=60)

    def exit_code(program: bytes) -> int | None:
        outcome = sandbox.run(Job({"main.py": program}, "main.py", limits=limits))
        assert outcome.sandbox_error is None
        assert not outcome.timed_out
        return outcome.exit_code

    try:
        with ThreadPoolExecutor(2) as pool:
            canonical = list(
                pool.map(exit_code, [_program(p, p["canonical_solution"]) for p in problems])
            )
            broken = list(pool.map(exit_code, [_program(p, "    return None\n") for p in problems]))
    finally:
        sandbox.close()
    assert len(problems) == 164
    assert [p["task_id"] for p, code in zip(problems, canonical, strict=True) if code != 0] == []
    assert [p["task_id"] for p, code in zip(problems, broken, strict=True) if code == 0] == []
