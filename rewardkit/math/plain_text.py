"""Plain-text mathematics as models write it outside LaTeX, rewritten as LaTeX (a normalization step).

``exp(16)`` -> ``e^{16}``, ``pi/2`` -> ``\\pi/2``, ``-2*pi`` -> ``-2\\cdot \\pi``, ``sqrt(2)/2`` ->
``\\sqrt{2}/2``, ``2**10`` -> ``2^{10}``, ``e^(2x)`` -> ``e^{2x}``. A rewrite of text into text: the
result is read by the same LaTeX parser as any answer (never by ``sympify``/``parse_expr``).
"""

from __future__ import annotations

import re

#: Plain-text function names and their LaTeX (``None``: a rendering of its own, below).
_FUNCTIONS = {
    "sqrt": None,
    "exp": None,
    "abs": None,
    "sin": "\\sin",
    "cos": "\\cos",
    "tan": "\\tan",
    "sec": "\\sec",
    "csc": "\\csc",
    "cot": "\\cot",
    "arcsin": "\\arcsin",
    "arccos": "\\arccos",
    "arctan": "\\arctan",
    "asin": "\\arcsin",
    "acos": "\\arccos",
    "atan": "\\arctan",
    "sinh": "\\sinh",
    "cosh": "\\cosh",
    "tanh": "\\tanh",
    "ln": "\\ln",
    "log": "\\log",
}
# Not after a dot: "np.arcsin(10/13)" is an attribute in code, compared as written.
_CALL = re.compile(
    r"(?<![\\A-Za-z.])(" + "|".join(sorted(_FUNCTIONS, key=len, reverse=True)) + r")\s*\("
)
_POWER_GROUP = re.compile(r"\^\s*\(")
_PYTHON_POWER = re.compile(r"\*\*\s*(\d+|[A-Za-z])(?![\d\w])")
_PI = re.compile(r"(?<![\\A-Za-z.])pi(?![A-Za-z])")
_TIMES = re.compile(r"(?<=[\w)}])\s*\*\s*(?=[\w(\\])")  # a product: not a^* or \\operatorname*
_SIGNS = re.compile(
    r"\*\*|\*|(?<![\\A-Za-z])(?:pi|sqrt|exp|abs|sin|cos|tan|sec|csc|cot|arc|a?sin|a?cos|a?tan|ln|log)|\^\s*\("
)
#: Longer texts, or more parentheses, are not rewritten (no real answer; bounded work and recursion).
MAX_PLAIN_LENGTH = 1_000
_MAX_PARENTHESES = 40


def _closing(text: str, opening: int) -> int:
    """The index of the parenthesis closing the one at ``opening``, or -1."""
    depth = 0
    for index in range(opening, len(text)):
        if text[index] == "(":
            depth += 1
        elif text[index] == ")":
            depth -= 1
            if depth == 0:
                return index
    return -1


def _render(name: str, argument: str) -> str:
    if name == "sqrt":
        return "\\sqrt{" + argument + "}"
    if name == "exp":
        return "e^{" + argument + "}"
    if name == "abs":
        return "|" + argument + "|"
    return f"{_FUNCTIONS[name]}({argument})"


def _calls(text: str) -> str:
    """Function calls and parenthesised exponents, innermost rewritten with their surroundings."""
    call, power = _CALL.search(text), _POWER_GROUP.search(text)
    matches = [m for m in (call, power) if m is not None]
    if not matches:
        return text
    match = min(matches, key=lambda m: m.start())
    opening = match.end() - 1
    closing = _closing(text, opening)
    if closing < 0:
        return text  # unbalanced: left as written (the parser decides)
    inner = _calls(text[opening + 1 : closing])
    rendered = "^{" + inner + "}" if match.re is _POWER_GROUP else _render(match.group(1), inner)
    return text[: match.start()] + rendered + _calls(text[closing + 1 :])


def plain_text_math(text: str) -> str:
    """Plain-text functions, constants and operators as LaTeX (``sqrt(2)/2`` -> ``\\sqrt{2}/2``)."""
    if (
        len(text) > MAX_PLAIN_LENGTH
        or text.count("(") > _MAX_PARENTHESES
        or not _SIGNS.search(text)
    ):
        return text
    text = _PYTHON_POWER.sub(lambda m: "^{" + m.group(1) + "}", text).replace("**", "^")
    text = _calls(text)
    text = _PI.sub(lambda _: "\\pi ", text)
    return _TIMES.sub("\\\\cdot ", text)
