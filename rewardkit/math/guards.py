"""Cheap guards that run before any symbolic work, in the spirit of PRM800K's ``should_allow_eval``.

SymPy evaluates integer powers and factorials eagerly, so ``9^{9^{9^9}}`` would hang a worker (and
printing a huge number hangs too). These string checks refuse such inputs up front; the answer is
then decided without evaluation (an exact normalized match, or wrong with ``reason="guard"``).
"""

from __future__ import annotations

import re

from rewardkit.math.extraction import read_group
from rewardkit.math.magnitude import MAX_EXPONENT, size_refusal

MAX_SYMBOLIC_LENGTH = 400
MAX_NESTING_DEPTH = 25
MAX_LITERAL_DIGITS = 1_000

_INTEGER_LITERAL = re.compile(r"\d+")
_COMMAND = re.compile(r"\\[A-Za-z]+")
_E_NOTATION = re.compile(r"\d[eE][-+]?(\d+)")


def nesting_depth(text: str) -> int:
    """The deepest bracket nesting (``(``, ``[``, ``{``) in ``text``."""
    depth = deepest = 0
    for char in text:
        if char in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in ")]}":
            depth -= 1
    return deepest


def _exponents(text: str) -> list[str]:
    """The exponent of every ``^``: a braced group, a command or a single character."""
    exponents: list[str] = []
    for match in re.finditer(r"\^\s*", text):
        index = match.end()
        if index >= len(text):
            break
        if text[index] == "{":
            group = read_group(text, index, limit=len(text))
            exponents.append(group[0] if group else text[index + 1 :])
        elif text[index] == "\\":
            command = _COMMAND.match(text, index)
            exponents.append(command.group() if command else text[index : index + 2])
        else:
            exponents.append(text[index])
    return exponents


# Characters and sequences no mathematical answer contains, but code does (dunders, string quotes).
# "\lambda" is a Greek letter (a wavelength), not Python's lambda.
_CODE_MARKERS = re.compile(r"__|[\"`@#?]|\bimport\b|(?<!\\)\blambda\b")


CODE_REFUSAL = "code, not mathematics"


def symbolic_guard(latex: str) -> str | None:
    """Why ``latex`` must not reach sympy (a short phrase), or None when symbolic work is safe."""
    if _CODE_MARKERS.search(latex):
        return CODE_REFUSAL
    if len(latex) > MAX_SYMBOLIC_LENGTH:
        return f"longer than {MAX_SYMBOLIC_LENGTH} characters"
    if nesting_depth(latex) > MAX_NESTING_DEPTH:
        return f"nested deeper than {MAX_NESTING_DEPTH} levels"
    for literal in _INTEGER_LITERAL.findall(latex):
        if len(literal) > MAX_LITERAL_DIGITS:
            return f"a number longer than {MAX_LITERAL_DIGITS:,} digits"
    if "^" in latex:
        for exponent in _exponents(latex):
            if "^" in exponent or "\\uparrow" in exponent:
                # Euler's e is a number too: e^{e^{e^{10}}} is a tower.
                letters = re.sub(r"[^A-Za-df-z]", "", _COMMAND.sub("", exponent))
                if not letters:
                    return "a power tower"
            if "!" in exponent:
                return "a factorial in an exponent"
    for exponent in _E_NOTATION.findall(latex):
        if int(exponent) > MAX_EXPONENT:
            return f"an exponent above {MAX_EXPONENT:,}"
    if "\\uparrow" in latex or "\\underbrace" in latex:
        return "an unsupported construct"
    # Exponents, factorials, Gamma and binomials bounded by what their arguments can be (10^9,
    # 5 \cdot 10^8, (3!)!), not only by the literals written: sympy computes them exactly and eagerly.
    return size_refusal(latex)
