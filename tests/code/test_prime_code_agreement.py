"""``grade_code`` agrees with verl's ``prime_code.compute_score`` on trusted programs in APPS form.

The pairs are built from HumanEval (MIT, ``../shared/data``): each problem whose ``check`` holds
asserts of the plain shape ``candidate(<literals>) == <literal>`` becomes an APPS ``fn_name``
test set in prime_code's own encoding (one JSON line per argument, the output as JSON), paired
with its canonical solution and with a broken one (``return None``), plus stdin/stdout programs
written here. Both graders see the same completion text; pass/fail must be the same on every
pair where neither side timed out. Divergences are listed below with their reasons (none so far).
"""

from __future__ import annotations

import ast
import gzip
import json
import math
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "adapters"))

from adapter_testing import require_shared

from rewardkit.code import grade_code
from rewardkit.code.sandbox import get_sandbox

try:
    from verl.utils.reward_score import prime_code
except ImportError:
    if os.environ.get("CI") == "true":
        raise
    pytest.skip(
        "verl (the frameworks extra) is not installed: prime_code is its module",
        allow_module_level=True,
    )

MAX_TESTS = 3
"""Tests per problem (prime_code re-runs a failing set test by test: keep CI time bounded)."""
MAX_PROBLEMS = 110
"""HumanEval problems used (each gives two pairs), with the stdin programs over 200 pairs."""

DIVERGENCES: dict[str, str] = {}
"""Pair id -> why the two graders differ on it (documented in docs/code.md)."""

BOTH_FAIL: dict[str, str] = {
    "HumanEval/87/canonical": "returns a list of tuples: APPS/prime_code compare a list of tuples "
    "as lists only against the expected value's first element, so both graders fail it",
}
"""Canonical programs both graders fail, with the reason (APPS semantics, followed on purpose)."""

STDIN_PROGRAMS: list[tuple[str, str, list[str], list[str]]] = [
    # (id, program, inputs, outputs)
    ("sum", "a, b = map(int, input().split())\nprint(a + b)", ["1 2\n", "10 -3\n"], ["3\n", "7\n"]),
    ("rev", "print(input()[::-1])", ["abc\n", "xy\n"], ["cba\n", "yx\n"]),
    ("lines", "n = int(input())\nfor i in range(n):\n    print(i * i)", ["3\n"], ["0\n1\n4\n"]),
    ("max", "print(max(map(int, input().split())))", ["3 9 2\n", "-1 -5\n"], ["9\n", "-1\n"]),
    ("words", "print(len(input().split()))", ["a b c\n", "one\n"], ["3\n", "1\n"]),
    ("upper", "print(input().upper())", ["abc\n"], ["ABC\n"]),
    ("fact", "import math\nprint(math.factorial(int(input())))", ["5\n", "0\n"], ["120\n", "1\n"]),
    (
        "evens",
        "print(*[x for x in map(int, input().split()) if x % 2 == 0])",
        ["1 2 3 4\n"],
        ["2 4\n"],
    ),
]
WRONG_STDIN = "print('no')"


def _literal(node: ast.AST) -> Any:
    value = ast.literal_eval(node)
    json.dumps(value, allow_nan=False)  # prime_code's encoding is JSON: skip what it cannot hold
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("not JSON")
    return value


def _calls(test: str) -> list[tuple[list[Any], Any]]:
    """The ``candidate(args) == expected`` asserts of a HumanEval ``check``, as plain data."""
    found: list[tuple[list[Any], Any]] = []
    for node in ast.walk(ast.parse(test)):
        if not isinstance(node, ast.Assert) or not isinstance(node.test, ast.Compare):
            continue
        compare = node.test
        call = compare.left
        if not (
            len(compare.ops) == 1
            and isinstance(compare.ops[0], ast.Eq)
            and isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id == "candidate"
            and not call.keywords
        ):
            continue
        try:
            arguments = [_literal(argument) for argument in call.args]
            expected = _literal(compare.comparators[0])
        except (ValueError, TypeError, SyntaxError):
            continue
        found.append((arguments, expected))
    return found


def _pairs() -> list[tuple[str, str, dict[str, Any]]]:
    path = require_shared("data/humaneval/HumanEval.jsonl.gz", "HumanEval's problems (MIT)")
    with gzip.open(path, "rt", encoding="utf-8") as stream:
        problems = [json.loads(line) for line in stream if line.strip()]
    pairs: list[tuple[str, str, dict[str, Any]]] = []
    for problem in problems:
        calls = _calls(problem["test"])[:MAX_TESTS]
        if not calls or len(pairs) >= 2 * MAX_PROBLEMS:
            continue
        tests = {
            "fn_name": problem["entry_point"],
            "inputs": ["\n".join(json.dumps(argument) for argument in args) for args, _ in calls],
            "outputs": [json.dumps(expected) for _, expected in calls],
        }
        for variant, body in (
            ("canonical", problem["canonical_solution"]),
            ("broken", "    return None\n"),
        ):
            program = f"{problem['prompt']}{body}"
            pairs.append((f"{problem['task_id']}/{variant}", f"```python\n{program}\n```", tests))
    for name, program, inputs, outputs in STDIN_PROGRAMS:
        tests = {"inputs": inputs, "outputs": outputs}
        pairs.append((f"stdin/{name}", f"```python\n{program}\n```", tests))
        pairs.append((f"stdin/{name}/wrong", f"```python\n{WRONG_STDIN}\n```", tests))
    return pairs


def _prime_code_passes(completion: str, tests: dict[str, Any]) -> bool | None:
    """prime_code's pass/fail (``continuous=True``: its only mode that returns on a failure);
    ``None`` when one of its runs timed out (its result -1 for a test)."""
    score, metadata = prime_code.compute_score(completion, json.loads(json.dumps(tests)), True)
    if score is True:
        return True
    timed_out = any("Time Limit" in str(item) for item in (metadata or []))
    return None if timed_out else score == 1


def test_grade_code_agrees_with_prime_code_on_trusted_programs() -> None:
    pairs = _pairs()
    assert len(pairs) >= 200, len(pairs)
    sandbox = get_sandbox("bwrap", workers=2)

    def both(pair: tuple[str, str, dict[str, Any]]) -> tuple[str, bool | None, bool | None]:
        name, completion, tests = pair
        verdict = grade_code(completion, tests, sandbox=sandbox, timeout=30)
        ours = (
            None if verdict.tag is not None and verdict.tag.value == "TIMEOUT" else verdict.correct
        )
        return name, ours, _prime_code_passes(completion, tests)

    try:
        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(both, pairs))
    finally:
        sandbox.close()
    compared = [
        (name, ours, theirs) for name, ours, theirs in results if None not in (ours, theirs)
    ]
    differ = {name: (ours, theirs) for name, ours, theirs in compared if ours != theirs}
    unexplained = {name: value for name, value in differ.items() if name not in DIVERGENCES}
    print(f"{len(pairs)} pairs, {len(compared)} compared, {len(differ)} differ: {differ}")
    assert len(compared) >= 200
    assert not unexplained, unexplained
    canonical = [
        ours for name, ours, _ in compared if name.endswith("/canonical") and name not in BOTH_FAIL
    ]
    assert canonical
    assert all(canonical), [
        name for name, ours, _ in compared if name.endswith("/canonical") and not ours
    ]
    broken = [ours for name, ours, _ in compared if name.endswith(("/broken", "/wrong"))]
    assert broken
    assert not any(broken)
