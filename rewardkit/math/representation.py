"""Stage 3a, representation: a normalized answer string becomes a small value tree.

Numbers are exact ``Fraction``s tagged with how they were written (the strict policy cares);
lists, sets, tuples, intervals, unions, matrices, relations and assignments keep their structure;
anything else is an ``Expression`` (LaTeX for the symbolic stage) or ``Text``. Parsing here is
string work only: no sympy, so the fast path never imports it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction
from math import gcd, log10

from rewardkit.math.caching import MB, bounded_cache, per_character
from rewardkit.math.guards import nesting_depth


class NumberForm(str, Enum):
    """How a number was written; the strict (PRM800K) policy accepts some forms only."""

    INTEGER = "integer"
    DECIMAL = "decimal"
    FRACTION = "fraction"
    MIXED = "mixed"
    SCIENTIFIC = "scientific"
    POWER = "power"


@dataclass(frozen=True)
class Number:
    """An exact rational value and the form it was written in."""

    value: Fraction
    form: NumberForm
    percent: bool = False
    reduced: bool = True
    #: The place of the last digit written: 10**-decimals (a float printed at full precision has many).
    decimals: int = 0


@dataclass(frozen=True)
class Infinity:
    """``\\infty`` (sign 1) or ``-\\infty`` (sign -1)."""

    sign: int


@dataclass(frozen=True)
class Expression:
    """Anything the fast path cannot decide: LaTeX handed to the symbolic stage."""

    latex: str


@dataclass(frozen=True)
class Text:
    """A text answer (``yes``, ``converges absolutely``), compared as a lowercase string."""

    text: str


@dataclass(frozen=True)
class Sequence:
    """Items with their brackets: ``""`` for a bare comma list, ``{``/``}`` for a set, else a tuple or interval."""

    items: tuple[Value, ...]
    opener: str
    closer: str
    interval: bool = False  # known to be an interval (it came from an inequality)
    solutions: bool = False  # the values a ``\\pm`` stands for (spliced into an enclosing list or set)
    alternatives: bool = False  # separated by ``;`` ("or" between relations): solutions, not parts of one

    @property
    def is_unordered(self) -> bool:
        return self.opener in ("", "{")

    @property
    def is_interval(self) -> bool:
        """Two items with mixed brackets or an infinite end: an interval rather than a point."""
        return self.interval or (
            len(self.items) == 2
            and self.opener in "(["
            and ((self.opener + self.closer) in ("(]", "[)") or any(isinstance(i, Infinity) for i in self.items))
        )


@dataclass(frozen=True)
class Union:
    """Intervals or sets joined by ``\\cup``."""

    parts: tuple[Value, ...]


@dataclass(frozen=True)
class SetOperation:
    """Sets joined by ``\\cap`` or ``\\setminus`` (and ``\\cup``), left to right: evaluated by ``sets``."""

    operands: tuple[Value, ...]
    operators: tuple[str, ...]


@dataclass(frozen=True)
class Matrix:
    """A matrix or vector from ``pmatrix``/``bmatrix``/``array``: rows of values."""

    rows: tuple[tuple[Value, ...], ...]


@dataclass(frozen=True)
class Relation:
    """An equation or inequality (chains allowed): LaTeX sides and the operators between them."""

    sides: tuple[str, ...]
    operators: tuple[str, ...]


@dataclass(frozen=True)
class Assignment:
    """``x = 5``: one variable given a value; it compares as its value.

    ``label`` marks a name that is not a single variable (``(p,q) = (3,2)``, ``|AB| = 1``,
    ``A:B = 1``): lenient compares its value, strict keeps it an equation (as PRM800K does).
    """

    variable: str
    value: Value
    value_latex: str
    label: bool = False


@dataclass(frozen=True)
class Power:
    """An exact power too large to expand (``2^{65536}``, ``2^{2^{2^{2^2}}}``), kept as base and exponent.

    The base is the smallest integer whose power it is (``4^{3}`` is stored as ``2^{6}``), so equal
    values have equal fields and compare without being computed.
    """

    base: int
    exponent: int
    negative: bool = False


Value = Number | Infinity | Expression | Text | Sequence | Union | SetOperation | Matrix | Relation | Assignment | Power

_OPENERS = {"(": ")", "[": "]", "{": "}"}
_SET_OPERATORS = re.compile(r"\\(?:cup|cap|setminus)(?![A-Za-z])")
_CLOSERS = set(_OPENERS.values())


def split_at_top_level(text: str, separator: re.Pattern[str]) -> tuple[list[str], list[str]]:
    """Split on ``separator`` matches outside any brackets: (parts, the separators found)."""
    parts: list[str] = []
    separators: list[str] = []
    depth = 0
    start = 0
    index = 0
    while index < len(text):
        char = text[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif depth == 0 and (match := separator.match(text, index)) is not None and match.end() > index:
            parts.append(text[start:index])
            separators.append(match.group())
            index = start = match.end()
            continue
        index += 1
    parts.append(text[start:])
    return parts, separators


_LIST_SEPARATORS = {",;": re.compile(r"[,;]"), ",": re.compile(",")}


def split_top_level(text: str, separators: str = ",;") -> list[str]:
    """Split on separators outside any brackets: ``(1,2),3`` -> ``["(1,2)", "3"]``."""
    if not any(sep in text for sep in separators):
        return [text]
    pattern = _LIST_SEPARATORS.get(separators) or re.compile("[" + re.escape(separators) + "]")
    return split_at_top_level(text, pattern)[0]


def _split_top_level_token(text: str, token: str) -> list[str]:
    """Split on a command outside brackets; only the whole command (``\\pm`` is not ``\\pmod``)."""
    if token not in text:
        return [text]
    return split_at_top_level(text, re.compile(re.escape(token) + r"(?![A-Za-z])"))[0]


def _enclosing_brackets(text: str) -> tuple[str, str, str] | None:
    """(opener, inner, closer) when one bracket pair encloses the whole text."""
    if len(text) < 2:
        return None
    if text.startswith("\\{") and text.endswith("\\}"):
        opener, closer, inner = "{", "}", text[2:-2]
    elif text[0] in "([" and text[-1] in ")]":
        opener, closer, inner = text[0], text[-1], text[1:-1]
    else:
        return None
    depth = 0
    for char in inner:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth < 0:
                return None
    return (opener, inner, closer) if depth == 0 else None


_SIGN = r"(?P<sign>-)?"
_INTEGER = re.compile(_SIGN + r"(?P<int>\d+)(?P<pct>%)?$")
_DECIMAL = re.compile(_SIGN + r"(?P<int>\d*)\.(?P<frac>\d+)(?P<pct>%)?$")
_REPEATING = re.compile(_SIGN + r"(?P<int>\d*)\.(?P<frac>\d*)\\overline\{(?P<rep>\d+)\}$")
_FRACTION = re.compile(_SIGN + r"\\frac\{(?P<num>-?\d+)\}\{(?P<den>-?\d+)\}(?P<pct>%)?$")
_SLASH = re.compile(_SIGN + r"(?P<num>\d+)/(?P<den>\d+)(?P<pct>%)?$")
_MIXED = re.compile(_SIGN + r"(?P<int>\d+) ?\\frac\{(?P<num>\d+)\}\{(?P<den>\d+)\}$")
# ASCII mixed numbers: "2 3/4" is 11/4 (a proper fraction after a space; "2 5/4" is not read so).
_MIXED_SLASH = re.compile(_SIGN + r"(?P<int>\d+) (?P<num>[1-9]\d*)/(?P<den>\d+)$")
# A product needs "10^" after it (``2\times3`` is 6, not 2000); only e-notation has a bare exponent.
_SCIENTIFIC = re.compile(
    _SIGN + r"(?P<mant>\d+(?:\.\d+)?)(?:(?:\\times|\\cdot|\*)10\^|[eE])(?:\{(?P<exp1>[-+]?\d+)\}|(?P<exp2>[-+]?\d+))$"
)
_POWER = re.compile(_SIGN + r"(?P<base>\d+)\^(?:\{(?P<exp1>-?\d+)\}|(?P<exp2>\d))$")
#: Longer answers are not parsed into structures (bounded work on hostile input).
MAX_PARSED_LENGTH = 5_000
#: Numbers with more digits than this are left to the guard (Python refuses longer int strings).
MAX_DIGITS = 4000
#: Deeper bracket nesting is never a real answer; parsing it would cost a re-scan per level.
MAX_STRUCTURE_DEPTH = 20
#: Exponents beyond this are not evaluated by the fast path (the guard decides).
MAX_EXPONENT_DIGITS = 10_000


def _decimal(integer: str, fraction: str) -> Fraction:
    return Fraction(int((integer or "0") + fraction), 10 ** len(fraction))


def parse_number(text: str) -> Number | None:
    """An exact number from its written form, or None (``12\\frac{3}{5}`` is 63/5, never 36/5)."""
    if len(text) > MAX_DIGITS:
        return None
    sign = -1 if text.startswith("-") else 1
    if match := _INTEGER.match(text):
        return Number(sign * Fraction(int(match["int"])), NumberForm.INTEGER, bool(match["pct"]))
    if match := _DECIMAL.match(text):
        value = sign * _decimal(match["int"], match["frac"])
        form = NumberForm.INTEGER if int(match["frac"]) == 0 and match["int"] else NumberForm.DECIMAL
        return Number(value, form, bool(match["pct"]), decimals=len(match["frac"]))
    if match := _REPEATING.match(text):
        # 0.1\overline{6} = 0.1 + 0.0666... : the repeating block over 9s, shifted past the fixed digits.
        fixed = _decimal(match["int"], match["frac"])
        repeating = Fraction(int(match["rep"]), (10 ** len(match["rep"]) - 1) * 10 ** len(match["frac"]))
        return Number(sign * (fixed + repeating), NumberForm.DECIMAL)
    if (match := _FRACTION.match(text)) or (match := _SLASH.match(text)):
        numerator, denominator = int(match["num"]), int(match["den"])
        if denominator == 0:
            return None
        reduced = gcd(numerator, denominator) == 1  # the sign may sit below: \frac{1}{-2} is reduced
        value = sign * Fraction(numerator, denominator)
        return Number(value, NumberForm.FRACTION, bool(match["pct"]), reduced)
    if (match := _MIXED.match(text)) or ((match := _MIXED_SLASH.match(text)) and int(match["num"]) < int(match["den"])):
        numerator, denominator = int(match["num"]), int(match["den"])
        if denominator == 0:
            return None
        value = sign * (int(match["int"]) + Fraction(numerator, denominator))
        return Number(value, NumberForm.MIXED, reduced=gcd(numerator, denominator) == 1)
    if match := _SCIENTIFIC.match(text):
        exponent = int(match["exp1"] or match["exp2"])
        if abs(exponent) > MAX_EXPONENT_DIGITS:
            return None
        mantissa = match["mant"]
        value = Fraction(mantissa) if "." in mantissa else Fraction(int(mantissa))
        places = len(mantissa.partition(".")[2]) - exponent  # the last written digit is 10**-places
        return Number(sign * value * Fraction(10) ** exponent, NumberForm.SCIENTIFIC, decimals=places)
    if match := _POWER.match(text):
        base, exponent = int(match["base"]), int(match["exp1"] or match["exp2"])
        if base > 1 and abs(exponent) * log10(base) > MAX_EXPONENT_DIGITS:
            return None
        if base == 0 and exponent < 0:
            return None
        return Number(sign * Fraction(base) ** exponent, NumberForm.POWER)
    return None


#: Exponents (of a tower's levels too) with more digits than this are not computed: the guard decides.
MAX_TOWER_EXPONENT_DIGITS = 1_000
#: Bases of powers kept unexpanded have at most this many digits.
MAX_POWER_BASE_DIGITS = 100
_POWER_HEAD = re.compile(r"(?P<sign>-)?(?P<base>\d{1,100})\^")


def _power_parts(text: str) -> tuple[bool, int, str] | None:
    """(negative, base, exponent text) of ``-b^{e}`` / ``b^e`` written as the whole text, else None."""
    head = _POWER_HEAD.match(text)
    if head is None:
        return None
    rest = text[head.end() :]
    if rest.startswith("{") and rest.endswith("}"):
        depth = 0
        for index, char in enumerate(rest):
            depth += 1 if char == "{" else -1 if char == "}" else 0
            if depth == 0 and index != len(rest) - 1:
                return None  # "2^{3}+1": the braces close before the end
        exponent = rest[1:-1].strip()
    elif len(rest) == 1 and rest.isdigit():
        exponent = rest
    else:
        return None
    return bool(head["sign"]), int(head["base"]), exponent


def _exact_integer(text: str, depth: int = 0) -> int | None:
    """An integer or a tower of integer powers as an int, if it has at most ``MAX_TOWER_EXPONENT_DIGITS`` digits."""
    if depth > 20:
        return None
    if re.fullmatch(r"-?\d{1,1000}", text):
        return int(text)
    parts = _power_parts(text)
    if parts is None:
        return None
    negative, base, exponent_text = parts
    exponent = _exact_integer(exponent_text, depth + 1)
    if exponent is None or exponent < 0:
        return None
    if base > 1 and exponent * log10(base) > MAX_TOWER_EXPONENT_DIGITS:
        return None
    value = base**exponent
    return -value if negative else value


def _integer_root(number: int, degree: int) -> int:
    """The integer ``degree``-th root of ``number`` (rounded down), by Newton's method on ints."""
    root = 1 << -(-number.bit_length() // degree)  # above the root
    while True:
        smaller = ((degree - 1) * root + number // root ** (degree - 1)) // degree
        if smaller >= root:
            return root
        root = smaller


def _primitive_power(base: int) -> tuple[int, int]:
    """(r, k) with ``r**k == base`` and k largest: 65536 -> (2, 16), 12 -> (12, 1)."""
    for degree in range(base.bit_length(), 1, -1):
        root = _integer_root(base, degree)
        if root > 1 and root**degree == base:
            return root, degree
    return base, 1


def parse_power(text: str) -> Number | Power | None:
    """A power tower or a power too large to expand (``2^{2^{2^{2^2}}}``, ``2^{65536}``), or None.

    The exponent, a tower itself, is computed when it has at most ``MAX_TOWER_EXPONENT_DIGITS``
    digits; the power is computed only when it is small (a ``Number``), else kept as a ``Power``.
    """
    parts = _power_parts(text)
    if parts is None:
        return None
    negative, base, exponent_text = parts
    exponent = _exact_integer(exponent_text)
    if exponent is None or (base == 0 and exponent < 0):
        return None
    if base < 2 or abs(exponent) * log10(base) <= MAX_EXPONENT_DIGITS:
        value = Fraction(base) ** exponent
        return Number(-value if negative else value, NumberForm.POWER)
    root, degree = _primitive_power(base)
    return Power(root, exponent * degree, negative)


_RELATION_OPERATORS = ("\\leq", "\\geq", "\\neq", "\\lt", "\\gt", "<", ">", "=")
_RELATION_PATTERN = re.compile(r"\\leq|\\geq|\\neq|\\lt(?![a-z])|\\gt(?![a-z])|\\approx(?![a-z])|<|>|=")
# A variable, or a function of its arguments: x_1, \\theta, f'(x), \\Phi(x,y).
_ASSIGNABLE = re.compile(
    r"^(?:[A-Za-z](?:_\{?\w+\}?)?|\\[A-Za-z]+(?:_\{?\w+\}?)?|(?:[A-Za-z]|\\[A-Za-z]+)'*\([A-Za-z](?:,[A-Za-z])*\))$"
)
_MEMBERSHIP = re.compile(r"^(?P<variable>[A-Za-z])\\in(?P<value>.+)$")
_CHOICE_LETTER = re.compile(r"^[A-H]$")
_TEXT = re.compile(r"^[a-z][a-z .,'\-]*$")
# One matrix environment as the whole text ("A + B" of two matrices is an expression, not a matrix).
_MATRIX = re.compile(
    r"^\\begin\{(?P<env>[pbBvV]?matrix|array)\}(?:\{[^{}]*\})?(?P<body>(?:(?!\\begin\{|\\end\{).)*)\\end\{(?P=env)\}$",
    re.DOTALL,
)


_OPERATOR_SPELLING = {"\\lt": "<", "\\gt": ">"}
APPROX = "\\approx"
# Names that label a value without being one variable: (p,q), |AB|, AB, A:B, V_1:V_2, \\frac{PM}{QM}, \\angle ABC.
_NAME = r"[A-Za-z](?:_\{?\w+\}?)?"
# A quantity's name with a subscript that is not one word: v_{\\max}, R_{\\odot}, T_{1/2}, x_{n+1}.
SUBSCRIPTED_NAME = r"(?:[A-Za-z]|\\[A-Za-z]+)_(?:\{[^{}=]*(?:\{[^{}=]*\}[^{}=]*)*\}|\\[A-Za-z]+)'*"
# Other names of a quantity: a change (\\Delta H, \\Delta x_1), a p-function (pH, pOH, pK_a).
OTHER_NAME = r"\\Delta ?[A-Za-z](?:_\{?\w+\}?)?|p(?:H|OH|K_?\{?[ab]\}?|K)"
_LABEL = re.compile(
    r"^(?:\((?:" + _NAME + r",)+" + _NAME + r"\)|\|[A-Za-z]+(?:_\{?\w+\}?)?\||[A-Z]{2,}(?:_\{?\w+\}?)?"
    r"|[A-Za-z]+(?:_\{?\w+\}?)?:[A-Za-z]+(?:_\{?\w+\}?)?|\\frac\{[A-Z]+\}\{[A-Z]+\}|\\angle ?[A-Z]{1,3}"
    r"|" + SUBSCRIPTED_NAME + r"|" + OTHER_NAME + r")$"
)


def _split_relation(text: str) -> tuple[list[str], list[str]] | None:
    if not any(op in text for op in ("=", "<", ">", "\\leq", "\\geq", "\\neq", "\\lt", "\\gt", APPROX)):
        return None
    sides, operators = split_at_top_level(text, _RELATION_PATTERN)
    if not operators or not all(side.strip() for side in sides):
        return None  # "\\pi+<junk>" is not a relation: a relation has a term on every side
    operators = [_OPERATOR_SPELLING.get(op, op) for op in operators]
    sides = [side.strip() for side in sides]
    if operators == [APPROX] and not _approximates(sides[0], sides[1]):
        operators = ["="]  # "x \\approx 3" states a value like "x = 3" (the value still meets the tolerance rules)
    return sides, operators


def _approximates(exact: str, rounded: str) -> bool:
    """``\\frac{22}{7} \\approx 3.14``: an exact value followed by its rounding (a decimal within half a unit
    of its last digit, or truncated: ``\\frac23 \\approx 0.66``; an expression's rounding is not checked
    here). ``5 \\approx 3`` and ``\\frac13 \\approx 0.34`` are no rounding."""
    if _ASSIGNABLE.match(exact) or _LABEL.match(exact):
        return False
    decimal, value = parse_number(rounded), _parse(exact)
    if decimal is None or decimal.form is not NumberForm.DECIMAL:
        return False
    if isinstance(value, Number):
        unit, difference = Fraction(1, 10**decimal.decimals), value.value - decimal.value
        rounded = abs(difference) <= unit / 2 or 0 <= (difference if value.value >= 0 else -difference) < unit
        return value.form not in (NumberForm.DECIMAL, NumberForm.SCIENTIFIC) and rounded  # rounded or truncated
    return isinstance(value, (Expression, Power))


def _assignment(name: str, value_latex: str) -> Assignment | None:
    """``name = value`` as an assignment when ``name`` is a variable or a label, else None."""
    if _ASSIGNABLE.match(name):
        return Assignment(name, _parse(value_latex), value_latex)
    if _LABEL.match(name):
        return Assignment(name, _parse(value_latex), value_latex, label=True)
    return None


def stated_value(relation: Relation) -> Value | None:
    """The value a chain of equalities states: its last side, before any approximation.

    ``x = 5+5+1 = 7 = 11`` states ``x = 11``; ``x = \\frac13 \\approx 0.33`` states ``x = \\frac13``;
    ``x+y = 5`` states ``5``. None for inequalities.
    """
    if not all(op in ("=", APPROX) for op in relation.operators):
        return None
    if relation.operators == (APPROX,):
        return _parse(relation.sides[0])  # "\\frac{22}{7} \\approx 3.14" states the exact value
    sides = list(relation.sides)
    if APPROX in relation.operators[1:]:
        sides = sides[: relation.operators.index(APPROX, 1) + 1]
    return _assignment(sides[0], sides[-1]) or _parse(sides[-1])


_PLUS_MINUS = re.compile(r"\s*\\(?:pm|mp)(?![A-Za-z])\s*")


def _signs(text: str, plus: bool) -> str:
    """``text`` with each ``\\pm`` read as ``+`` (``\\mp`` as ``-``), or the other way round."""

    def sign(match: re.Match[str]) -> str:
        positive = plus == (match.group().strip() == "\\pm")
        before = text[: match.start()].rstrip()
        if positive and (not before or before[-1] in "({[,=&"):
            return ""  # "\\pm 3" and "\\frac{\\pm 1}{2}": a leading plus is no sign
        return "+" if positive else "-"

    return _PLUS_MINUS.sub(sign, text)


def _expand_plus_minus(text: str) -> list[str] | None:
    """``\\frac{-3 \\pm \\sqrt{5}}{2}`` -> the two values it stands for (every ``\\pm`` takes one sign,
    every ``\\mp`` the other, as in ``\\cos(a \\pm b) = \\cos a \\cos b \\mp \\sin a \\sin b``)."""
    if ("\\pm" not in text and "\\mp" not in text) or not _PLUS_MINUS.search(text):
        return None
    return [_signs(text, True), _signs(text, False)]


def _solutions(values: list[Value]) -> tuple[Value, ...]:
    """Items of a list or set, with the values of a ``\\pm`` item spliced in (``\\{a \\pm b\\}`` has two items)."""
    items: list[Value] = []
    for value in values:
        if isinstance(value, Sequence) and value.solutions:
            items.extend(value.items)
        else:
            items.append(value)
    return tuple(items)


def _is_text(text: str) -> bool:
    return bool(_TEXT.match(text)) and (" " in text or bool(re.search(r"[a-z]{3}", text)) or text == "no")


def _parse_matrix(body: str) -> Matrix:
    rows = [row for row in re.split(r"\\\\", body) if row.strip()]
    return Matrix(tuple(tuple(parse_value(cell.strip()) for cell in row.split("&")) for row in rows))


@bounded_cache(64 * MB, max_key_length=4096, size=per_character(160, 4096))  # value trees: <= ~260 B/char measured
def parse_value(text: str) -> Value:
    """The value tree of a normalized answer (never raises: unknown shapes are ``Expression``)."""
    text = text.strip()
    if len(text) > MAX_PARSED_LENGTH:
        return Expression(text)  # no real answer is this long: the guard refuses it
    if sum(text.count(bracket) for bracket in "([{") > MAX_STRUCTURE_DEPTH and nesting_depth(text) > MAX_STRUCTURE_DEPTH:
        return Expression(text)  # every level re-scans the text: bounded work, and the guard refuses it
    return _parse(text)


def _parse(text: str) -> Value:
    text = text.strip()
    if text.startswith("=") and not text.startswith("=="):
        text = text[1:].strip()  # "\\boxed{= \\frac{22}{7}}": the working's last step, its value
    # "p=5,q=2; p=7,q=2": semicolons separate solutions, commas the parts of one.
    parts = [part.strip() for part in split_top_level(text, ";")] if ";" in text else []
    alternatives = len(parts) > 1
    if len(parts) < 2:
        parts = [part.strip() for part in split_top_level(text, ",")]
    if len(parts) > 1:
        items = _solutions([_parse(part) for part in parts if part and part != "\\dots"])
        return Sequence(items, "", "", alternatives=alternatives)
    if "\\cup" in text or "\\cap" in text or "\\setminus" in text:
        operands, operators = split_at_top_level(text, _SET_OPERATORS)
        if operators and all(operand.strip() for operand in operands):
            values = tuple(_parse(operand.strip()) for operand in operands)
            if set(operators) == {"\\cup"}:
                return Union(values)
            return SetOperation(values, tuple(operators))
    enclosed = _enclosing_brackets(text)
    if enclosed is not None and enclosed[0] in "([" and _PLUS_MINUS.search(inner := enclosed[1]) and "," in inner:
        # "(\\pm 1, 0)": a point for each sign, (1, 0) and (-1, 0).
        return Sequence(tuple(_parse(variant) for variant in _expand_plus_minus(text) or ()), "", "", solutions=True)
    if enclosed is not None:
        opener, inner, closer = enclosed
        inner_parts = [part.strip() for part in split_top_level(inner, ",")]
        if len(inner_parts) > 1 or opener == "{":
            items = [_parse(part) for part in inner_parts if part]
            return Sequence(_solutions(items) if opener == "{" else tuple(items), opener, closer)
        if opener == "(" and closer == ")":
            return _parse(inner)
        if opener == "[" and closer == "]" and _MATRIX.match(inner.strip()):
            return _parse(inner)  # "\\left[\\begin{array}{cc}...\\end{array}\\right]": the brackets draw the matrix
    matrix = _MATRIX.match(text)
    if matrix is not None:
        return _parse_matrix(matrix["body"])
    membership = _MEMBERSHIP.match(text)
    if membership is not None:
        return Assignment(membership["variable"], _parse(membership["value"]), membership["value"])
    relation = _split_relation(text)
    if relation is not None:
        sides, operators = relation
        assignment = _assignment(sides[0], sides[1]) if operators == ["="] else None
        return assignment or Relation(tuple(sides), tuple(operators))
    expanded = _expand_plus_minus(text)
    if expanded is not None:
        return Sequence(tuple(_parse(part) for part in expanded), "", "", solutions=True)
    number = parse_number(text)
    if number is not None:
        return number
    if "^" in text:
        power = parse_power(text)
        if power is not None:
            return power
    if text in ("\\infty", "-\\infty"):
        return Infinity(-1 if text.startswith("-") else 1)
    if _is_text(text) or _CHOICE_LETTER.match(text):
        return Text(text)
    return Expression(text)
