"""The grader's entry points: ``grade`` a response, ``compare_answers`` for an extracted answer.

Pipeline: extraction -> normalization -> representation -> comparison. The fast path (exact
strings, exact rationals, structure) runs in-process without sympy, on inputs of bounded size;
only comparisons that need symbolic work go to a sandbox worker, under the answer's CPU budget.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

from rewardkit.math.caching import MB, BoundedCache, bounded_cache, per_character, text_size
from rewardkit.math.comparison import POLICIES, NeedsSymbolic, Outcome, Settings, compare_values
from rewardkit.math.extraction import AUTO_WINDOW, UnreadableGold, extract_answer, gold_answer
from rewardkit.math.hedging import is_hedged
from rewardkit.math.normalization import normalize
from rewardkit.math.representation import Value, parse_value
from rewardkit.math.sandbox import default_sandbox
from rewardkit.math.tasks import symbolic_task
from rewardkit.math.verdict import MathVerdict, quoted
from rewardkit.runtime.define.failures import FailureTag

if TYPE_CHECKING:
    from typing_extensions import Unpack

_EXTRACT_MODES = ("boxed", "auto")
#: Answers longer than this (and than twice the gold) are refused unread: no real answer is.
MAX_ANSWER_LENGTH = 50_000
#: A response of any length is graded: its final boxes are found by scanning from its end, and
#: ``extract="auto"``'s fallbacks read its last this many characters (about 250,000 tokens). The
#: size limits apply to what is parsed: the extracted answer and the gold.
MAX_RESPONSE_LENGTH = AUTO_WINDOW
#: Golds longer than this are a bad gold (``HARNESS_ERROR``): the longest of 4,218 real golds has 993.
MAX_GOLD_LENGTH = 100_000


class MathGraderError(ValueError):
    """A grader option is invalid (a programming error of the caller, not of the model)."""


@dataclass(frozen=True)
class _Gold:
    raw: str
    normalized: str
    value: Value | None
    error: str | None


def _prepared_gold(gold: str) -> _Gold:
    """The gold, normalized and parsed (cached), or why it cannot be graded against."""
    if len(gold) > MAX_GOLD_LENGTH:
        error = f"gold of {len(gold):,} characters is over the {MAX_GOLD_LENGTH:,}-character limit (MAX_GOLD_LENGTH)"
        return _Gold(gold, "", None, error)
    return _prepare_gold(gold)


@bounded_cache(64 * MB, max_key_length=MAX_GOLD_LENGTH, size=per_character(200, 4096))
def _prepare_gold(gold: str) -> _Gold:
    """Take the gold's answer, normalize and parse it once (an RL group grades many responses against it)."""
    try:
        unwrapped = gold_answer(gold)
    except UnreadableGold as error:
        return _Gold(gold, "", None, f"gold {quoted(gold)} {error}")
    if not unwrapped:
        return _Gold(gold, "", None, f"gold {quoted(gold)} is empty")
    normalized = normalize(unwrapped)
    if not normalized:
        return _Gold(gold, "", None, f"gold {quoted(gold)} is empty after normalization")
    return _Gold(gold, normalized, parse_value(normalized), None)


def _is_positive_number(value: object) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and value > 0


def _check_options(
    *, policy: str, timeout: float, tolerance: float, wall_ceiling: float | None, sandbox: bool, extract: str = "boxed"
) -> None:
    if policy not in POLICIES:
        raise MathGraderError(f"policy={policy!r} is not one of {POLICIES}")
    if extract not in _EXTRACT_MODES:
        raise MathGraderError(f"extract={extract!r} is not one of {_EXTRACT_MODES}")
    if not _is_positive_number(timeout) or timeout == float("inf"):
        raise MathGraderError(f"timeout={timeout!r} must be a positive number of CPU seconds")
    if wall_ceiling is not None and not _is_positive_number(wall_ceiling):
        raise MathGraderError(f"wall_ceiling={wall_ceiling!r} must be None or a positive number of seconds")
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not 0 <= tolerance < 1:
        raise MathGraderError(f"tolerance={tolerance!r} must be a relative tolerance in [0, 1)")


class _TooManyDigits(ValueError):
    """An int (or a Fraction's part) beyond Python's int-to-string limit (4,300 digits by default)."""


def _as_text(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, Fraction)) and not isinstance(value, bool):
        try:
            return str(value)
        except ValueError:  # Python refuses to print ints of more than sys.get_int_max_str_digits() digits
            digits = int(max(abs(value.numerator), 1).bit_length() * 0.30103) + 1
            kind = "an int" if isinstance(value, int) else "a Fraction"
            raise _TooManyDigits(f"{kind} of about {digits:,} digits, beyond Python's int-to-string limit") from None
    if isinstance(value, float):
        return repr(value)
    return None


def _verdict(outcome: Outcome, answer: str, gold: _Gold, normalized_answer: str) -> MathVerdict:
    detail = {"normalized_answer": normalized_answer, "normalized_gold": gold.normalized}
    if outcome.reason in _HARNESS_REASONS:
        error = outcome.error or "unknown error"
        if outcome.reason == "bad_gold":
            # Said once: the gold as the caller gave it, what is wrong, and its normalized form if different.
            error = f"gold {quoted(gold.raw)} {error}"
            if gold.normalized != gold.raw.strip():
                error += f" (normalized: {quoted(gold.normalized)})"
        detail["error"] = error
        return MathVerdict(False, FailureTag.HARNESS_ERROR, answer, gold.raw, outcome.reason, detail)
    if outcome.error:
        detail["error"] = outcome.error
    if outcome.strict_rule is not None:
        detail["strict_rule"] = outcome.strict_rule
    tag = None if outcome.correct else FailureTag.WRONG_ANSWER
    return MathVerdict(outcome.correct, tag, answer, gold.raw, outcome.reason, detail)


@dataclass(frozen=True)
class _Budget:
    """A call's symbolic budget: CPU seconds of the worker's own time, and the wall-clock ceiling."""

    cpu: float
    wall_ceiling: float | None
    sandbox: bool


def _compare(answer: str, gold_text: str, settings: Settings, budget: _Budget) -> MathVerdict:
    gold = _prepared_gold(gold_text)
    if gold.error is not None or gold.value is None:
        detail = {"normalized_answer": "", "normalized_gold": "", "error": gold.error or "bad gold"}
        return MathVerdict(False, FailureTag.HARNESS_ERROR, answer, gold_text, "bad_gold", detail)
    if len(answer) > MAX_ANSWER_LENGTH and len(answer) > 2 * len(gold.raw):
        detail = {"normalized_answer": "", "normalized_gold": gold.normalized}
        return MathVerdict(False, FailureTag.WRONG_ANSWER, answer, gold_text, "guard", detail)
    normalized_answer = normalize(answer)
    if not normalized_answer:
        detail = {"normalized_answer": "", "normalized_gold": gold.normalized}
        return MathVerdict(False, FailureTag.NO_ANSWER, answer, gold_text, "no_answer", detail)
    if normalized_answer == gold.normalized:
        return _verdict(Outcome(True, "exact"), answer, gold, normalized_answer)
    if is_hedged(answer, gold_text):
        return _verdict(Outcome(False, "hedge"), answer, gold, normalized_answer)
    try:
        outcome = compare_values(parse_value(normalized_answer), gold.value, settings, None)
    except NeedsSymbolic:
        outcome = _symbolic(normalized_answer, gold.normalized, settings, budget)
    except RecursionError:
        outcome = Outcome(False, "guard")
    return _verdict(outcome, answer, gold, normalized_answer)


# Our side's failures: a HARNESS_ERROR verdict, never a wrong answer (eval leaves them out of scores).
_HARNESS_REASONS = ("bad_gold", "crash", "overloaded")
# Symbolic outcomes by (answer, gold, policy, tolerance): identical responses in an RL group, or a
# bad gold, cost one worker round-trip only. Timeouts (which depend on the budget), crashes and
# overloads (which may pass later) are not cached. Bounded by bytes (keys are at most a few
# hundred characters: longer answers are refused before symbolic work).
_SYMBOLIC_CACHE: BoundedCache[Outcome] = BoundedCache(16 * MB, per_character(2, 1024))
_UNCACHED_REASONS = ("timeout", "crash", "overloaded")
# Golds the symbolic parser refused, by normalized gold: bad for every answer, so the other
# responses of the group get the verdict without a worker round-trip.
_BAD_GOLDS: BoundedCache[Outcome] = BoundedCache(4 * MB, text_size)


def _remember(key: tuple[str, str, str, float], outcome: Outcome) -> None:
    if outcome.reason in _UNCACHED_REASONS:
        return
    _SYMBOLIC_CACHE.put(key, outcome)
    if outcome.reason == "bad_gold":
        _BAD_GOLDS.put(key[1], outcome)


def _symbolic(answer: str, gold: str, settings: Settings, budget: _Budget) -> Outcome:
    key = (answer, gold, settings.policy, settings.tolerance)
    cached = _SYMBOLIC_CACHE.get(key) or _BAD_GOLDS.get(gold)
    if cached is not None:
        return cached
    if budget.sandbox:
        # symbolic_task imports sympy in the worker: this process never imports it.
        outcome = default_sandbox().run(symbolic_task, key, cpu_budget=budget.cpu, wall_ceiling=budget.wall_ceiling)
    else:
        from rewardkit.math.symbolic import symbolic_compare

        outcome = symbolic_compare(*key)
    _remember(key, outcome)
    return outcome


def _crash_verdict(error: BaseException, answer: str | None, gold: object) -> MathVerdict:
    detail = {"normalized_answer": "", "normalized_gold": "", "error": f"{type(error).__name__}: {error}"}
    try:
        expected = _as_text(gold)
    except _TooManyDigits as too_long:
        expected = str(too_long)
    return MathVerdict(False, FailureTag.HARNESS_ERROR, answer, expected, "crash", detail)


def compare_answers(
    answer: str,
    gold: str,
    *,
    policy: str = "lenient",
    timeout: float = 1.0,
    sandbox: bool = True,
    tolerance: float = 1e-6,
    wall_ceiling: float | None = None,
) -> MathVerdict:
    """Grade an already extracted ``answer`` against ``gold`` (golden pairs use this); never raises for text.

    ``timeout`` is the answer's budget: CPU seconds of symbolic work, counted in the worker, so
    the verdict does not depend on the machine's load. ``wall_ceiling`` bounds the wall time of
    each attempt at the symbolic work (default ``max(10 * timeout, 30)`` seconds); past it the
    verdict is ``overloaded`` (``HARNESS_ERROR``). ``sandbox=False`` runs symbolic work in this
    process, unbounded: the caller then owns the budget.
    """
    _check_options(policy=policy, timeout=timeout, tolerance=tolerance, wall_ceiling=wall_ceiling, sandbox=sandbox)
    if sandbox:
        # The first use starts the symbolic workers in the background (a no-op afterwards): the
        # fast path never waits for them; a symbolic comparison waits for them, uncharged.
        default_sandbox().start_in_background()
    budget = _Budget(float(timeout), wall_ceiling, sandbox)
    settings = Settings(policy, tolerance)  # type: ignore[arg-type]
    try:
        gold_text = _as_text(gold)
    except _TooManyDigits as error:
        detail = {"normalized_answer": "", "normalized_gold": "", "error": f"gold is {error}: pass it as a string"}
        return MathVerdict(False, FailureTag.HARNESS_ERROR, None, str(error), "bad_gold", detail)
    try:
        answer_text = _as_text(answer)
    except _TooManyDigits as error:  # no real answer is this long: refused unread
        detail = {"normalized_answer": "", "normalized_gold": "", "error": f"the answer is {error}"}
        return MathVerdict(False, FailureTag.WRONG_ANSWER, None, gold_text, "guard", detail)
    if gold_text is None:
        return _crash_verdict(TypeError(f"gold {gold!r} is not a string"), answer_text, gold)
    if answer_text is None or not answer_text.strip():
        gold_info = _prepared_gold(gold_text)
        if gold_info.error is not None:
            return _compare("", gold_text, settings, budget)
        detail = {"normalized_answer": "", "normalized_gold": gold_info.normalized}
        return MathVerdict(False, FailureTag.NO_ANSWER, answer_text, gold_text, "no_answer", detail)
    try:
        return _compare(answer_text, gold_text, settings, budget)
    except Exception as error:  # a bug on our side: reported, never raised into the RL loop
        return _crash_verdict(error, answer_text, gold)


_COMPARE_PARAMETERS = [
    p for p in inspect.signature(compare_answers).parameters.values() if p.kind is inspect.Parameter.KEYWORD_ONLY
]
_COMPARE_DEFAULTS: dict[str, Any] = {p.name: p.default for p in _COMPARE_PARAMETERS}
_Function = TypeVar("_Function", bound=Callable[..., Any])


class CompareOptions(TypedDict, total=False):
    """``compare_answers``' options as keywords of ``grade`` and ``is_equivalent`` (written once:
    their defaults are ``compare_answers``', and ``tests/math/test_verdict.py`` holds the two equal)."""

    policy: str
    timeout: float
    sandbox: bool
    tolerance: float
    wall_ceiling: float | None


def _options_of(function: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` over ``compare_answers``' defaults; a keyword that is none of them is a
    ``TypeError`` naming ``function`` (and the closest option)."""
    unknown = [key for key in options if key not in _COMPARE_DEFAULTS]
    if unknown:
        close = difflib.get_close_matches(unknown[0], _COMPARE_DEFAULTS, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise TypeError(f"{function}() got an unexpected keyword argument {unknown[0]!r}{hint}")
    return {**_COMPARE_DEFAULTS, **options}


def _with_compare_options(function: _Function) -> _Function:
    """Show ``compare_answers``' options as ``function``'s keywords in place of its ``**options``
    (``help()``, ``inspect.signature``: a grader's default policy is read from it)."""
    signature = inspect.signature(function)
    own = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    function.__signature__ = signature.replace(parameters=[*own, *_COMPARE_PARAMETERS])  # type: ignore[attr-defined]
    return function


@_with_compare_options
def grade(response: str, gold: str, *, extract: str = "boxed", **options: Unpack[CompareOptions]) -> MathVerdict:
    """Grade a model ``response`` against ``gold``: extract the final answer, then ``compare_answers``
    (whose options it takes: ``policy``, ``timeout``, ``sandbox``, ``tolerance``, ``wall_ceiling``).

    ``timeout`` is CPU seconds of symbolic work (see ``compare_answers``). A response of any
    length is read from its end (``MAX_RESPONSE_LENGTH`` bounds what ``extract="auto"`` reads);
    golds over ``MAX_GOLD_LENGTH`` are a bad gold.
    """
    _check_options(extract=extract, **_options_of("grade", options))
    try:
        answer = extract_answer(response, extract) if isinstance(response, str) else None  # type: ignore[arg-type]
    except Exception as error:
        return _crash_verdict(error, None, gold)
    return compare_answers(answer, gold, **options)  # type: ignore[arg-type]


@_with_compare_options
def is_equivalent(answer: str, gold: str, **options: Unpack[CompareOptions]) -> bool:
    """Answer-vs-answer equivalence under ``policy`` (True only when ``compare_answers`` says correct)."""
    return compare_answers(answer, gold, **_options_of("is_equivalent", options)).correct
