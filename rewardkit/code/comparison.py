"""Stage 4, on the host: a program's stdout against the expected output, and a function's
decoded return value against the expected one (LiveCodeBench's and prime_code's rules)."""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any

# A number as a token of output: digits with an optional sign, point and exponent (not "nan",
# "inf" or "1_000", which Decimal would also read).
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def output_lines(text: str) -> list[str]:
    """``text`` as LiveCodeBench compares it: stripped as a whole, split into lines, each stripped
    (so trailing spaces, ``\\r\\n`` line ends and final newlines do not count)."""
    return [line.strip() for line in text.strip().split("\n")]


def _number(token: str) -> Decimal | None:
    if _NUMBER.fullmatch(token) is None:
        return None
    try:
        return Decimal(token)
    except InvalidOperation:
        return None


def _tokens_match(actual: str, expected: str, tolerance: float | None) -> bool:
    """Two lines that differ as text: equal when their whitespace-separated tokens are, numbers
    by value (``1.0`` is ``1.00``), within ``tolerance`` (relative or absolute) when one is given."""
    got, want = actual.split(), expected.split()
    if len(got) != len(want):
        return False
    for left, right in zip(got, want, strict=True):
        if left == right:
            continue
        a, b = _number(left), _number(right)
        if a is None or b is None:
            return False
        if a == b:
            continue
        if tolerance is None or not math.isclose(
            float(a), float(b), rel_tol=tolerance, abs_tol=tolerance
        ):
            return False
    return True


def stdout_matches(actual: str, expected: str, float_tolerance: float | None = None) -> bool:
    """Whether a program's stdout matches the expected output: line by line after
    ``output_lines``; lines that differ as text match when their tokens do (``_tokens_match``)."""
    got, want = output_lines(actual), output_lines(expected)
    if len(got) != len(want):
        return False
    return all(
        left == right or _tokens_match(left, right, float_tolerance)
        for left, right in zip(got, want, strict=True)
    )


def _close(actual: Any, expected: Any, tolerance: float) -> bool:
    """``actual == expected`` with floats compared within ``tolerance``, through lists, tuples and dicts."""
    if isinstance(actual, float) or isinstance(expected, float):
        if isinstance(actual, bool) or isinstance(expected, bool):
            return False
        if not isinstance(actual, (int, float)) or not isinstance(expected, (int, float)):
            return False
        return math.isclose(actual, expected, rel_tol=tolerance, abs_tol=tolerance)
    if isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple)):
        return (
            type(actual) is type(expected)
            and len(actual) == len(expected)
            and all(_close(a, b, tolerance) for a, b in zip(actual, expected, strict=True))
        )
    if isinstance(actual, dict) and isinstance(expected, dict):
        return actual.keys() == expected.keys() and all(
            _close(actual[key], expected[key], tolerance) for key in actual
        )
    return bool(actual == expected)


def _equal(actual: Any, expected: Any, tolerance: float | None) -> bool:
    return bool(actual == expected) if tolerance is None else _close(actual, expected, tolerance)


def return_matches(actual: Any, expected: Any, float_tolerance: float | None = None) -> bool:
    """Whether a decoded return value matches the expected output, as prime_code (APPS) decides:
    a tuple counts as a list; the expected value may be wrapped in a list (APPS stores ``[value]``);
    a list of tuples counts as a list of lists. Both sides are plain data here (the program's
    value crossed the codec), so ``==`` runs no code of the program."""
    if isinstance(actual, tuple):
        actual = list(actual)
    candidates = [expected, *_int_keyed(expected)]
    if isinstance(expected, list) and expected:
        candidates += [expected[0], *_int_keyed(expected[0])]
    if any(_equal(actual, candidate, float_tolerance) for candidate in candidates):
        return True
    if (
        isinstance(actual, list)
        and actual
        and isinstance(actual[0], tuple)
        and isinstance(expected, list)
        and expected
    ):
        return _equal(
            [list(item) if isinstance(item, tuple) else item for item in actual],
            expected[0],
            float_tolerance,
        )
    return False


def _int_keyed(value: Any) -> list[dict[Any, Any]]:
    """``value`` with its keys as ints when it is a dict whose keys all read as ints (JSON made
    them strings; prime_code converts them back)."""
    if not isinstance(value, dict):
        return []
    try:
        return [{int(key): item for key, item in value.items()}]
    except (TypeError, ValueError):
        return []
