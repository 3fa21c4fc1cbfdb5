"""Code samples the adapter and serve tests share: the failing ones first, each form of tests.

Programs use single spaces and tab indents: the frameworks' word-level tokenizers (split on spaces)
carry them through token ids intact, newlines included."""

from __future__ import annotations

import json
from typing import Any

from rewardkit.code import grade_code


def fenced(program: str) -> str:
    """A response holding ``program`` in a Python code block."""
    return f"```python\n{program}\n```"


DOUBLE = {"inputs": ["21\n", "5\n"], "outputs": ["42\n", "10\n"]}
ADD = {"fn_name": "add", "inputs": [[1, 2], [5, 5]], "outputs": [3, 10]}
MBPP = {"asserts": ["assert square(3) == 9", "assert square(4) == 16"]}

SAMPLES: list[tuple[str, Any]] = [
    (fenced("print(1/0)"), DOUBLE),  # fails first: a runtime error
    (fenced("print(int(input())*2)"), DOUBLE),  # passes both
    (fenced("print(42)"), DOUBLE),  # one of two: a wrong output
    (fenced("def add(a,b):\n\treturn a+b"), ADD),  # passes (fn_name form)
    ("the answer is 42", DOUBLE),  # no code
    (fenced("def square(x):\n\treturn x*x"), MBPP),  # passes (MBPP asserts)
    (fenced("def add(a,b):\n\treturn a-b"), ADD),  # wrong return values
]
"""(response, tests): a failing sample first, then passing, partial and failing ones."""


MALFORMED = (fenced("print(2)"), {"inputs": ["1\n"]})
"""A sample whose tests cannot be read (no outputs): it fails at once, before any program runs."""


def direct_scores(samples: list[tuple[str, Any]] = SAMPLES) -> list[float]:
    """What ``grade_code`` called directly gives each sample: the reference every path must equal."""
    return [grade_code(response, tests).fraction for response, tests in samples]


def as_label(field: str, tests: Any) -> str:
    """OpenRLHF's label for a sample: a JSON object whose key is the tests' field."""
    return json.dumps({field: tests})
