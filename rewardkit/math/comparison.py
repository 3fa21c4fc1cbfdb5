"""Stage 3b, comparison: decide whether an answer's value tree equals the gold's.

The gold decides the structure (a bare list is a set of solutions, a bracketed pair is ordered,
an equation is compared as an equation). Numbers compare as exact rationals; only expressions
reach the symbolic backend, which is absent on the fast path (``NeedsSymbolic`` is raised and the
caller re-runs the comparison where sympy may run: a sandbox worker, or in-process).
Every rule's behaviour is documented by the examples in ``rule_examples.RULE_EXAMPLES`` that the tests run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, Protocol

from rewardkit.math.guards import CODE_REFUSAL, symbolic_guard
from rewardkit.math.relations import System, system
from rewardkit.math.representation import (
    APPROX,
    SUBSCRIPTED_NAME,
    Assignment,
    Expression,
    Infinity,
    Matrix,
    Number,
    NumberForm,
    Power,
    Relation,
    Sequence,
    SetOperation,
    Text,
    Union,
    Value,
    parse_value,
    stated_value,
)
from rewardkit.math.sets import canonical_set
from rewardkit.math.verdict import quoted

Policy = Literal["lenient", "strict"]
POLICIES: tuple[str, ...] = ("lenient", "strict")


@dataclass(frozen=True)
class Settings:
    """The knobs of one comparison: the policy and the relative tolerance for inexact numbers."""

    policy: Policy = "lenient"
    tolerance: float = 1e-6

    @property
    def strict(self) -> bool:
        return self.policy == "strict"


@dataclass(frozen=True)
class Outcome:
    """What a rule decided: equal or not, the rule's name, and an error message for our-side failures."""

    correct: bool
    reason: str
    error: str | None = None
    #: Why ``strict`` refused what ``lenient`` accepts (``STRICT_RULES``), for the verdict's detail.
    strict_rule: str | None = None


#: The strict-only rejections, reported as ``detail["strict_rule"]`` next to the rule's ``reason``.
STRICT_RULES: dict[str, str] = {
    "not_reduced": "a fraction must be in lowest terms",
    "not_an_integer": "an integer gold needs an answer written as an integer",
    "decimal_for_irrational": "a decimal is never equal to an irrational gold (no tolerance)",
    "brackets": "a tuple, interval or set must be written with the gold's brackets",
    "tuple_for_vector": "a matrix or vector gold needs a matrix answer",
}


class NeedsSymbolic(Exception):
    """The fast path reached a comparison only sympy can decide."""


class BadGold(Exception):
    """The gold could not be parsed by the symbolic parser: a harness problem, not the model's."""


class SymbolicBackend(Protocol):
    """Decides expression and relation equality with sympy (see ``rewardkit.math.symbolic``)."""

    def compare_expressions(
        self, answer: str, gold: str, answer_inexact: bool, gold_inexact: bool, settings: Settings
    ) -> Outcome: ...

    def compare_relations(self, answer: Relation, gold: Relation, settings: Settings) -> Outcome: ...

    def compare_matrix_expression(self, answer: str, gold: Matrix, settings: Settings) -> Outcome: ...

    def compare_systems(self, answer: System, gold: System, settings: Settings) -> Outcome | None: ...


_CHOICE_LETTER = re.compile(r"^[A-H]$")
_INEXACT = re.compile(r"\d\.\d|\d[eE]-?\d")


def number_latex(number: Number) -> str:
    """Exact LaTeX for a number (``-\\frac{3}{2}``), so sympy sees the exact rational."""
    value = number.value
    if value.denominator == 1:
        return str(value.numerator)
    sign = "-" if value < 0 else ""
    return f"{sign}\\frac{{{abs(value.numerator)}}}{{{value.denominator}}}"


def _leaf_latex(value: Value) -> tuple[str, bool] | None:
    """(LaTeX, written inexactly?) for a scalar that the symbolic stage can read, else None."""
    if isinstance(value, Number):
        return number_latex(value), value.form in (NumberForm.DECIMAL, NumberForm.SCIENTIFIC)
    if isinstance(value, Expression):
        return value.latex, bool(_INEXACT.search(value.latex))
    return None


def _structure_reason(value: Value) -> str:
    if isinstance(value, Sequence):
        return "interval" if value.is_interval else ("set" if value.is_unordered else "tuple")
    if isinstance(value, Union):
        return "interval"
    if isinstance(value, SetOperation):
        return "set"
    if isinstance(value, Matrix):
        return "matrix"
    if isinstance(value, Relation):
        return "equation"
    return "text"


def compare_numbers(answer: Number, gold: Number, settings: Settings) -> Outcome:
    """Exact rational equality; strict also wants the written form PRM800K wants."""
    if settings.strict:
        if answer.value != gold.value:
            return Outcome(False, "rational")
        if gold.form is NumberForm.INTEGER and answer.form is not NumberForm.INTEGER:
            return Outcome(False, "rational", strict_rule="not_an_integer")
        if answer.form in (NumberForm.FRACTION, NumberForm.MIXED) and not answer.reduced:
            return Outcome(False, "rational", strict_rule="not_reduced")
        return Outcome(True, "rational")
    if answer.value == gold.value or _same_double(answer, gold) or _same_double(gold, answer, PRINTED_FLOAT_DIGITS):
        return Outcome(True, "rational")
    if answer.percent != gold.percent:
        # "50%" may stand for 0.5, but only where a percent sign says so.
        scaled_answer = answer.value / 100 if answer.percent else answer.value
        scaled_gold = gold.value / 100 if gold.percent else gold.value
        return Outcome(scaled_answer == scaled_gold, "rational")
    return Outcome(False, "rational")


#: A decimal answer with this many significant digits or more is a float printed at full precision.
FULL_PRECISION_DIGITS = 15
#: A decimal gold with this many significant digits or more was printed by a program (a float).
PRINTED_FLOAT_DIGITS = 12
#: How far a printed float may be from the value it stands for: float noise, in units of a double's epsilon.
_DOUBLE_NOISE = 4 * Fraction(1, 2**52)


def _significant_digits(number: Number) -> tuple[int, Fraction] | None:
    """(significant digits written, the value of one unit in the last one) of a decimal, else None."""
    if number.form not in (NumberForm.DECIMAL, NumberForm.SCIENTIFIC) or number.percent or not number.value:
        return None
    if number.form is NumberForm.DECIMAL and not number.decimals:
        return None
    unit = Fraction(10) ** -number.decimals
    return len(str(int(abs(number.value) / unit))), unit


def _same_double(decimal: Number, other: Number, digits: int = FULL_PRECISION_DIGITS) -> bool:
    """A float printed with at least ``digits`` significant digits is the number it approximates.

    It may differ from it by less than one unit of its last printed digit, or by float noise (a few
    units of double precision: ``0.30000000000000004`` is 0.3): ``0.0833333333333333`` is
    ``\\frac{1}{12}``, ``1.851851851852 \\times 10^{-3}`` (a gold) is ``\\frac{1}{540}``. Shorter roundings
    (``0.3333``) are not the rational. An answer's float must have 15 digits and stand for a number
    written exactly; a gold's 12 (``PRINTED_FLOAT_DIGITS``), against any shorter answer.
    """
    written = _significant_digits(decimal)
    if written is None or written[0] < digits or other.percent:
        return False
    if digits == FULL_PRECISION_DIGITS and other.form is NumberForm.DECIMAL:
        return False
    other_digits = _significant_digits(other)
    if other_digits is not None and other_digits[0] >= written[0]:
        return False  # two floats printed as precisely: their digits must agree
    difference = abs(decimal.value - other.value)
    return difference < written[1] or difference <= _DOUBLE_NOISE * abs(other.value)


def compare_powers(answer: Value, gold: Value) -> Outcome:
    """Exact powers too large to expand compare by base and exponent (``2^{2^{2^{2^2}}}`` == ``2^{65536}``).

    Both are kept with the smallest base, so equal values have equal fields; a ``Number`` (at most a
    few thousand digits) never equals such a power, and nothing else is compared with one.
    """
    if isinstance(answer, Power) and isinstance(gold, Power):
        return Outcome(answer == gold, "rational")
    other = gold if isinstance(answer, Power) else answer
    if isinstance(other, (Number, Infinity, Text)):
        return Outcome(False, "rational")
    return Outcome(False, "guard")  # never sent to sympy: it would expand the power


def _choice_letter(value: Value) -> str | None:
    """The choice a value names: a choice letter (``C``, from ``(C)`` or ``\\text{(c)}``) or a lone ``a``-``h``."""
    if isinstance(value, Text) and _CHOICE_LETTER.match(value.text):
        return value.text
    if isinstance(value, Expression) and len(value.latex) == 1 and value.latex in "abcdefgh":
        return value.latex.upper()
    return None


def _compare_scalars(answer: Value, gold: Value, settings: Settings, backend: SymbolicBackend | None) -> Outcome:
    if isinstance(gold, Text) != isinstance(answer, Text) and None is not _choice_letter(answer) == _choice_letter(gold):
        return Outcome(True, "choice")  # "\\text{(c)}" against "c": a choice is named by its letter, whatever its case
    if isinstance(gold, Text) or isinstance(answer, Text):
        both = isinstance(gold, Text) and isinstance(answer, Text)
        equal = both and gold.text == answer.text  # type: ignore[union-attr]
        reason = "choice" if isinstance(gold, Text) and _CHOICE_LETTER.match(gold.text) else "text"
        return Outcome(equal, reason)
    if isinstance(gold, Power) or isinstance(answer, Power):
        return compare_powers(answer, gold)
    if isinstance(gold, Infinity) or isinstance(answer, Infinity):
        equal = isinstance(gold, Infinity) and isinstance(answer, Infinity) and gold.sign == answer.sign
        return Outcome(equal, "numeric")
    if isinstance(answer, Number) and isinstance(gold, Number):
        return compare_numbers(answer, gold, settings)
    if settings.strict and isinstance(gold, Number) and gold.form is NumberForm.INTEGER:
        return Outcome(False, "rational", strict_rule="not_an_integer")  # PRM800K
    answer_leaf, gold_leaf = _leaf_latex(answer), _leaf_latex(gold)
    if answer_leaf is None or gold_leaf is None:
        return Outcome(False, _structure_reason(answer))
    refused = _guard((gold_leaf[0],), (answer_leaf[0],))
    if refused is not None:
        return refused
    if backend is None:
        raise NeedsSymbolic
    return backend.compare_expressions(answer_leaf[0], gold_leaf[0], answer_leaf[1], gold_leaf[1], settings)


def _guard(gold_parts: tuple[str, ...], answer_parts: tuple[str, ...]) -> Outcome | None:
    """The guard's verdict before symbolic work. A gold the guard refuses (code, an evaluation bomb
    such as ``\\binom{10^9}{5 \\cdot 10^8}``) is our problem, a bad gold: no answer can be checked against it."""
    for latex in gold_parts:
        refusal = symbolic_guard(latex)
        if refusal is None:
            continue
        part = "" if len(gold_parts) == 1 else f" (in {quoted(latex)})"
        if refusal == CODE_REFUSAL:
            return Outcome(False, "bad_gold", f"is {refusal}{part}")
        return Outcome(False, "bad_gold", f"cannot be checked: {refusal}{part}, refused before symbolic work")
    if any(symbolic_guard(latex) is not None for latex in answer_parts):
        return Outcome(False, "guard")
    return None


def _match_unordered(
    answers: tuple[Value, ...], golds: tuple[Value, ...], settings: Settings, backend: SymbolicBackend | None
) -> bool:
    if len(answers) != len(golds):
        return False
    unused = list(answers)
    for gold in golds:
        for index, answer in enumerate(unused):
            if compare_values(answer, gold, settings, backend).correct:
                del unused[index]
                break
        else:
            return False
    return True


def _match_ordered(
    answers: tuple[Value, ...], golds: tuple[Value, ...], settings: Settings, backend: SymbolicBackend | None
) -> bool:
    return len(answers) == len(golds) and all(
        compare_values(answer, gold, settings, backend).correct for answer, gold in zip(answers, golds)
    )


def _distinct(items: tuple[Value, ...]) -> tuple[Value, ...]:
    """The items without repeats (equal value trees), in their order."""
    return tuple(dict.fromkeys(items))


def _is_record(gold: Sequence) -> bool:
    """``p=5, q=2``: a bare list of assignments to different variables names its parts in order."""
    if gold.alternatives:
        return False  # "u=0 or v=0" names alternatives, not the parts of a point
    variables = [item.variable for item in gold.items if isinstance(item, Assignment)]
    return len(variables) == len(gold.items) > 1 and len(set(variables)) == len(variables)


def _names_several(sequence: Sequence) -> bool:
    """A list of assignments to at least two different variables (a point, or alternatives when joined by "or")."""
    names = {item.variable for item in sequence.items if isinstance(item, Assignment)}
    return len(names) > 1 and all(isinstance(item, Assignment) for item in sequence.items)


def compare_sets(answer: Value, gold: Sequence, settings: Settings, backend: SymbolicBackend | None) -> Outcome:
    """A bare list or ``\\{...\\}`` gold: the same solutions in any order, none missing, none extra.

    Lenient ignores an answer's repeats when the gold has none (a solution listed twice is one
    solution). A gold naming its parts (``p=5, q=2``) against unnamed values (``(5, 2)``) is a record:
    the values in the gold's order.
    """
    several = isinstance(answer, Sequence) and _names_several(answer) and _names_several(gold)
    if several and answer.alternatives != gold.alternatives:  # type: ignore[union-attr]
        return Outcome(False, "set")  # "x=1 or y=2" is not the point "x=1, y=2"
    if isinstance(answer, Sequence) and (answer.is_unordered or not settings.strict):
        items = answer.items
    elif isinstance(answer, Sequence):
        return Outcome(False, "set", strict_rule="brackets")
    else:
        items = (answer,)
    if not settings.strict and len(items) > len(gold.items) and _distinct(gold.items) == gold.items:
        items = _distinct(items)
    if _is_record(gold) and not any(isinstance(item, Assignment) for item in items):
        return Outcome(_match_ordered(items, gold.items, settings, backend), "set")
    return Outcome(_match_unordered(items, gold.items, settings, backend), "set")


def compare_ordered(answer: Value, gold: Sequence, settings: Settings, backend: SymbolicBackend | None) -> Outcome:
    """A bracketed gold (tuple, point, interval): same brackets, same items, same order."""
    reason = "interval" if gold.is_interval else "tuple"
    if isinstance(answer, Sequence):
        same_brackets = (answer.opener, answer.closer) == (gold.opener, gold.closer)
        bare_for_tuple = (
            not settings.strict and answer.opener == "" and (gold.opener, gold.closer) == ("(", ")")
        )
        if not (same_brackets or bare_for_tuple):
            strict_only = settings.strict and answer.opener == "" and (gold.opener, gold.closer) == ("(", ")")
            return Outcome(False, reason, strict_rule="brackets" if strict_only else None)
        return Outcome(_match_ordered(answer.items, gold.items, settings, backend), reason)
    if isinstance(answer, Matrix) and not settings.strict and not gold.is_interval:
        cells = _vector_cells(answer)
        if cells is not None:
            return Outcome(_match_ordered(cells, gold.items, settings, backend), reason)
    return Outcome(False, reason)


def compare_unions(answer: Value, gold: Union, settings: Settings, backend: SymbolicBackend | None) -> Outcome:
    """A union of intervals or sets: the same parts in any order."""
    parts = answer.parts if isinstance(answer, Union) else (answer,)
    return Outcome(_match_unordered(parts, gold.parts, settings, backend), "interval")


def _vector_cells(matrix: Matrix) -> tuple[Value, ...] | None:
    if len(matrix.rows) == 1:
        return matrix.rows[0]
    if all(len(row) == 1 for row in matrix.rows):
        return tuple(row[0] for row in matrix.rows)
    return None


def compare_matrices(answer: Value, gold: Matrix, settings: Settings, backend: SymbolicBackend | None) -> Outcome:
    """Same shape, equal entries; lenient also takes a tuple for a vector."""
    if isinstance(answer, Matrix):
        shape_ok = [len(row) for row in answer.rows] == [len(row) for row in gold.rows]
        equal = shape_ok and all(
            _match_ordered(a_row, g_row, settings, backend) for a_row, g_row in zip(answer.rows, gold.rows)
        )
        return Outcome(equal, "matrix")
    if isinstance(answer, Expression) and "\\begin{" in answer.latex and not settings.strict:
        # "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}+\\begin{pmatrix}...\\end{pmatrix}": a matrix expression, evaluated.
        if symbolic_guard(answer.latex) is not None:
            return Outcome(False, "guard")
        if backend is None:
            raise NeedsSymbolic
        return backend.compare_matrix_expression(answer.latex, gold, settings)
    cells = _vector_cells(gold)
    if isinstance(answer, Sequence) and answer.opener in ("(", "[") and cells and not settings.strict:
        return Outcome(_match_ordered(answer.items, cells, settings, backend), "matrix")
    if isinstance(answer, Sequence) and answer.opener in ("(", "[") and cells and settings.strict:
        return Outcome(False, "matrix", strict_rule="tuple_for_vector")
    return Outcome(False, "matrix")


def compare_relations(answer: Value, gold: Relation, settings: Settings, backend: SymbolicBackend | None) -> Outcome:
    """Equations and inequalities compare as relations (both sides), never by a right-hand side."""
    if isinstance(answer, Assignment):
        answer = Relation((answer.variable, answer.value_latex), ("=",))
    if not isinstance(answer, Relation):
        return Outcome(False, "equation")
    if len(answer.operators) != len(gold.operators):
        return Outcome(False, "equation")
    refused = _guard(gold.sides, answer.sides)
    if refused is not None:
        return refused
    if backend is None:
        raise NeedsSymbolic
    return backend.compare_relations(answer, gold, settings)


# A variable, or a function of one (``0 < f(x) < 1`` is the range (0, 1)).
_VARIABLE = re.compile(r"^(?:[A-Za-z](?:_\{?\w+\}?)?|[A-Za-z]\([A-Za-z]\))$")
_LOWER_BOUND_OPERATORS = {"<": "(", "\\leq": "["}
_UPPER_BOUND_OPERATORS = {"<": ")", "\\leq": "]"}
_REVERSED = {">": "<", "\\geq": "\\leq"}


def relation_as_interval(relation: Relation) -> Sequence | None:
    """``x > 2`` -> ``(2, \\infty)``, ``-1 \\leq x \\leq 1`` -> ``[-1, 1]``; None for other relations."""
    sides, operators = list(relation.sides), list(relation.operators)
    if all(op in _REVERSED for op in operators):
        sides, operators = sides[::-1], [_REVERSED[op] for op in operators[::-1]]
    if not all(op in _LOWER_BOUND_OPERATORS for op in operators):
        return None
    if len(sides) == 3 and _VARIABLE.match(sides[1]):
        low, high = parse_value(sides[0]), parse_value(sides[2])
        return Sequence((low, high), _LOWER_BOUND_OPERATORS[operators[0]], _UPPER_BOUND_OPERATORS[operators[1]], True)
    if len(sides) == 2 and _VARIABLE.match(sides[0]):  # x < b
        return Sequence((Infinity(-1), parse_value(sides[1])), "(", _UPPER_BOUND_OPERATORS[operators[0]], True)
    if len(sides) == 2 and _VARIABLE.match(sides[1]):  # a < x
        return Sequence((parse_value(sides[0]), Infinity(1)), _LOWER_BOUND_OPERATORS[operators[0]], ")", True)
    return None


def relations_as_union(sequence: Sequence) -> Union | None:
    """``x < 3, x > 4`` (a bare list of inequalities, "or") -> ``(-\\infty, 3) \\cup (4, \\infty)``."""
    if sequence.opener or len(sequence.items) < 2 or not all(isinstance(item, Relation) for item in sequence.items):
        return None
    intervals = [relation_as_interval(item) for item in sequence.items]  # type: ignore[arg-type]
    if any(interval is None for interval in intervals):
        return None
    return Union(tuple(intervals))  # type: ignore[arg-type]


def _are_formulas(*values: Value) -> bool:
    """Scalars of which at least one is an expression (that may involve variables)."""
    return all(isinstance(value, (Number, Expression)) for value in values) and any(
        isinstance(value, Expression) for value in values
    )


def _label_as_relation(value: Value) -> Value:
    """Strict (PRM800K) reads ``(p,q) = (3,2)`` as an equation: only a variable's value is its value."""
    if isinstance(value, Assignment) and value.label:
        return Relation((value.variable, value.value_latex), ("=",))
    return value


def _is_chain(value: Value) -> bool:
    return isinstance(value, Relation) and (len(value.operators) > 1 or APPROX in value.operators)


def _states_a_value(relation: Relation, gold: Value) -> bool:
    """Whether an answer relation stands for the value on its right against ``gold``."""
    if isinstance(gold, Relation):
        return False
    if _is_chain(relation):
        return True
    # "x+y = 5" answers 5; "5 \\approx 3" is a (false) numeric statement, not the value 3.
    return isinstance(gold, (Number, Power, Expression)) and not isinstance(
        parse_value(relation.sides[0]), (Number, Power, Infinity)
    )


def _stated_values(answer: Value, gold: Value) -> tuple[Value, Value]:
    """Lenient: a chain states its last side (``x = 5+5+1 = 7 = 11`` is ``x = 11``, ``x = \\frac13 \\approx
    0.33`` is ``x = \\frac13``), and so does an equation answered for a value (``x+y = 5`` is 5).

    A chain against a chain compares every side: the gold's working is then part of its answer. An
    exact value and its rounding (``\\frac{22}{7} \\approx 3.14``) state the exact value, or the rounding
    against a decimal gold.
    """
    if isinstance(answer, Relation) and answer.operators == (APPROX,) and not isinstance(gold, Relation):
        decimal_gold = isinstance(gold, Number) and gold.form is NumberForm.DECIMAL
        return parse_value(answer.sides[1] if decimal_gold else answer.sides[0]), gold
    if _is_chain(gold) and not _is_chain(answer):
        gold = stated_value(gold) or gold  # type: ignore[arg-type]
    if isinstance(answer, Relation) and _states_a_value(answer, gold):
        answer = stated_value(answer) or answer
    return answer, gold


_FUNCTION_LABEL = re.compile(r"^([A-Za-z]|\\[A-Za-z]+)\(([A-Za-z](?:,[A-Za-z])*)\)$")


def _letter(name: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\\A-Za-z])" + re.escape(name) + r"(?![A-Za-z])")


_ANY_LETTER = re.compile(r"(?<![\\A-Za-z])[A-Za-z](?![A-Za-z])")


def _renamed_argument(answer: Assignment, gold: Assignment) -> Assignment | None:
    """``W(x) = 2x`` read with the gold's argument names (``W(n) = 2n``; ``\\Phi(a,b) = a+2b`` as
    ``\\Phi(x,y) = x+2y``): the arguments are dummies, renamed all at once."""
    answer_name, gold_name = _FUNCTION_LABEL.match(answer.variable), _FUNCTION_LABEL.match(gold.variable)
    if answer_name is None or gold_name is None or answer_name[1] != gold_name[1]:
        return None
    answer_arguments, gold_arguments = answer_name[2].split(","), gold_name[2].split(",")
    if len(answer_arguments) != len(gold_arguments) or len(set(answer_arguments)) != len(answer_arguments):
        return None
    if any(_letter(name).search(answer.value_latex) for name in set(gold_arguments) - set(answer_arguments)):
        return None  # the answer uses a gold's argument name for something else
    names = dict(zip(answer_arguments, gold_arguments))
    renamed = _ANY_LETTER.sub(lambda m: names.get(m.group(), m.group()), answer.value_latex)
    return Assignment(gold.variable, parse_value(renamed), renamed, answer.label)


def _is_set_expression(answer: Value, gold: Value) -> bool:
    return any(isinstance(value, (Union, SetOperation)) for value in (answer, gold))


def compare_set_operations(answer: Value, gold: Value, settings: Settings, backend: SymbolicBackend | None) -> Outcome:
    """Set expressions that could not be evaluated (symbolic endpoints): the same operands and operators."""
    if not (isinstance(answer, SetOperation) and isinstance(gold, SetOperation)) or answer.operators != gold.operators:
        return Outcome(False, "set")
    return Outcome(_match_ordered(answer.operands, gold.operands, settings, backend), "set")


_FUNCTION_NAME = re.compile(r"^(?:[A-Za-z]|\\[A-Za-z]+)'*\(([A-Za-z](?:,[A-Za-z])*)\)$")
_SUBSCRIPTED = re.compile(r"^(" + SUBSCRIPTED_NAME + r"|[A-Za-z]_\{?\w+\}?)$")


def _letters(latex: str) -> set[str]:
    return set(re.findall(r"(?<![\\A-Za-z])[A-Za-z](?![A-Za-z])", latex))


def _names_the_answer(answer: Assignment, gold: Assignment) -> bool:
    """Whether the gold's left-hand side only names the quantity the answer gives (lenient).

    ``g(t) = 3t - 1`` against ``y = 3t - 1`` (a function of the answer's variables, against a
    dependent variable's name), ``E_{k} = \\frac12 mv^2`` against ``E = \\frac12 mv^2`` (a subscripted
    name, against its base letter). ``y = 5`` against ``x = 5`` stays different: two variables.
    """
    function = _FUNCTION_NAME.match(gold.variable)
    if function is not None:
        arguments = set(function.group(1).split(","))
        dependent = re.fullmatch(r"[A-Za-z]", answer.variable) is not None
        return dependent and answer.variable not in arguments | _letters(answer.value_latex) | _letters(gold.value_latex)
    subscripted = _SUBSCRIPTED.match(gold.variable)
    return subscripted is not None and answer.variable == re.split(r"_", gold.variable, maxsplit=1)[0]


#: The reasons of a rejection that comparing two systems of relations by their solutions may revise.
_RELATION_REASONS = ("equation", "set", "interval", "hedge", "bad_gold")


def _is_membership(value: Value) -> bool:
    """``x \\in [1, 2)``: a variable in an interval or a union of intervals."""
    return isinstance(value, Assignment) and isinstance(value.value, (Sequence, Union)) and not value.label


def compare_systems(
    answer: Value, gold: Value, outcome: Outcome, settings: Settings, backend: SymbolicBackend | None
) -> Outcome:
    """Lenient: relations that the structural rules rejected compared by their solutions
    (``x^2=9`` and ``x=\\pm 3``; ``y \\geq \\sqrt3`` and ``y \\in [\\sqrt3, \\infty)``), when both are relations."""
    if settings.strict or outcome.correct or outcome.reason not in _RELATION_REASONS:
        return outcome
    if outcome.reason == "bad_gold" and not _is_membership(gold):
        return outcome
    answer_system, gold_system = system(answer), system(gold)
    if answer_system is None or gold_system is None:
        return outcome
    refused = _guard(
        tuple(side for relation in gold_system for side in relation.sides),
        tuple(side for relation in answer_system for side in relation.sides),
    )
    if refused is not None:
        return refused
    if backend is None:
        raise NeedsSymbolic
    revised = backend.compare_systems(answer_system, gold_system, settings)
    if revised is None or not (revised.correct or revised.reason == "undecided"):
        return outcome  # different solutions: the structural rule's rejection stands, with its reason
    return revised


def compare_values(answer: Value, gold: Value, settings: Settings, backend: SymbolicBackend | None) -> Outcome:
    """Dispatch on the gold's shape; raises ``NeedsSymbolic`` when sympy is needed and ``backend`` is None."""
    if not settings.strict and _is_membership(gold) and isinstance(answer, Relation):
        return compare_systems(answer, gold, Outcome(False, "equation"), settings, backend)
    outcome = _compare_shapes(answer, gold, settings, backend)
    return compare_systems(answer, gold, outcome, settings, backend)


def _compare_shapes(answer: Value, gold: Value, settings: Settings, backend: SymbolicBackend | None) -> Outcome:
    if settings.strict:
        answer, gold = _label_as_relation(answer), _label_as_relation(gold)
    else:
        answer, gold = _stated_values(answer, gold)
    if isinstance(answer, Assignment) and isinstance(gold, Assignment) and answer.variable != gold.variable:
        if not settings.strict and _names_the_answer(answer, gold):
            return compare_values(answer.value, gold.value, settings, backend)
        renamed = _renamed_argument(answer, gold)
        if renamed is not None:
            return compare_values(renamed, gold, settings, backend)
        if _are_formulas(answer.value, gold.value):
            # "y = x" is "x = y", and "y = 2x+1" the line "x = (y-1)/2": equations, not values.
            as_relation = Relation((answer.variable, answer.value_latex), ("=",))
            return compare_relations(as_relation, Relation((gold.variable, gold.value_latex), ("=",)), settings, backend)
        return Outcome(False, "equation")  # a=3 is not b=3 (in a list, names say which is which)
    if not settings.strict:
        # Lenient: an inequality in one variable and the interval it describes are the same answer.
        # "x < 3 or x > 4" (a list of inequalities) and the union it describes, too.
        gold_is_interval = isinstance(gold, Union) or (isinstance(gold, Sequence) and gold.is_interval)
        if gold_is_interval and isinstance(answer, Relation):
            answer = relation_as_interval(answer) or answer
        elif isinstance(gold, Union) and isinstance(answer, Sequence):
            answer = relations_as_union(answer) or answer
        elif isinstance(gold, Relation) and isinstance(answer, (Sequence, Union)):
            gold = relation_as_interval(gold) or gold
        elif isinstance(answer, Union) and isinstance(gold, Sequence):
            gold = relations_as_union(gold) or gold
    if not settings.strict and _is_set_expression(answer, gold):
        answer, gold = canonical_set(answer), canonical_set(gold)
        if isinstance(gold, SetOperation) or isinstance(answer, SetOperation):
            return compare_set_operations(answer, gold, settings, backend)
    if isinstance(gold, SetOperation):
        return compare_set_operations(answer, gold, settings, backend)
    if isinstance(gold, Assignment) and isinstance(answer, Relation):
        return compare_relations(answer, Relation((gold.variable, gold.value_latex), ("=",)), settings, backend)
    if isinstance(gold, Assignment):
        gold = gold.value
    if isinstance(answer, Assignment) and not isinstance(gold, Relation):
        answer = answer.value
    if isinstance(gold, Sequence) and gold.is_unordered:
        return compare_sets(answer, gold, settings, backend)
    if isinstance(gold, Union):
        return compare_unions(answer, gold, settings, backend)
    if isinstance(gold, Sequence):
        return compare_ordered(answer, gold, settings, backend)
    if isinstance(gold, Matrix):
        return compare_matrices(answer, gold, settings, backend)
    if isinstance(gold, Relation):
        return compare_relations(answer, gold, settings, backend)
    if isinstance(answer, Sequence) and answer.is_unordered and len(answer.items) > 1:
        if settings.strict or len(_distinct(answer.items)) > 1:
            return Outcome(False, "hedge")  # several candidates against one gold value
        answer = answer.items[0]  # the same value twice is one candidate
    if isinstance(answer, (Sequence, Union, Matrix, Relation)):
        return Outcome(False, _structure_reason(answer))
    return _compare_scalars(answer, gold, settings, backend)
