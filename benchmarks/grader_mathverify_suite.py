"""Grade math-verify's own labelled test cases with rewardkit and count agreements with the labels.

    python benchmarks/grader_mathverify_suite.py --tests PATH/TO/Math-Verify/tests [--misses]

The cases are the ``(gold, pred, expected)`` parametrizations of math-verify's test modules
(test_all.py, test_numina_cases.py, test_open_thoughts.py, test_yujianll.py), read with ``ast``
(never run), with the options at their defaults: a case labelled for another ``precision`` or
``allow_set_relation_comp`` is left out (259 cases in math-verify 0.9). They stay out of this repository so that they remain a fair test:
take them from math-verify's source (its GitHub repository or sdist). Each prediction is graded
with ``grade(pred, gold, extract="auto")``; ``--misses`` lists the disagreements.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MODULES = ("test_all", "test_numina_cases", "test_open_thoughts", "test_yujianll")
DEFAULTS = {"precision": 6, "allow_set_relation_comp": False}


def _parametrizations(tree: ast.Module) -> Iterator[tuple[str, list[str], list[Any]]]:
    """(test name, argument names, rows) of every literal ``pytest.mark.parametrize`` in a module."""
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            if isinstance(decorator, ast.Call) and ast.unparse(decorator.func).endswith(
                "parametrize"
            ):
                names = [n.strip() for n in ast.literal_eval(decorator.args[0]).split(",")]
                try:
                    rows = ast.literal_eval(decorator.args[1])
                except ValueError:
                    continue  # rows built by code: not a labelled case list
                yield node.name, names, rows


def _cases(tests: Path) -> list[tuple[str, str, str, bool]]:
    """(test name, gold, prediction, label) for every default-option case of the modules."""
    cases = []
    for name in MODULES:
        tree = ast.parse((tests / f"{name}.py").read_text(encoding="utf-8"))
        for test, names, rows in _parametrizations(tree):
            if names[:2] != ["gold", "pred"]:
                continue
            for values in rows:
                row: dict[str, Any] = dict(zip(names, values))
                if any(row.get(key, default) != default for key, default in DEFAULTS.items()):
                    continue
                label = row.get("expected", row.get("result"))
                cases.append((f"{name}::{test}", row["gold"], row["pred"], bool(label)))
    return cases


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=Path, required=True, help="math-verify's tests/ directory")
    parser.add_argument(
        "--misses", action="store_true", help="list the cases where rewardkit disagrees"
    )
    args = parser.parse_args()
    from rewardkit.math import grade, warm_up

    warm_up()
    cases = _cases(args.tests)
    agree = 0
    for test, gold, pred, label in cases:
        verdict = grade(pred, gold, extract="auto", timeout=10.0)
        if verdict.correct == label:
            agree += 1
        elif args.misses:
            print(
                f"{test}: label {label}, rewardkit {verdict.correct}/{verdict.reason}: {pred!r} vs gold {gold!r}"
            )
    print(f"rewardkit agrees with {agree}/{len(cases)} of math-verify's labels")
    return 0


if __name__ == "__main__":
    sys.exit(main())
