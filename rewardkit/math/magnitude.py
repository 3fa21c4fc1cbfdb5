"""Static bounds on the numbers a LaTeX expression can produce, without evaluating it.

SymPy computes integer powers, factorials, ``\\Gamma`` of integers and binomial coefficients
eagerly and exactly: ``\\binom{10^9}{5 \\cdot 10^8}`` or ``\\Gamma(10^{10})`` would run for minutes
and hold gigabytes. The guards (``guards.py``) refuse such inputs before sympy sees them, and this
module tells them how large each argument can be: one linear pass that bounds ``log10 |value|``
from above, reading ``10^9``, ``5 \\cdot 10^8``, ``\\frac{1}{10^{-9}}``, ``(3!)!`` and ``x - x + 10^{10}``
(a letter counts as 1 and every term as positive, so a cancellation cannot hide a large number).

A bound is ``Bound(log10_upper, exact_below)``: ``|value| <= 10**log10_upper``, and when
``exact_below`` is true also ``|value| >= 10**-log10_upper`` (needed to bound a quotient: a sum such
as ``1 - 0.999999999`` can be tiny, so dividing by it is unbounded).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

#: Factorials and ``\\Gamma`` of arguments above this are refused (``1000!`` has 2,568 digits).
MAX_FACTORIAL_ARGUMENT = 1_000
#: Binomial coefficients with an argument above this are refused.
MAX_BINOMIAL_ARGUMENT = 10_000
#: Exponents above this are refused (``2^{10000}`` has 3,011 digits).
MAX_EXPONENT = 10_000
#: Values with more digits than this are refused (``(10^{1000})^{10000}`` has ten million).
MAX_VALUE_DIGITS = 100_000

_INFINITE = math.inf
_LOG_E = math.log10(math.e)
_LOG_PI = math.log10(math.pi)

_TOKEN = re.compile(r"\d+(?:\.\d*)?|\.\d+|\\[A-Za-z]+|\\.|\S")
_FRACTIONS = {"\\frac", "\\dfrac", "\\tfrac", "\\cfrac"}
_BINOMIALS = {"\\binom", "\\dbinom", "\\tbinom"}
_MULTIPLY = {"\\cdot", "\\times", "*"}
_DIVIDE = {"/", "\\div"}
_OPEN = {"(": ")", "[": "]", "{": "}", "\\lfloor": "\\rfloor", "\\lceil": "\\rceil", "\\{": "\\}", "\\langle": "\\rangle"}
_CLOSE = set(_OPEN.values())
# Commands that draw without standing for a value.
_SILENT = re.compile(r"\\(?:left|right|[bB]igg?[lr]?|displaystyle|limits|,|;|:|!|quad|qquad|%|circ|degree)$")
_BOUNDED_FUNCTIONS = {"\\sin", "\\cos", "\\tanh", "\\arcsin", "\\arccos", "\\arctan"}
_SEPARATORS = {"+", "-", ",", "=", "<", ">", ";", "&", "|", "\\pm", "\\mp", "\\\\"}
_LOGARITHMS = {"\\log", "\\ln", "\\lg", "\\sqrt"}


@dataclass(frozen=True)
class Bound:
    """``|value| <= 10**upper``; with ``exact_below`` also ``|value| >= 10**-upper``."""

    upper: float
    exact_below: bool = True
    letters: bool = False  # it has variables: a value chosen at evaluation, not a number sympy computes


_ONE = Bound(0.0)
_LETTER = Bound(0.0, letters=True)


def _add(bounds: list[Bound]) -> Bound:
    if len(bounds) == 1:
        return bounds[0]
    upper = max(bound.upper for bound in bounds) + math.log10(len(bounds))
    return Bound(upper, exact_below=False, letters=any(bound.letters for bound in bounds))


def _quotient(numerator: Bound, denominator: Bound) -> Bound:
    """``|a / b|``: bounded when ``|b|`` is bounded below; a sum of numbers (``1 - 0.999999999``) is not.

    A denominator with variables (``x + 1``) is a formula, not a number sympy computes: the quotient
    is bounded by its numerator (sympy cannot turn it into a large integer).
    """
    if denominator.exact_below:
        upper = numerator.upper + denominator.upper
    elif denominator.letters:
        upper = numerator.upper
    else:
        upper = _INFINITE
    return Bound(upper, numerator.exact_below and denominator.exact_below, numerator.letters or denominator.letters)


def _factorial_upper(argument: float) -> float:
    """``log10(n!)`` for ``n = 10**argument`` (at least 2)."""
    n = max(10**argument, 2.0)
    return math.lgamma(n + 1) / math.log(10)


def _power_upper(base: Bound, exponent: Bound) -> float:
    if exponent.upper == _INFINITE or base.upper == _INFINITE:
        return _INFINITE
    if exponent.upper > 300:
        return _INFINITE if base.upper > 0 else 0.0
    return base.upper * 10**exponent.upper


def _literal(token: str) -> Bound:
    integer = token.split(".")[0].lstrip("0")
    if len(integer) > 15:
        return Bound(float(len(integer)))
    value = float(token)
    if value == 0:
        return Bound(0.0, exact_below=False)
    return Bound(abs(math.log10(value)))


class _Bounder:
    """A recursive-descent reading of the tokens that computes bounds and records the first refusal."""

    def __init__(self, latex: str) -> None:
        self.tokens = _TOKEN.findall(latex)
        self.index = 0
        self.refusal: str | None = None

    def peek(self) -> str | None:
        while self.index < len(self.tokens) and _SILENT.match(self.tokens[self.index]):
            self.index += 1
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def take(self) -> str | None:
        token = self.peek()
        if token is not None:
            self.index += 1
        return token

    def refuse(self, reason: str) -> None:
        if self.refusal is None:
            self.refusal = reason

    # -- grammar -----------------------------------------------------------------------------

    def expression(self, closer: str | None = None) -> Bound:
        terms: list[Bound] = []
        while True:
            token = self.peek()
            if token is None or token in _CLOSE:
                break  # the caller takes its closer (or skips an unmatched one)
            if token == "\\choose":
                self.take()
                top = _add(terms) if terms else _ONE
                terms = [self.binomial(top, self.expression(closer))]
                continue
            if token in _SEPARATORS:
                self.take()
                continue
            terms.append(self.term(closer))
        return _add(terms) if terms else _ONE

    def term(self, closer: str | None) -> Bound:
        product = Bound(0.0)
        while True:
            token = self.peek()
            if token is None or token in _CLOSE or token in _SEPARATORS or token == "\\choose":
                break
            if token in _MULTIPLY:
                self.take()
                continue
            if token in _DIVIDE:
                self.take()
                product = _quotient(product, self.power())
                continue
            factor = self.power()
            product = Bound(product.upper + factor.upper, product.exact_below and factor.exact_below, product.letters or factor.letters)
        return product

    def power(self) -> Bound:
        base = self.postfix(self.atom())
        while self.peek() == "^":
            self.take()
            exponent = self.argument()
            if 10**min(exponent.upper, 300) > MAX_EXPONENT:
                self.refuse(f"an exponent above {MAX_EXPONENT:,}")
            base = self.postfix(Bound(_power_upper(base, exponent), base.exact_below, base.letters or exponent.letters))
        if MAX_VALUE_DIGITS < base.upper < _INFINITE:
            self.refuse(f"a number of more than {MAX_VALUE_DIGITS:,} digits")
        return base

    def postfix(self, bound: Bound) -> Bound:
        while self.peek() in ("!", "'", "_"):
            token = self.take()
            if token == "!":
                bound = self.factorial(bound, "a factorial")
            elif token == "_":
                self.argument()  # a subscript names, it does not compute
        return bound

    def factorial(self, argument: Bound, what: str) -> Bound:
        if argument.upper > math.log10(MAX_FACTORIAL_ARGUMENT):
            self.refuse(f"{what} of more than {MAX_FACTORIAL_ARGUMENT:,}")
            return Bound(_INFINITE)
        return Bound(_factorial_upper(argument.upper), letters=argument.letters)

    def argument(self) -> Bound:
        """A braced group, a bracketed group, or one atom (``^2``, ``^{n+1}``, ``_\\text{max}``)."""
        token = self.peek()
        if token in _OPEN:
            return self.group()
        return self.postfix(self.atom()) if token is not None else _ONE

    def group(self) -> Bound:
        opener = self.take()
        closer = _OPEN[opener]  # type: ignore[index]
        bound = self.expression(closer)
        if self.peek() in _CLOSE:
            self.take()
        return bound

    def atom(self) -> Bound:
        token = self.peek()
        if token is None:
            return _ONE
        if token in _OPEN:
            return self.group()
        self.take()
        if token[0].isdigit() or (token[0] == "." and len(token) > 1):
            return _literal(token)
        if token in _FRACTIONS:
            numerator = self.argument()
            return _quotient(numerator, self.argument())
        if token in _BINOMIALS:
            return self.binomial(self.argument(), self.argument())
        if token == "\\choose":
            return self.binomial(_ONE, self.argument())
        if token == "\\Gamma" and self.peek() in _OPEN:
            return self.factorial(self.group(), "a Gamma function")
        if token == "\\exp":
            exponent = self.argument()
            return Bound(_power_upper(Bound(_LOG_E), exponent))
        if token in _BOUNDED_FUNCTIONS or token in _LOGARITHMS:
            inner = self.argument() if self.peek() in _OPEN else self.power()
            return _ONE if token in _BOUNDED_FUNCTIONS else Bound(inner.upper, exact_below=False, letters=inner.letters)
        if token == "\\operatorname":
            self.argument()  # its name: floor, sgn, ... at most the size of the argument
            inner = self.argument() if self.peek() in _OPEN else self.power()
            return Bound(inner.upper, exact_below=False, letters=inner.letters)
        if token in ("\\text", "\\mathrm", "\\mathbf", "\\mathit", "\\mathcal", "\\textbf"):
            if self.peek() in _OPEN:
                self.group()
            return _LETTER
        if token == "\\pi":
            return Bound(_LOG_PI)
        if token == "e":
            return Bound(_LOG_E)
        if token.isalpha() or token.startswith("\\"):
            return _LETTER  # a variable or a symbol: its value is chosen at evaluation
        return _ONE

    def binomial(self, top: Bound, bottom: Bound) -> Bound:
        if max(top.upper, bottom.upper) > math.log10(MAX_BINOMIAL_ARGUMENT):
            self.refuse(f"a binomial coefficient with an argument above {MAX_BINOMIAL_ARGUMENT:,}")
            return Bound(_INFINITE)
        return Bound(10**top.upper * math.log10(2))


def size_refusal(latex: str) -> str | None:
    """Why evaluating ``latex`` could produce a number too large to compute (a short phrase), or None.

    Factorials and ``\\Gamma`` of arguments above 1,000, binomial coefficients with an argument above
    10,000, exponents above 10,000 and values of more than 100,000 digits are refused, whatever the
    arguments are written as (``\\binom{10^9}{5 \\cdot 10^8}``, ``\\Gamma(10^{10})``, ``(x - x + 10^{10})!``).
    """
    bounder = _Bounder(latex)
    while bounder.peek() is not None:
        bounder.expression()
        if bounder.peek() is not None:
            bounder.take()  # an unmatched closer
    return bounder.refusal


def log10_bound(latex: str) -> float:
    """An upper bound on ``log10 |value|`` of ``latex`` (``inf`` when it cannot be bounded)."""
    bounder = _Bounder(latex)
    bounds = []
    while bounder.peek() is not None:
        bounds.append(bounder.expression())
        if bounder.peek() is not None:
            bounder.take()
    return _add(bounds).upper if bounds else 0.0
