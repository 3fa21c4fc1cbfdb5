"""The symbolic backend: sympy equivalence of expressions and relations, run where a budget is enforced.

LaTeX becomes a sympy expression through ``latex2sympy2_extended`` (an ANTLR grammar that builds
expressions without evaluating Python; model text never reaches ``sympify``/``parse_expr``).
This module is imported inside the sandbox worker (or in-process with ``sandbox=False``);
nothing here converts a sympy number to a string.
"""

from __future__ import annotations

import re
import threading
from typing import Any

import sympy
from latex2sympy2_extended.latex2sympy2 import ConversionConfig, _Latex2Sympy, comma_number_regex
from latex2sympy2_extended.math_normalization import NormalizationConfig, normalize_latex

from rewardkit.math.caching import MB, bounded_cache, per_character
from rewardkit.math.comparison import (
    BadGold,
    Outcome,
    Settings,
    compare_values,
)
from rewardkit.math.identity import (
    EXACT_TOLERANCE,
    agree,
    agree_at_points,
    close,
    is_zero,
    numeric,
    proportional,
)
from rewardkit.math.magnitude import MAX_BINOMIAL_ARGUMENT, MAX_FACTORIAL_ARGUMENT
from rewardkit.math.relations import System
from rewardkit.math.representation import Expression, Matrix, Number, Relation, Value, parse_value
from rewardkit.math.solution_sets import compare_systems
from rewardkit.math.verdict import quoted

_NORMALIZATION = NormalizationConfig(
    basic_latex=True, units=False, malformed_operators=False, nits=False, boxed="none", equations=False
)
# Math keeps its case: N is not n, \\Delta is not \\delta (the parser lowercases symbols by default).
_CONVERSION = ConversionConfig(lowercase_symbols=False)
_E_NOTATION = re.compile(r"(\d+(?:\.\d+)?)[eE]([-+]?\d+)")
_DECIMAL = re.compile(r"(?<![\d.])(\d*)\.(\d+)(?![\d.])")


class UnparseableLatex(ValueError):
    """The LaTeX parser rejected the text (it must consume the whole input or fail).

    The message is a predicate about the text ("cannot be parsed: ...", "is undefined ..."), so
    that a caller can say once which text it was: ``f"gold {quoted(gold)} {error}"``.
    """


class TooExpensive(UnparseableLatex):
    """The parsed expression holds a factorial, Gamma or binomial of a number too large to compute.

    The guards refuse these from the text (``magnitude.py``); this is the backstop on the parsed
    tree, where sympy has already folded ``\\frac{10^{10}}{2}`` and the like into numbers."""


_INTEGER_TEXT = re.compile(r"-?\d+")
_FLOAT_TEXT = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def exact_number(text: str) -> Any:
    """A sympy number from a digit token, built from an ``int`` (or ``Float``'s own decimal reader).

    ``sympy.Number(str)`` would run ``sympify`` -> ``parse_expr`` (``eval``) on model text: never.
    Thousands commas go ("1,000"); "0,5" is the decimal 0.5, as latex2sympy2_extended reads it.
    """
    token = text.strip().replace(" ", "")
    if token.lstrip("-").startswith("0") and "," in token:
        token = token.replace(",", ".")
    token = token.replace(",", "")
    if _INTEGER_TEXT.fullmatch(token):
        return sympy.Integer(int(token))
    if _FLOAT_TEXT.fullmatch(token):
        return sympy.Float(token)  # mpmath's decimal reader: no Python parsing
    raise ValueError(f"not a number token: {token[:40]!r}")


class _ExactNumberConverter(_Latex2Sympy):
    """latex2sympy2_extended's converter, with numbers built by ``exact_number`` instead of
    ``sympy.Number(str)`` (its two number paths: digit tokens, and a whole input like "1,000")."""

    def parse_number(self, text: str) -> Any:
        return exact_number(text)

    def parse(self, latex_str: str) -> Any:
        if comma_number_regex.match(latex_str):
            return exact_number(latex_str)
        return super().parse(latex_str)


def _latex_to_sympy(latex: str) -> Any:
    converter = _ExactNumberConverter(config=_CONVERSION)
    return converter.parse(normalize_latex(latex, _NORMALIZATION))


# latex2sympy2_extended's syntax errors read "<what>\n<input>\n~~~~^", the caret under the culprit.
def _parser_complaint(error: Exception) -> str:
    lines = str(error).split("\n")
    if len(lines) >= 3 and lines[-1].endswith("^") and set(lines[-1][:-1]) <= {"~"}:
        column, source = len(lines[-1]) - 1, lines[-2]
        culprit = quoted(source[column]) if column < len(source) else "the end"
        return f"the LaTeX parser stops at character {column + 1} ({culprit})"
    return f"the LaTeX parser rejected it ({type(error).__name__})"


_COMMAND_SUBSCRIPT = re.compile(r"_\s*(?:\{([^{}]*\\[^{}]*)\}|(\\[A-Za-z]+))")
_FONT = re.compile(r"\\(?:rm|it|bf|mathrm|mathit|mathbf|text|textrm|textit|operatorname)(?![A-Za-z])")
_GLUED_SUBSCRIPT = re.compile(r"_([A-Za-z0-9])(?=\s*[A-Za-z\\}])")
_EULER_SUBSCRIPT = re.compile(r"(?<![\\A-Za-z])([Ee])_")


# The parser reads \\gamma as the Gamma function (\\gamma^{2} became complex infinity): in mathematics and
# physics it is a quantity (a Lorentz factor, an angle), a symbol of its own. \\Gamma stays the function.
_GAMMA = re.compile(r"\\gamma(?![A-Za-z])")
_GAMMA_SYMBOL = r"\\mathit{gammasymbol}"


def _plain_subscripts(latex: str) -> str:
    """``R_{\\odot}`` -> ``R_{odot}``, ``E_{\\gamma}`` -> ``E_{gamma}``: a subscript only names a symbol
    (physics writes ``R_{\\odot}``, ``v_{\\max}``, ``k_{\\mathrm{B}}``), which the LaTeX parser reads
    only when it holds no command."""

    def plain(match: re.Match[str]) -> str:
        content = match.group(1) if match.group(1) is not None else match.group(2)
        return "_{" + re.sub(r"[\\\s{}]", "", _FONT.sub("", content)) + "}"

    if "_" not in latex:
        return latex
    # "m_ec" (normalization dropped the braces of "m_{e} c"), "m_e}": the subscript is the one character.
    latex = _GLUED_SUBSCRIPT.sub(r"_{\1}", _COMMAND_SUBSCRIPT.sub(plain, latex))
    # The parser reads "E" and "e" as Euler's number and refuses a subscript on them: E_{k} is a name.
    return _EULER_SUBSCRIPT.sub(r"\\mathit{\1}_", latex)


def _exact_decimals(latex: str) -> str:
    """``2.5`` -> ``(\\frac{25}{10})``: decimals are exact rationals, never binary floats."""
    latex = _E_NOTATION.sub(lambda m: f"{m.group(1)}\\times10^{{{m.group(2)}}}", latex)
    return _DECIMAL.sub(lambda m: f"(\\frac{{{(m.group(1) or '0') + m.group(2)}}}{{1{'0' * len(m.group(2))}}})", latex)


def to_sympy(latex: str) -> Any:
    """Parse LaTeX into a sympy expression (cached: golds repeat), or raise ``UnparseableLatex``."""
    result = _parse_cached(latex)
    if isinstance(result, UnparseableLatex):
        raise result
    return result


@bounded_cache(64 * MB, max_key_length=1024, size=per_character(1500, 16384))  # sympy trees: <= ~1.3 KB/char measured
def _parse_cached(latex: str) -> Any:
    """The expression, or the ``UnparseableLatex`` error (failures are cached too: they are slow)."""
    try:
        expression = _latex_to_sympy(_exact_decimals(_GAMMA.sub(_GAMMA_SYMBOL, _plain_subscripts(latex))))
    except Exception as error:  # the ANTLR parser raises plain Exception on bad input
        return UnparseableLatex(f"cannot be parsed: {_parser_complaint(error)}")
    if not isinstance(expression, sympy.Basic) or isinstance(
        expression, (sympy.core.relational.Relational, sympy.logic.boolalg.BooleanFunction, sympy.logic.boolalg.BooleanAtom, sympy.Set)
    ):
        return UnparseableLatex("cannot be parsed: it is not a single expression (a relation or a set)")
    refusal = _combinatorial_refusal(expression)
    if refusal is not None:
        return TooExpensive(f"is refused before evaluation: {refusal}")
    expression = _real_odd_roots(expression)
    if expression.has(sympy.zoo, sympy.nan):
        # A division by zero, or a misread (the parser turns "\\gamma^2" into zoo**2): x*zoo - x*zoo
        # cancels to 0, so such an expression would equal anything of the same shape.
        return UnparseableLatex("is undefined (complex infinity: a division by zero, or a symbol read as a function)")
    return expression


_COMBINATORIAL = (
    sympy.factorial, sympy.factorial2, sympy.subfactorial, sympy.gamma, sympy.RisingFactorial, sympy.FallingFactorial,
)


def _combinatorial_refusal(expression: Any) -> str | None:
    """Why evaluating a factorial-like node of ``expression`` would not end (its numeric argument is too large)."""
    nodes = expression.atoms(*_COMBINATORIAL, sympy.binomial)
    for node in nodes:
        limit = MAX_BINOMIAL_ARGUMENT if isinstance(node, sympy.binomial) else MAX_FACTORIAL_ARGUMENT
        for argument in node.args:
            if argument.free_symbols:
                continue
            value = numeric(argument)
            if value is None or abs(value) > limit:
                return f"a {type(node).__name__} of a number above {limit:,}"
    return None


def _is_negative_odd_root(node: Any) -> bool:
    if not (isinstance(node, sympy.Pow) and node.exp.is_Rational and not node.exp.is_Integer and node.exp.q % 2 == 1):
        return False
    try:
        return bool(node.base.is_number and node.base.is_extended_negative)
    except (TypeError, ValueError, ArithmeticError, RecursionError):
        return False


def _real_odd_roots(expression: Any) -> Any:
    """``\\sqrt[3]{-8}`` is -2, as in school and contest mathematics, not sympy's principal complex root:
    an odd root of a negative number is the real one (``(-8)^{2/3}`` is 4)."""
    if not expression.has(sympy.Pow):
        return expression
    try:
        return expression.replace(
            _is_negative_odd_root, lambda node: (-1) ** node.exp.p * sympy.Pow(-node.base, node.exp)
        )
    except (TypeError, ValueError, ArithmeticError, RecursionError):
        return expression


# Typical answer shapes: parsing them once warms the ANTLR parser's caches (the first parse of each
# construct costs tens of milliseconds). The sandbox does this before forking its workers.
_WARM_UP_CORPUS = (
    "x+1", "\\frac{1}{2}x^2+\\sin x", "\\sqrt{2}+3\\sqrt{5}", "2\\pi", "\\frac{\\sqrt{3}}{2}",
    "e^{-x}\\cos(2t)", "\\log_2 8+\\ln 2", "(x-1)(x+2)^3", "|x|", "3+4i", "\\tan^{-1}x", "1:2", "a.b",
    "\\pi+<junk>", "a_1b^{2}", "\\sqrt[3]{5a}", "\\binom{5}{2}", "5!", "x\\cdot y\\times z", "\\infty",
)




def _in_an_exponent(expression: Any, symbol: Any) -> bool:
    """Whether ``symbol`` appears in the argument of an exponential (``e^{i\\theta}``)."""
    return any(symbol in power.exp.free_symbols for power in expression.atoms(sympy.exp))


def _complex_aware(answer: Any, gold: Any) -> tuple[Any, Any]:
    """Read ``i`` as the imaginary unit when it is the only free symbol on both sides, or when it
    stands in the exponent of ``e`` on either side (Euler's form: ``e^{i\\theta}`` is
    ``\\cos\\theta + i\\sin\\theta``, ``re^{ix}`` a complex number in polar form)."""
    symbols = answer.free_symbols | gold.free_symbols
    units = [symbol for symbol in symbols if symbol.name == "i"]
    if not units:
        return answer, gold
    euler = any(_in_an_exponent(side, units[0]) for side in (answer, gold))
    if len(units) == len(symbols) or euler:
        substitution = {symbol: sympy.I for symbol in units}
        return answer.subs(substitution), gold.subs(substitution)
    return answer, gold


def _evaluated(expression: Any) -> Any:
    try:
        return expression.doit()
    except (TypeError, ValueError, ArithmeticError, RecursionError, AttributeError, NotImplementedError):
        return expression


class SympyBackend:
    """Decides the comparisons the fast path cannot: expressions and relations.

    Expressions with variables are equal when their difference is structurally zero, or when they
    agree at seven sample points (``identity``: exactly for rational functions, else at 30 digits
    to 1e-20 relative, 1e-9 with a decimal), with simplify as the fallback only when no point can
    be evaluated. Constants are compared exactly when
    both are rational, with the policy's tolerance when a decimal meets an irrational value, and
    to 20 significant digits (30-digit evaluation) when both are exact.
    """

    def compare_expressions(
        self, answer: str, gold: str, answer_inexact: bool, gold_inexact: bool, settings: Settings
    ) -> Outcome:
        try:
            gold_expr = to_sympy(gold)
        except UnparseableLatex as error:
            raise BadGold(str(error)) from None
        try:
            answer_expr = to_sympy(answer)
        except TooExpensive:
            return Outcome(False, "guard")
        except UnparseableLatex:
            return Outcome(False, "symbolic")
        answer_expr, gold_expr = _complex_aware(answer_expr, gold_expr)
        if not answer_expr.free_symbols and not gold_expr.free_symbols:
            return self._compare_constants(answer_expr, gold_expr, answer_inexact, gold_inexact, settings)
        # Exact sides agree to evaluation precision; a decimal (an exact rational too) to 1e-9.
        tolerance = 1e-9 if answer_inexact or gold_inexact else EXACT_TOLERANCE
        agreement = agree_at_points(answer_expr, gold_expr, tolerance)
        if agreement is False:
            return Outcome(False, "symbolic")
        difference = answer_expr - gold_expr
        if difference == 0 or agreement is True:
            return Outcome(True, "symbolic")
        return Outcome(is_zero(difference), "symbolic")

    def _compare_constants(
        self, answer: Any, gold: Any, answer_inexact: bool, gold_inexact: bool, settings: Settings
    ) -> Outcome:
        answer, gold = _evaluated(answer), _evaluated(gold)
        if answer.is_Rational and gold.is_Rational:
            return Outcome(bool(answer == gold), "rational")
        if answer.is_infinite or gold.is_infinite:
            return Outcome(bool(answer == gold), "numeric")
        if answer_inexact or gold_inexact:
            answer_value, gold_value = numeric(answer), numeric(gold)
            if answer_value is None or gold_value is None:
                return Outcome(False, "numeric")
            # A decimal meets an irrational value: tolerance (lenient) or never (strict, as PRM800K).
            if settings.strict:
                return Outcome(False, "numeric", strict_rule="decimal_for_irrational")
            return Outcome(close(answer_value, gold_value, settings.tolerance), "numeric")
        # Exact constants: 20 significant digits at 30-digit evaluation, confirmed at 60 digits
        # when the values differ only by cancellation noise (e^{i\\pi/3} e^{-i\\pi/3} - 1 against 0).
        return Outcome(bool(agree(answer, gold, None, 1e-20)), "symbolic")

    def compare_matrix_expression(self, answer: str, gold: Matrix, settings: Settings) -> Outcome:
        """A matrix expression (a sum, a product, a multiple) evaluated, then compared entry by entry."""
        try:
            value = _evaluated(to_sympy(answer))
        except UnparseableLatex:
            return Outcome(False, "matrix")
        shape = (len(gold.rows), len(gold.rows[0]) if gold.rows else 0)
        if not isinstance(value, sympy.MatrixBase) or value.shape != shape or any(len(row) != shape[1] for row in gold.rows):
            return Outcome(False, "matrix")
        for row_index, row in enumerate(gold.rows):
            for column_index, cell in enumerate(row):
                try:
                    gold_cell = _gold_cell(cell)
                except UnparseableLatex as error:
                    raise BadGold(str(error)) from None
                if gold_cell is None or not _equal_entries(value[row_index, column_index], gold_cell):
                    return Outcome(False, "matrix")
        return Outcome(True, "matrix")

    def compare_systems(self, answer: System, gold: System, settings: Settings) -> Outcome | None:
        """Alternatives of relations by their solutions (``solution_sets``)."""
        return compare_systems(answer, gold, to_sympy)

    def compare_relations(self, answer: Relation, gold: Relation, settings: Settings) -> Outcome:
        for side in gold.sides:
            try:
                to_sympy(side)
            except UnparseableLatex as error:
                part = f" (in its side {quoted(side)})" if len(gold.sides) > 1 else ""
                raise BadGold(f"{error}{part}") from None
        gold_sides = [to_sympy(side) for side in gold.sides]
        try:
            answer_sides = [to_sympy(side) for side in answer.sides]
        except TooExpensive:
            return Outcome(False, "guard")
        except UnparseableLatex:
            return Outcome(False, "equation")
        answer_ops, gold_ops = list(answer.operators), list(gold.operators)
        if any(op in (">", "\\geq") for op in answer_ops):
            answer_sides, answer_ops = answer_sides[::-1], [_FLIP.get(op, op) for op in answer_ops[::-1]]
        if any(op in (">", "\\geq") for op in gold_ops):
            gold_sides, gold_ops = gold_sides[::-1], [_FLIP.get(op, op) for op in gold_ops[::-1]]
        if answer_ops != gold_ops:
            return Outcome(False, "equation")
        if len(gold_sides) == 2:
            symmetric = gold_ops[0] in ("=", "\\neq")
            if not any(side.free_symbols for side in (*answer_sides, *gold_sides)):
                # A numeric statement ("20\\cos 30^\\circ \\cdot 200 = 3464.1"): any two nonzero constant
                # differences are proportional, so compare the sides themselves (swapped for "=").
                straight = all(_same_constant(a, g) for a, g in zip(answer_sides, gold_sides))
                swapped = symmetric and all(_same_constant(a, g) for a, g in zip(answer_sides[::-1], gold_sides))
                return Outcome(straight or swapped, "equation")
            answer_difference, gold_difference = answer_sides[0] - answer_sides[1], gold_sides[0] - gold_sides[1]
            return Outcome(proportional(answer_difference, gold_difference, positive_only=not symmetric), "equation")
        equal = all(agree_at_points(a, g, 1e-9) or is_zero(a - g) for a, g in zip(answer_sides, gold_sides))
        return Outcome(equal, "equation")


def _gold_cell(cell: Value) -> Any | None:
    """A gold matrix cell as sympy: numbers from their exact fractions, expressions parsed."""
    if isinstance(cell, Number):
        return sympy.Rational(cell.value.numerator, cell.value.denominator)
    if isinstance(cell, Expression):
        return to_sympy(cell.latex)
    return None


def _equal_entries(answer: Any, gold: Any) -> bool:
    """Matrix entries: exact for rationals, 20 significant digits for constants, sample points else."""
    if answer.is_Rational and gold.is_Rational:
        return bool(answer == gold)
    if not answer.free_symbols and not gold.free_symbols:
        agreement = agree(answer, gold, None, 1e-20)
        if agreement is not None:
            return agreement
    return agree_at_points(answer, gold, 1e-9) is True or is_zero(answer - gold)


def _same_constant(answer: Any, gold: Any) -> bool:
    """Two constant expressions are equal to 1e-9 relative at 30 digits, or (when they cannot be
    evaluated) provably; evaluating first spares ``simplify`` on constants that plainly differ."""
    agreement = agree(answer, gold, None, 1e-9)
    return is_zero(answer - gold) if agreement is None else agreement


_FLIP = {">": "<", "\\geq": "\\leq", "<": ">", "\\leq": "\\geq"}


def symbolic_compare(answer: str, gold: str, policy: str, tolerance: float) -> Outcome:
    """Compare two normalized answers with sympy allowed: the sandbox worker's task."""
    settings = Settings(policy=policy, tolerance=tolerance)  # type: ignore[arg-type]
    try:
        return compare_values(parse_value(answer), parse_value(gold), settings, SympyBackend())
    except BadGold as error:
        return Outcome(False, "bad_gold", str(error))
    except RecursionError:
        return Outcome(False, "guard")
    except Exception as error:
        # sympy failing on what the model wrote is a wrong answer, not a harness error. Only the
        # exception's type is kept: its message could embed a huge number (printing it can hang).
        return Outcome(False, "symbolic", f"sympy raised {type(error).__name__}")


_WARM_UP_COMPARISONS = (
    ("\\sqrt{2}+3\\sqrt{5}", "9"),
    ("1.414", "\\sqrt{2}"),
    ("(x+1)^2", "x^2+2x+1"),
    ("\\sin^2 y+\\cos^2 y", "1"),
    ("2x+3y=6", "4x+6y=12"),
    ("x>1", "1<x"),
    ("3+4i", "4i+3"),
)


_WARM_LOCK = threading.Lock()
_warmed = False


def warm_symbolic() -> None:
    """Parse the warm-up corpus and run a few comparisons once per process: sympy and the ANTLR
    parser load parts of themselves on first use (tens of milliseconds each), which the sandbox
    pays in the parent, so that workers forked afterwards start warm. Later calls return at once."""
    global _warmed
    with _WARM_LOCK:
        if _warmed:
            return
        for latex in _WARM_UP_CORPUS:
            _parse_cached(latex)
        for answer, gold in _WARM_UP_COMPARISONS:
            symbolic_compare(answer, gold, "lenient", 1e-6)
            symbolic_compare(answer, gold, "strict", 1e-6)
        _warmed = True
