"""PRM800K's grader API (``grade_answer`` and its helpers), with the same names and semantics.

The originals feed normalized model text to sympy's ``parse_expr`` (which calls ``eval``); these
run on rewardkit's pipeline instead (LaTeX parser, sandboxed, time-bounded). Deliberate deviations
are listed in docs/math.md.
"""

from __future__ import annotations

import re

from rewardkit.math.grading import compare_answers
from rewardkit.math.normalization import normalize
from rewardkit.math.representation import split_top_level

_BAD_SUBSTRINGS = ("^{", "^(")
_BAD_REGEXES = (re.compile(r"\^[0-9]+\^"), re.compile(r"\^[0-9][0-9]+"))
_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")
_TUPLE_CHARS = "()[]"


def grade_answer(given_answer: str, ground_truth: str) -> bool:
    """PRM800K's ``grade_answer``: True when the given answer matches under the strict policy."""
    if given_answer is None:
        return False
    return compare_answers(given_answer, ground_truth, policy="strict").correct


def count_unknown_letters_in_expr(expr: str) -> int:
    """How many distinct letters ``expr`` uses, ignoring ``sqrt``, ``frac`` and LaTeX command names."""
    expr = _LATEX_COMMAND.sub("", expr.replace("sqrt", "").replace("frac", ""))
    return len({char for char in expr if char.isalpha()})


def should_allow_eval(expr: str) -> bool:
    """PRM800K's guard: at most two unknown letters and no large or stacked exponents."""
    if count_unknown_letters_in_expr(expr) > 2:
        return False
    exponents_unbraced = re.sub(r"\^\{(\d)\}", r"^\1", expr)
    if any(bad in exponents_unbraced for bad in _BAD_SUBSTRINGS):
        return False
    return not any(regex.search(exponents_unbraced) for regex in _BAD_REGEXES)


def are_equal_under_sympy(ground_truth_normalized: str, given_normalized: str) -> bool:
    """True when the two normalized answers are provably equal (symbolically, in the sandbox).

    Like PRM800K, only when ``should_allow_eval`` accepts the difference; unlike it, nothing is
    evaluated with ``parse_expr``: the LaTeX parser runs in a killable worker.
    """
    if not should_allow_eval(f"({ground_truth_normalized})-({given_normalized})"):
        return False
    verdict = compare_answers(given_normalized, ground_truth_normalized, policy="lenient")
    return verdict.correct and verdict.reason in ("exact", "rational", "symbolic")


def split_tuple(expr: str) -> list[str]:
    """Split a bracketed tuple or interval into its elements (``"(1,2)"`` -> ``["1", "2"]``).

    Unlike PRM800K, nested brackets are allowed (``((1,2),3)`` has two elements) and the commas of
    thousands separators are removed first, through rewardkit's normalization.
    """
    expr = normalize(expr) if expr else expr
    if not expr:
        return []
    if len(expr) > 2 and expr[0] in _TUPLE_CHARS and expr[-1] in _TUPLE_CHARS:
        inner = expr[1:-1]
        depth = 0
        for char in inner:
            depth += 1 if char in "([{" else -1 if char in ")]}" else 0
            if depth < 0:
                return [expr]
        if depth == 0:
            return [element.strip() for element in split_top_level(inner, ",")]
    return [expr]
