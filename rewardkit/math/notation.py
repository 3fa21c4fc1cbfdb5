"""Normalization steps for notations that name a value another way (used by ``normalization.STEPS``).

Each function is a pure string rewrite with examples in ``normalization.STEPS``: named operators
(``\\operatorname{floor}``, ``\\operatorname{sgn}``), ``{n \\choose k}``, clock times
(``7:05 \\text{ p.m.}`` is ``19:05``) and degrees inside a trigonometric argument
(``\\cos(60^\\circ)`` is ``\\cos(\\frac{60\\pi}{180})``, not ``\\cos(60)``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rewardkit.math.extraction import read_group

# -- named operators ---------------------------------------------------------------------------

_OPERATOR = re.compile(r"\\operatorname\s*\{\s*([A-Za-z]+)\s*\}\s*")
# Names the LaTeX parser knows as commands.
_INVERSE_HYPERBOLIC = {
    "arcsinh": "\\arcsinh", "arccosh": "\\arccosh", "arctanh": "\\arctanh",
    "arsinh": "\\arcsinh", "arcosh": "\\arccosh", "artanh": "\\arctanh",
    "asinh": "\\arcsinh", "acosh": "\\arccosh", "atanh": "\\arctanh",
}
# Functions of a bracketed argument, written with the brackets that define them.
_BRACKETED = {
    "floor": ("\\lfloor ", "\\rfloor "),
    "ceil": ("\\lceil ", "\\rceil "),
    "ceiling": ("\\lceil ", "\\rceil "),
}
_SIGN_NAMES = ("sgn", "sign", "signum")
# Names the parser knows as plain commands.
_PLAIN_COMMANDS = {"gcd": "\\gcd", "lcm": "\\lcm"}


def _argument(text: str, index: int) -> tuple[str, int] | None:
    """The parenthesized or braced argument starting at ``index``: (content, index after it)."""
    if index >= len(text):
        return None
    if text[index] == "{":
        return read_group(text, index, limit=len(text))
    if text[index] != "(":
        return None
    depth = 0
    for position in range(index, len(text)):
        depth += {"(": 1, ")": -1}.get(text[position], 0)
        if depth == 0:
            return text[index + 1 : position], position + 1
    return None


def _rewrite(text: str, pattern: re.Pattern[str], rewrite: Callable[[re.Match[str]], tuple[str, int] | None]) -> str:
    """Replace each match of ``pattern`` (and what ``rewrite`` takes after it) by ``rewrite``'s text.

    ``rewrite`` returns (replacement, end of the replaced span) or None to leave the match; matches
    inside a replaced span are skipped. One pass from left to right.
    """
    out: list[str] = []
    position = 0
    for match in pattern.finditer(text):
        if match.start() < position:
            continue
        rewritten = rewrite(match)
        if rewritten is None:
            continue
        out.append(text[position : match.start()] + rewritten[0])
        position = rewritten[1]
    out.append(text[position:])
    return "".join(out)


def _named_operator(match: re.Match[str]) -> tuple[str, int] | None:
    name = match.group(1)
    if name in _INVERSE_HYPERBOLIC or name in _PLAIN_COMMANDS:
        return _INVERSE_HYPERBOLIC.get(name) or _PLAIN_COMMANDS[name], match.end()
    argument = _argument(match.string, match.end())
    if argument is None or not (name in _BRACKETED or name in _SIGN_NAMES):
        return None
    content, end = argument
    if name in _BRACKETED:
        left, right = _BRACKETED[name]
        return f"{left}{content}{right}", end
    return f"\\frac{{({content})}}{{|{content}|}}", end


def named_operators(text: str) -> str:
    """``\\operatorname{arccosh}`` -> ``\\arccosh``, ``\\operatorname{floor}(x)`` -> ``\\lfloor x\\rfloor``,
    ``\\operatorname{sgn}(x)`` -> ``\\frac{x}{|x|}`` (the function each name denotes, in LaTeX the parser reads)."""
    return _rewrite(text, _OPERATOR, _named_operator) if "operatorname" in text else text


# -- binomial coefficients -----------------------------------------------------------------------


def _enclosing_group(text: str, index: int) -> tuple[int, int] | None:
    """The unescaped brace pair around ``index`` (start of ``{``, index of ``}``), if any."""
    depth = 0
    start = index - 1
    while start >= 0:
        char = text[start]
        if char in "{}" and (start == 0 or text[start - 1] != "\\"):
            depth += 1 if char == "}" else -1
            if depth < 0:
                break
        start -= 1
    if start < 0:
        return None
    group = read_group(text, start, limit=len(text))
    return (start, group[1] - 1) if group is not None else None


def choose_as_binom(text: str) -> str:
    """``{n \\choose k}`` -> ``\\binom{n}{k}`` (TeX's older spelling of the binomial coefficient)."""
    if "\\choose" not in text:
        return text
    for _ in range(16):
        index = text.find("\\choose")
        if index < 0:
            break
        group = _enclosing_group(text, index)
        start, end = group if group is not None else (-1, len(text))
        top = text[start + 1 : index].strip()
        bottom = text[index + len("\\choose") : end].strip()
        text = text[: max(start, 0)] + f"\\binom{{{top}}}{{{bottom}}}" + text[end + 1 :]
    return text


_FACTORIAL_POWER = re.compile(r"(?<![\\\w.])(\d+|[A-Za-z])!\s*\^")


def factorial_powers(text: str) -> str:
    """``3!^2`` -> ``(3!)^2``: the power of a factorial (the LaTeX parser refuses the bare form)."""
    return _FACTORIAL_POWER.sub(r"(\1!)^", text) if "!" in text else text


# -- clock times ---------------------------------------------------------------------------------

_WRAPPER = r"(?:\s|~|\\[,;:! ]|\\(?:text|textrm|mathrm|mbox)\s*\{)*"
_MERIDIEM = re.compile(
    r"(?<![\d:.,])(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?(?::(?P<second>\d{2}))?" + _WRAPPER
    + r"(?P<half>[AaPp])\.?\s*[Mm]\.?(?![A-Za-z^_{(])(?P<close>\s*\})?"
)
_SECONDS = re.compile(r"(?<![\d:.,])(\d{1,2}:\d{2}):00(?![\d:.,])")


def _clock(match: re.Match[str]) -> str:
    hour, minute, second = int(match["hour"]), int(match["minute"] or 0), int(match["second"] or 0)
    if not 1 <= hour <= 12 or minute > 59 or second > 59:
        return match.group()
    hour = hour % 12 + (12 if match["half"] in "Pp" else 0)
    opened = match.group().count("{") - (1 if match["close"] else 0)
    closing = "}" * max(-opened, 0)  # a brace that closed an outer group stays
    seconds = f":{second:02d}" if second else ""
    return f"{hour}:{minute:02d}{seconds}{closing}"


def clock_times(text: str) -> str:
    """``7:05 \\text{ p.m.}`` -> ``19:05``, ``12:30 am`` -> ``0:30``, ``19:05:00`` -> ``19:05`` (24-hour times)."""
    if ":" not in text and "m" not in text and "M" not in text:
        return text
    if "m" in text or "M" in text:
        text = _MERIDIEM.sub(_clock, text)
    if ":00" in text:
        text = _SECONDS.sub(r"\1", text)
    return text


# -- degrees in trigonometric arguments ----------------------------------------------------------

_TRIG = re.compile(r"\\(?:sin|cos|tan|cot|sec|csc)(?![A-Za-z])(?:\s*\^\s*(?:\{[^{}]*\}|-?\d))?\s*")
_DEGREE_MARK = r"\s*(?:\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|\\circ|\\degree|\^\s*\{\s*\\text\{\s*o\s*\}\s*\})(?![A-Za-z])"
_DEGREE_VALUE = re.compile(r"(\d+(?:\.\d+)?|\\[A-Za-z]+|[A-Za-z])" + _DEGREE_MARK)


def _radians(match: re.Match[str]) -> str:
    return f"\\frac{{{match.group(1)}\\pi}}{{180}}"


def _trig_argument_in_radians(match: re.Match[str]) -> tuple[str, int] | None:
    text, start = match.string, match.end()
    argument = _argument(text, start)
    if argument is not None:
        end = argument[1]
    else:
        value = _DEGREE_VALUE.match(text, start)
        if value is None:
            return None
        end = value.end()
    return match.group() + _DEGREE_VALUE.sub(_radians, text[start:end]), end


def degrees_in_trig(text: str) -> str:
    """``\\cos(60^\\circ)`` -> ``\\cos(\\frac{60\\pi}{180})``: degrees inside a trigonometric argument are
    converted to radians (dropping them, as elsewhere, would make ``\\sin(90^\\circ - x)`` ``\\sin(90 - x)``)."""
    if "circ" not in text and "degree" not in text:
        return text
    return _rewrite(text, _TRIG, _trig_argument_in_radians)
