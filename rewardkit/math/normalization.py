"""Stage 2, normalization: strip LaTeX decoration so equal answers become equal strings.

Each step is a small named function with its own examples (input -> output), which the tests run.
The steps are ordered; ``normalize`` applies them all and is cached (an RL group grades many
responses against one gold, and identical responses are common).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from rewardkit.math.caching import MB, bounded_cache
from rewardkit.math.extraction import read_group, unwrap_gold
from rewardkit.math.languages import HALF_WIDTH
from rewardkit.math.notation import (
    choose_as_binom,
    clock_times,
    degrees_in_trig,
    factorial_powers,
    named_operators,
)
from rewardkit.math.plain_text import plain_text_math


@dataclass(frozen=True)
class NormalizationStep:
    """One normalization rule: a pure string function and the examples that document it."""

    name: str
    apply: Callable[[str], str]
    examples: tuple[tuple[str, str], ...]


_UNICODE = {
    "\u2212": "-",
    "\u2013": "-",
    "\u2014": "-",
    "\u00d7": "\\times ",
    "\u22c5": "\\cdot ",
    "\u00b7": "\\cdot ",
    "\u00f7": "\\div ",
    "\u03c0": "\\pi ",
    "\u221e": "\\infty ",
    "\u221a": "\\sqrt",
    "\u2264": "\\leq ",
    "\u2265": "\\geq ",
    "\u2260": "\\neq ",
    "\u00b1": "\\pm ",
    "\u00b0": "^\\circ",
    "\u222a": "\\cup ",
    "\u2229": "\\cap ",
    "\u00a0": " ",
    "\u2009": " ",
    "\u202f": " ",
}
_UNICODE_TABLE = {**HALF_WIDTH, **str.maketrans(_UNICODE)}  # full-width "２２０" is 220
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def unicode_to_latex(text: str) -> str:
    """Unicode math symbols become their LaTeX commands, full-width characters ASCII; control characters go away."""
    text = text.translate(_UNICODE_TABLE)
    return _CONTROL.sub(" ", text) if _CONTROL.search(text) else text


# JSON-escaped twice: "\\\\frac{1}{2}" is "\\frac{1}{2}" (a row break never precedes these command names).
_DOUBLE_ESCAPED = re.compile(
    r"\\\\(?=(?:frac|dfrac|tfrac|left|right|sqrt|text|mathrm|boxed|cdot|times|pi|infty|pm|leq?|geq?|neq|cup|cap)(?![A-Za-z]))"
)


_BACKSLASHES = re.compile(r"\\+")
_DOUBLED_COMMAND = re.compile(r"(?<!\\)\\\\(?:[A-Za-z]{2,}|[{}])")


def undo_double_escapes(text: str) -> str:
    """A text escaped twice is un-escaped once: ``\\\\frac{1}{2}`` -> ``\\frac{1}{2}``, and
    ``\\\\begin{pmatrix}1\\\\\\\\2\\\\end{pmatrix}`` (JSON-in-JSON) -> ``\\begin{pmatrix}1\\\\2\\end{pmatrix}``.

    Escaped twice means: every run of backslashes has even length and a command is written with two
    (a correctly escaped matrix has single-backslash commands). A text with some single commands
    only loses the doubled backslash before a common command name, outside environments.
    """
    if "\\\\" not in text:
        return text
    if _DOUBLED_COMMAND.search(text) and all(len(run) % 2 == 0 for run in _BACKSLASHES.findall(text)):
        return _BACKSLASHES.sub(lambda run: run.group()[: len(run.group()) // 2], text)
    if "\\begin" in text or "&" in text:
        return text
    return _DOUBLE_ESCAPED.sub(r"\\", text)


_MATH_DELIMITERS = re.compile(r"\\displaystyle|\\limits|\\\(|\\\)|\\\[|\\\]|(?<!\\)\$")


def strip_math_delimiters(text: str) -> str:
    """``$``, ``\\(``, ``\\)``, ``\\[``, ``\\]`` and ``\\displaystyle`` are presentation only."""
    return _MATH_DELIMITERS.sub(" ", text) if ("$" in text or "\\" in text) else text


_SIZED_DELIMITERS = re.compile(
    r"\\(?:left|right|bigl|bigr|Bigl|Bigr|biggl|biggr|Biggl|Biggr|big|Big|bigg|Bigg)(?![A-Za-z])\s*(\.)?"
)


def strip_sized_delimiters(text: str) -> str:
    """``\\left(`` -> ``(``; ``\\right.`` disappears (an invisible delimiter)."""
    return _SIZED_DELIMITERS.sub("", text) if "\\" in text else text


_FRAC_ALIAS = re.compile(r"\\[dtc]frac(?![A-Za-z])")
_FRAC_SHORT = re.compile(r"\\frac\s*(\d|\{[^{}]*\}|\\[A-Za-z]+)\s*(\d|\{[^{}]*\}|\\[A-Za-z]+|[A-Za-z])")
_SQRT_SHORT = re.compile(r"\\sqrt\s*(\[[^\]]*\])?\s*(\d|[A-Za-z])")  # \sqrt 23 is \sqrt{2}3, as in LaTeX


def _brace(token: str) -> str:
    return token if token.startswith("{") else "{" + token + "}"


def canonical_fractions(text: str) -> str:
    """``\\dfrac``/``\\tfrac`` -> ``\\frac``; ``\\frac12`` -> ``\\frac{1}{2}``; ``\\sqrt2`` -> ``\\sqrt{2}``."""
    if "frac" not in text and "sqrt" not in text:
        return text
    text = _FRAC_ALIAS.sub(r"\\frac", text)
    text = _FRAC_SHORT.sub(lambda m: "\\frac" + _brace(m.group(1)) + _brace(m.group(2)), text)
    return _SQRT_SHORT.sub(lambda m: "\\sqrt" + (m.group(1) or "") + "{" + m.group(2) + "}", text)


_TEXT_COMMANDS = re.compile(
    r"\\(?:text|textrm|textbf|textit|textnormal|mathrm|mathbf|mathit|mathsf|mathtt|mathcal|mathscr|boldsymbol|mbox|operatorname)\s*(?=\{)"
)


def _unwrap_commands(text: str, replace: Callable[[str], str]) -> str:
    out: list[str] = []
    position = 0
    for _ in range(len(text)):
        match = _TEXT_COMMANDS.search(text, position)
        if match is None:
            break
        group = read_group(text, match.end(), limit=len(text))
        if group is None:
            break
        out.append(text[position : match.start()])
        out.append(replace(group[0]))
        position = group[1]
    out.append(text[position:])
    return "".join(out)


_UNIT_WORDS = (
    "square units|square feet|square inches|square meters|square centimeters|square miles|square yards|"
    "cubic units|cubic feet|cubic inches|cubic meters|cubic centimeters|sq units|sq ft|sq in|"
    "units|unit|meters|meter|metres|metre|centimeters|centimeter|millimeters|kilometers|kilometer|"
    "km|cm|mm|kg|mg|grams|gram|kilograms|liters|liter|litres|ml|mL|"
    "seconds|second|secs|sec|minutes|minute|mins|min|hours|hour|hrs|hr|days|day|weeks|week|"
    "months|month|years|year|yrs|"
    "feet|foot|ft|inches|inch|yards|yard|yd|miles|mile|mph|km/h|kph|"
    "degrees|degree|deg|radians|radian|rad|dollars|dollar|cents|cent|euros|pounds|pound|lbs|lb|"
    "ounces|ounce|oz|gallons|gallon|gal|quarts|pints|cups|people|persons|students|"
    "times|ways|marbles|apples|coins|points|games|matches|books|pages|boxes|balls"
)
# One-letter units (and "in") are also variables: they count as units only when set apart.
_SHORT_UNITS = "m|s|h|g|L|in|mi"
_GAP = r"(?:\s|~|\\[,;:! ])*"
_UNIT = (
    r"(?:" + _GAP + r"(?:\\text\{\s*)?(?:" + _UNIT_WORDS + r")|(?:(?:\s|~|\\[,;:! ])+(?:\\text\{\s*)?|"
    + _GAP + r"\\text\{\s*)(?:" + _SHORT_UNITS + r"))(?![A-Za-z])(?:\^\{?[23]\}?)?"
)
_UNIT_TAIL = re.compile(
    r"(?<=[\d}.])" + _UNIT + r"(?:\s*/\s*(?:" + _UNIT_WORDS + "|" + _SHORT_UNITS + r")(?:\^\{?[23]\}?)?)?\s*\}?\s*\.?\s*(?=,|$)"
)
# A tail with at least one \text{words} after a number: "5 \text{ m}^2", "3 \text{m}/\text{s}".
# A one-letter text is a unit only if it is one (``\\text{m}``); ``4\\mathrm{i}`` is imaginary, not a unit.
# A one-letter unit is any letter but e, i and d (Euler's number, the imaginary unit, a differential):
# SI units (N, J, K, V, W, T, ...) in physics golds, "6.67 \\times 10^{-11} \\mathrm{~N} \\cdot \\mathrm{m}^{2} / \\mathrm{kg}^{2}".
_TEXT_PIECE = r"\\text\{[~\s]*(?:[A-Za-z][A-Za-z./\s~]*[A-Za-z.]|(?:[A-DF-HJ-Za-cf-hj-z]|in|mi))[\s~]*\}"
_TEXT_TAIL = re.compile(
    r"(?<=[\d}.])" + _GAP + r"(?:(?:/|\\cdot)" + _GAP + r")?" + _TEXT_PIECE
    + r"(?:" + _GAP + r"(?:" + _TEXT_PIECE + r"|/|\\cdot|\^\{?-?\d\}?))*" + _GAP + r"(?=,|$)"
)
_CURRENCY = re.compile(r"\\\$|\\textdollar|\\euro|\\pounds|[€£¥]|\bUSD\b|\bdollars?\b|\bcents?\b|\\text\{\s*\}")


# Words that make a text tail a statement rather than a unit: "3 \\text{ or four}" is a hedge,
# "3 \\text{ (not 4)}" a claim; stripping them as units would accept 3.
_NOT_UNIT_WORDS = re.compile(
    r"\b(?:or|and|nor|not|no|more|less|fewer|than|least|most|maybe|perhaps|possibly|"
    r"probably|either|neither|but|also|else|otherwise|if|only|wrong|incorrect|false|true|none|to)\b",
    re.IGNORECASE,
)
# A tail right after a word is another word, not a unit: "\\text{Monday}\\text{ Tuesday}" offers two days.
_AFTER_WORD = re.compile(r"\\text\{[^{}]*[A-Za-z][^{}]*\}\s*$")


def _inside_group(text: str, index: int) -> bool:
    """Whether ``index`` is inside an unclosed brace group (``\\frac{\\hbar^2}{2 m}``: ``m`` is a mass there)."""
    prefix = text[:index].replace("\\{", "").replace("\\}", "")
    return prefix.count("{") > prefix.count("}")


def _drop_unit(match: re.Match[str]) -> str:
    if _NOT_UNIT_WORDS.search(match.group()) or _inside_group(match.string, match.start()):
        return match.group()
    if match.string[match.start() - 1 : match.start()] == "}" and _AFTER_WORD.search(match.string, 0, match.start()):
        return match.group()
    return ""


def strip_units(text: str) -> str:
    """Units in text or words after a number go (``8 \\text{ km}`` -> ``8``), as does currency (``\\$5``)."""
    if "\\" in text or "$" in text or any(c in text for c in "€£¥"):
        text = _CURRENCY.sub(" ", text)
    text = _unwrap_commands(text, lambda content: "\\text{" + content + "}") if "\\" in text else text
    for tail in (_TEXT_TAIL, _UNIT_TAIL):
        stripped = tail.sub(_drop_unit, text)
        if stripped.strip():
            text = stripped
    return text


_CONNECTIVE = re.compile(
    r"\s*\\text\{\s*(or|and)\s*\}\s*|\s+(or|and)\s+|\s*\\(?:lor|vee|land|wedge)\s*|(?<=[)\]])\s*(?:or|and)\s*(?=[(\[])"
)


_RELATION_MARK = re.compile(r"=|<|>|\\[lg]eq?(?![a-z])|\\neq|\\in(?![a-z])")


def _connective(match: re.Match[str]) -> str:
    """``, `` for a list; ``; `` for "or" between two relations (alternatives: ``u=0 \\text{ or } v=0``
    is not the point ``u=0, v=0``)."""
    word = (match.group(1) or match.group(2) or match.group()).strip()
    if word in ("or", "\\lor", "\\vee"):
        before = re.split(r"[,;]", match.string[: match.start()])[-1]
        after = re.split(r"[,;]", match.string[match.end() :])[0]
        if _RELATION_MARK.search(before) and _RELATION_MARK.search(after):
            return "; "
    return ", "


def unwrap_text(text: str) -> str:
    """``\\text{yes}`` -> ``yes``; ``3 \\text{ or } 4`` -> ``3, 4`` (several candidates, a list);
    ``x=3 \\text{ or } x=-3`` -> ``x=3; x=-3`` (alternative relations)."""
    if "\\" in text:  # unwrap first, so "3 \\text{ or four}" shows its connective
        text = _unwrap_commands(text, lambda content: " " + content + " ")
    if "or" in text or "and" in text or "\\l" in text or "vee" in text or "wedge" in text:
        text = _CONNECTIVE.sub(_connective, text)
    return text


# No LaTeX command starts with "quad" but \\quad and \\qquad: "\\quadx_2" is "\\quad x_2" (seen in golds).
_SPACING = re.compile(r"(?<!\\)\\[,!;: ]|\\q?quad|~|\\hspace\{[^{}]*\}|\\thinspace")
# "10\\,000" and "11,\\!111" (MATH's idiom: the comma tightened by a negative space) are thousands separators.
_THOUSANDS_SPACING = re.compile(r"(?<=\d)(?:\\,|(,)\\!\s*)(?=\d{3}(?!\d))")


_QUAD = re.compile(r"\s*\\q?quad\s*")


_QUAD_WINDOW = 200  # how far an equation around a \\quad is looked for (bounded work per \\quad)


def _quad(match: re.Match[str]) -> str:
    # "y = x^2 \\quad y = -x": a wide space between two equations separates two answers.
    text = match.string
    before = re.split(r"[,;]|\\q?quad", text[max(0, match.start() - _QUAD_WINDOW) : match.start()])[-1]
    after = re.split(r"[,;]|\\q?quad", text[match.end() : match.end() + _QUAD_WINDOW])[0]
    return ", " if "=" in before and "=" in after and before.strip() and after.strip() else " "


def strip_spacing(text: str) -> str:
    """Spacing commands (``\\,``, ``\\!``, ``~``, ``\\quad``) become plain spaces; ``\\quad`` between equations a comma."""
    if "\\" not in text and "~" not in text:
        return text
    text = _THOUSANDS_SPACING.sub(lambda m: m.group(1) or "", text)
    if "quad" in text and "=" in text:
        text = _QUAD.sub(_quad, text)
    return _SPACING.sub(" ", text)


# A leading group of 0 is never a thousands separator: "0,111" and "(0,100)" are lists.
_THOUSANDS = re.compile(r"(?<![\d.,])[1-9]\d{0,2}(?:,\d{3})+(?!\d|,\d)(?:\.\d+)?")
_THOUSANDS_SPACE = re.compile(r"(?<![\d.])[1-9]\d{0,2}(?: \d{3})+(?![\d])")
_BRACED_COMMA = re.compile(r"\{\s*,\s*\}")


def _merge_thousands(match: re.Match[str]) -> str:
    # "(12,102)" alone in brackets is a pair (an interval, a point), not the number 12102.
    before, after = match.string[match.start() - 1 : match.start()], match.string[match.end() : match.end() + 1]
    if before and after and before in "([" and after in ")]":
        return match.group()
    return match.group().replace(",", "")


def strip_thousands_separators(text: str) -> str:
    """``10{,}000``, ``10,000``, ``10\\,000`` and ``10 000`` -> ``10000`` (``1, 2``, ``0,5`` and ``(12,102)`` stay lists)."""
    if "{" in text and "," in text:
        text = _BRACED_COMMA.sub("", text)
    if "," in text:
        text = _THOUSANDS.sub(_merge_thousands, text)
    if " " in text:
        text = _THOUSANDS_SPACE.sub(lambda m: m.group().replace(" ", ""), text)
    return text


def _matching_brackets(text: str, openers: str = "({", closers: str = ")}") -> dict[int, int]:
    """Index of each unescaped opening bracket -> index of its closing one (one linear pass)."""
    pairs: dict[int, int] = {}
    stack: list[int] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2  # an escaped brace (\\{) or a command's first letter
            continue
        if char in openers:
            stack.append(index)
        elif char in closers and stack:
            opening = stack.pop()
            if openers.index(text[opening]) == closers.index(char):
                pairs[opening] = index
        index += 1
    return pairs


_ARGUMENT_BEFORE = re.compile(r"(?:\\[A-Za-z]+\*?|[\^_\]])\s*$")
# After a group, these apply to the whole group: ``{x+1}^2`` is ``(x+1)^2``.
_APPLIES_TO_GROUP = re.compile(r"\s*[\^_!']")


def strip_grouping(text: str) -> str:
    """Redundant grouping costs nothing: ``{1}`` -> ``1``, ``{1,3}`` -> ``1,3``, ``((x))`` -> ``(x)``.

    A brace group is a command's argument when it follows a command, ``^``, ``_``, ``]`` or another
    argument (``\\frac{1}{2}``); any other brace group only groups, as in LaTeX, where it is
    invisible: its braces go (or become parentheses before ``^``, ``_``, ``!``). Parentheses that
    directly enclose another pair add nothing. One linear pass, however deep the nesting.
    """
    if "{" not in text and "((" not in text:
        return text
    pairs = _matching_brackets(text)
    drop: set[int] = set()
    to_parentheses: set[int] = set()
    argument_ends: set[int] = set()  # closing braces of arguments: a group right after one is an argument too
    for opening in sorted(pairs):
        closing = pairs[opening]
        if text[opening] == "(":
            inner = pairs.get(opening + 1)
            if inner == closing - 1 and text[opening + 1] == "(":
                drop.update((opening, closing))
            continue
        previous = opening - 1
        while previous >= 0 and text[previous].isspace():
            previous -= 1
        if previous in argument_ends or _ARGUMENT_BEFORE.search(text, max(0, opening - 40), opening):
            argument_ends.add(closing)
        elif text[opening + 1 : closing].strip() == ",":
            continue  # "10{,}000": the thousands step reads it
        elif _APPLIES_TO_GROUP.match(text, closing + 1) and closing > opening + 1:
            to_parentheses.update((opening, closing))
        else:
            drop.update((opening, closing))
    if not drop and not to_parentheses:
        return text
    out = []
    for index, char in enumerate(text):
        if index in drop:
            continue
        out.append(("(" if char == "{" else ")") if index in to_parentheses else char)
    return "".join(out)


_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|(?<=[\d}])\s*\\(?:circ|degree)(?![A-Za-z])|\^\s*\{\s*\\text\{\s*o\s*\}\s*\}")


def strip_degrees(text: str) -> str:
    """``30^\\circ``, ``30^{\\circ}`` and ``30\\degree`` -> ``30``."""
    return _DEGREES.sub("", text) if ("circ" in text or "degree" in text) else text


_PERCENT = re.compile(r"\s*\\?%")
_PERCENT_WORD = re.compile(r"(?<=[\d}])\s*(?:percentage|percent|pct)\b\.?", re.IGNORECASE)


def canonical_percent(text: str) -> str:
    """``50\\%``, ``50 %``, ``50 percent`` and ``50 pct`` -> ``50%`` (the representation stage reads it)."""
    if "p" in text or "P" in text:
        text = _PERCENT_WORD.sub("%", text)
    return _PERCENT.sub("%", text) if "%" in text else text


# ASCII spellings of relations: "x >= 5", "x <= 2", "x != 3". "5!=120" and "(n)!=6" are factorials.
_ASCII_RELATIONS = re.compile(r">=|<=(?!>)|(?<![\d)}!])!=")
_ASCII_RELATION_COMMANDS = {">=": "\\geq ", "<=": "\\leq ", "!=": "\\neq "}


def ascii_relations(text: str) -> str:
    """``>=`` -> ``\\geq``, ``<=`` -> ``\\leq``, ``!=`` -> ``\\neq`` (not after a digit or bracket: ``5!=120``)."""
    if "=" not in text:
        return text
    return _ASCII_RELATIONS.sub(lambda m: _ASCII_RELATION_COMMANDS[m.group()], text)


def _commands(names: str) -> re.Pattern[str]:
    """The commands named by the alternation ``names`` (no backslash), each matched as a whole command."""
    return re.compile(rf"\\(?:{names})(?![A-Za-z])")


# Command names (an alternation) -> their one spelling.
_SYNONYMOUS_COMMANDS = (
    ("leq?slant|leq|le", r"\\leq "),
    ("geq?slant|geq|ge", r"\\geq "),
    ("neq|ne", r"\\neq "),
    ("lbrace", r"\\{"),
    ("rbrace", r"\\}"),
    ("infin|infinity", r"\\infty "),
    ("ldots|cdots|dots", r"\\dots "),
    ("varpi", r"\\pi "),
    # Letter variants are one symbol (physics writes \varepsilon_0 and \epsilon_0 for the same constant).
    ("varepsilon", r"\\epsilon "),
    ("vartheta", r"\\theta "),
    ("varphi", r"\\phi "),
    ("varrho", r"\\rho "),
    ("emptyset|varnothing", r"\\emptyset "),
    ("backslash|smallsetminus", r"\\setminus "),  # set difference
)
_COMMAND_SYNONYMS = (
    *((_commands(names), spelling) for names, spelling in _SYNONYMOUS_COMMANDS),
    (re.compile(r"\\\{\s*\\\}"), r"\\emptyset "),  # {} is the empty set
    (re.compile(r"\\mathbb\s*(?:\{\s*R\s*\}|R(?![A-Za-z]))"), r"(-\\infty,\\infty)"),  # the real line
)


def canonical_commands(text: str) -> str:
    """Synonymous commands get one spelling: ``\\le`` -> ``\\leq``, ``\\lbrace`` -> ``\\{``."""
    if "\\" not in text:
        return text
    for pattern, replacement in _COMMAND_SYNONYMS:
        text = pattern.sub(replacement, text)
    return text


_KEEP_SPACE_AFTER_COMMAND = re.compile(r"(\\[A-Za-z]+)\s+(?=[A-Za-z])")
_WORD_SPACE = re.compile(r"(?<=[A-Za-z])\s+(?=[A-Za-z])")
_DIGIT_SPACE = re.compile(r"(?<=\d)\s+(?=\d)")
_ANY_SPACE = re.compile(r"\s+")


def canonical_whitespace(text: str) -> str:
    """Whitespace goes, except one space where it separates words, a command and a letter, or digits."""
    if not any(c.isspace() for c in text):
        return text
    text = _KEEP_SPACE_AFTER_COMMAND.sub("\\1\x00", text)
    text = _WORD_SPACE.sub("\x00", text)
    text = _DIGIT_SPACE.sub("\x00", text)
    return _ANY_SPACE.sub("", text).replace("\x00", " ")


_SINGLE_BRACED = re.compile(r"([\^_])\{(\w|\\infty|\\pi)\}")
_LEADING_ZEROS = re.compile(r"(?<![\d.\w])0+(?=\d)")
# ".4" is 0.4 (never 4); not after a digit, a word, a bracket or a dot ("1.5", "x.5", "...").
_LEADING_DOT = re.compile(r"(?<![\w.)}\]\\])\.(?=\d)")
_LEADING_PLUS = re.compile(r"(?:(?<=^)|(?<=[(\[{,=]))\+")
_SIGNED_INFINITY = re.compile(r"\+\s*\\infty")


def canonical_numbers(text: str) -> str:
    """``007`` -> ``7``, ``+5`` -> ``5``, ``x^{2}`` -> ``x^2``, ``+\\infty`` -> ``\\infty``."""
    if "0" in text:
        text = _LEADING_ZEROS.sub("", text)
    if "." in text:
        text = _LEADING_DOT.sub("0.", text)
    if "+" in text:
        text = _LEADING_PLUS.sub("", text)
        text = _SIGNED_INFINITY.sub(r"\\infty", text)
    if "{" in text:
        text = _SINGLE_BRACED.sub(r"\1\2", text)
    return text


_TRAILING = re.compile(r"(?:\s|\.(?!\.)|\\\s|,|;)+$")


# Only the tail is searched: a "$"-anchored run retried at every start is quadratic on ";;;...;1".
_TRAILING_WINDOW = 64


def strip_trailing_punctuation(text: str) -> str:
    """``42.`` -> ``42``; a trailing period, comma or semicolon is sentence punctuation."""
    if text.endswith("..."):
        return text
    cut = max(len(text) - _TRAILING_WINDOW, 0)
    stripped = text[:cut] + _TRAILING.sub("", text[cut:])
    return stripped if stripped else text


# Used with fullmatch on stripped text: no two adjacent \s* (they backtrack quadratically on blanks).
_CHOICE = re.compile(r"(?:\(\s*)?([A-Ha-h])\s*\)(?:\s.*)?|([A-H])", re.DOTALL)


def canonical_choice(text: str) -> str:
    """``(A)``, ``\\text{(B)}``, ``C)`` and ``(d) 12`` -> the choice letter, upper case."""
    match = _CHOICE.fullmatch(text.strip())
    if match is None:
        return text
    return (match.group(1) or match.group(2)).upper()


_TEXT_ANSWER = re.compile(r"^[A-Za-z][A-Za-z .,'\-]*$")


def lowercase_text(text: str) -> str:
    """Text answers compare case-insensitively (``Yes`` == ``yes``); math keeps its case."""
    if _TEXT_ANSWER.match(text) and re.search(r"[A-Za-z]{2}", text):
        return text.lower()
    return text


def _example(*pairs: tuple[str, str]) -> tuple[tuple[str, str], ...]:
    return pairs


STEPS: tuple[NormalizationStep, ...] = (
    NormalizationStep(
        "unicode", unicode_to_latex, _example(("\u22125", "-5"), ("2\u03c0", "2\\pi "))
    ),
    NormalizationStep(
        "escapes", undo_double_escapes,
        _example(("\\\\frac{1}{2}", "\\frac{1}{2}"), ("\\begin{pmatrix}1\\\\x\\end{pmatrix}", "\\begin{pmatrix}1\\\\x\\end{pmatrix}")),
    ),
    NormalizationStep(
        "delimiters", strip_math_delimiters, _example(("$5$", " 5 "), ("\\(x\\)", " x "))
    ),
    NormalizationStep(
        "clock", clock_times,
        _example(("7:05 \\text{ p.m.}", "19:05"), ("12:30 am", "0:30"), ("19:05:00", "19:05"), ("3pm^2", "3pm^2"), ("1:2", "1:2")),
    ),
    NormalizationStep(
        "operators", named_operators,
        _example(("\\operatorname{arccosh}(2)", "\\arccosh(2)"), ("\\operatorname{floor}(x)", "\\lfloor x\\rfloor "),
                 ("\\operatorname{sgn}(x)", "\\frac{(x)}{|x|}"), ("\\operatorname{Re}(z)", "\\operatorname{Re}(z)")),
    ),
    NormalizationStep(
        "plain_text", plain_text_math,
        _example(("exp(16)", "e^{16}"), ("pi/2", "\\pi /2"), ("-2*pi", "-2\\cdot \\pi "), ("sqrt(2)/2", "\\sqrt{2}/2"),
                 ("2**10", "2^{10}"), ("e^(2x)", "e^{2x}"), ("a^*", "a^*"), ("spin", "spin"),
                 ("np.arcsin(1)", "np.arcsin(1)")),
    ),
    NormalizationStep(
        "binomials", choose_as_binom, _example(("{n \\choose k}", "\\binom{n}{k}"), ("{5 \\choose 2}+1", "\\binom{5}{2}+1"))
    ),
    NormalizationStep("factorials", factorial_powers, _example(("3!^2", "(3!)^2"), ("n!^{2}", "(n!)^{2}"), ("5!", "5!"))),
    NormalizationStep(
        "relations", ascii_relations,
        _example(("x >= 5", "x \\geq  5"), ("x<=2", "x\\leq 2"), ("x != 3", "x \\neq  3"), ("5!=120", "5!=120")),
    ),
    NormalizationStep(
        "units", strip_units,
        _example(("8 \\text{ km}", "8"), ("\\$5", " 5"), ("12 minutes", "12"), ("4t", "4t"), ("5 m", "5"), ("2h", "2h"), ("10^2", "10^2"),
                 ("5 \\text{ m}^2", "5"), ("3\\,\\text{m}/\\text{s}", "3"), ("2\\cdot 10^2", "2\\cdot 10^2")),
    ),
    NormalizationStep(
        "text", unwrap_text,
        _example(("\\text{Yes}", " Yes "), ("3 \\text{ or } 4", "3, 4"), ("x=1 or x=2", "x=1; x=2"), ("x=1 and y=2", "x=1, y=2"), ("(11,7)or(7,11)", "(11,7), (7,11)")),
    ),
    NormalizationStep(
        "sized_delimiters", strip_sized_delimiters,
        _example(("\\left( 1, 2 \\right)", "( 1, 2 )"), ("\\left\\{1\\right.", "\\{1")),
    ),
    NormalizationStep(
        "fractions", canonical_fractions,
        _example(("\\dfrac12", "\\frac{1}{2}"), ("\\tfrac{1}{2}", "\\frac{1}{2}"), ("\\sqrt2", "\\sqrt{2}"), ("\\sqrt 23", "\\sqrt{2}3")),
    ),
    NormalizationStep(
        "spacing", strip_spacing,
        _example(("10\\,000", "10000"), ("11,\\!111", "11,111"), ("a\\!b", "a b"), ("1~2", "1 2"), ("1,\\quadx", "1, x"),
                 ("y=x \\quad y=-x", "y=x, y=-x")),
    ),
    NormalizationStep(
        "grouping", strip_grouping,
        _example(("{1}", "1"), ("{{1}}", "1"), ("{1,3}", "1,3"), ("\\frac{1}{2}", "\\frac{1}{2}"), ("x^{2}", "x^{2}"),
                 ("{x+1}^2", "(x+1)^2"), ("((x+1))", "(x+1)"), ("((1,2),(3,4))", "((1,2),(3,4))"), ("10{,}000", "10{,}000")),
    ),
    NormalizationStep(
        "thousands", strip_thousands_separators,
        _example(("10{,}000", "10000"), ("10,000", "10000"), ("1, 2", "1, 2"), ("11,13", "11,13"), ("11,111,111", "11111111"),
                 ("(0,100)", "(0,100)"), ("(12,102)", "(12,102)"), ("14{, }916", "14916")),
    ),
    NormalizationStep(
        "trig_degrees", degrees_in_trig,
        _example(("\\cos(60^\\circ)", "\\cos(\\frac{60\\pi}{180})"), ("\\sin 30^{\\circ}", "\\sin \\frac{30\\pi}{180}"),
                 ("\\sin(90^\\circ-x)", "\\sin(\\frac{90\\pi}{180}-x)"), ("30^\\circ", "30^\\circ")),
    ),
    NormalizationStep(
        "degrees", strip_degrees, _example(("30^\\circ", "30"), ("30^{\\circ}", "30"), ("30\\degree", "30"), ("f \\circ g", "f \\circ g"))
    ),
    NormalizationStep(
        "percent", canonical_percent, _example(("50\\%", "50%"), ("50 %", "50%"), ("28 percent", "28%"), ("28 pct", "28%"), ("28 percentage", "28%"))
    ),
    NormalizationStep(
        "commands", canonical_commands,
        _example(("x\\le 3", "x\\leq  3"), ("\\lbrace", "\\{"), ("\\{ \\}", "\\emptyset "), ("\\mathbb{R}", "(-\\infty,\\infty)"),
                 ("A \\backslash B", "A \\setminus  B")),
    ),
    NormalizationStep(
        "choice", canonical_choice, _example(("(A)", "A"), ("(b) 12", "B"), ("x", "x"))
    ),
    NormalizationStep(
        "whitespace", canonical_whitespace,
        _example(("1 + 2", "1+2"), ("\\sin x", "\\sin x"), ("no solution", "no solution")),
    ),
    NormalizationStep(
        "numbers", canonical_numbers,
        _example(("007", "7"), ("+5", "5"), ("x^{2}", "x^2"), ("0.5", "0.5"), ("(+\\infty)", "(\\infty)"), (".4", "0.4"), ("1.5", "1.5")),
    ),
    NormalizationStep("trailing", strip_trailing_punctuation, _example(("42.", "42"), ("9,6.", "9,6"))),
    NormalizationStep("case", lowercase_text, _example(("Yes", "yes"), ("4A", "4A"), ("A", "A"))),
)

#: Inputs longer than this are not normalized beyond the first steps (they are never a real answer).
MAX_NORMALIZED_LENGTH = 10_000


@bounded_cache(32 * MB, max_key_length=4096)  # bounded by bytes: long unique answers stream through
def normalize(text: str) -> str:
    """The canonical string of an answer or gold: every step of ``STEPS`` in order."""
    text = unwrap_gold(text)
    if len(text) > MAX_NORMALIZED_LENGTH:
        return canonical_whitespace(text)
    if text.isdigit():
        return text.lstrip("0") or "0"
    for step in STEPS:
        text = step.apply(text)
    return text.strip()
