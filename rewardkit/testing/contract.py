"""Property-test a reward's contract with hypothesis: the checks every reward must pass
before it goes into a training run, reported with the minimal failing example."""

from __future__ import annotations

import copy
import functools
import inspect
import math
import time
import warnings
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from hypothesis.errors import Flaky, HypothesisWarning
from hypothesis.strategies import SearchStrategy

from rewardkit.testing.calling import RewardCaller, declares_field, resolve_reward, reward_name
from rewardkit.testing.strategies import adversarial_text, gold_responses

FieldsSpec = SearchStrategy[Mapping[str, Any]] | Mapping[str, Any] | None
ExtraCheck = Callable[..., Any]


class RewardContractError(AssertionError):
    """A reward broke its contract. ``rule`` names the broken rule; ``fields`` is the
    minimal failing example hypothesis found (the message shows it too)."""

    def __init__(self, message: str, *, rule: str, fields: Mapping[str, Any] | None) -> None:
        super().__init__(message)
        self.rule = rule
        self.fields = fields


class _Violation(Exception):
    """Raised inside the hypothesis test; hypothesis shrinks the example that raises it."""

    def __init__(self, rule: str, detail: str, fields: Mapping[str, Any]) -> None:
        super().__init__(f"{rule}: {detail}")
        self.rule = rule
        self.detail = detail
        self.fields = fields


def preview(value: Any, limit: int = 300) -> str:
    """``repr`` of ``value`` with long strings cut, so a megabyte example still reads."""
    if isinstance(value, str):
        text = repr(value)
        if len(text) > limit:
            return f"{text[: limit // 2]}...{text[-limit // 4 :]} ({len(value):,} characters)"
        return text
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k!r}: {preview(v, limit)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(preview(v, limit) for v in value) + "]"
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def fields_strategy(
    reward: Any,
    fields: FieldsSpec,
    *,
    arbitrary_final_response: bool = True,
    answer_field: str | None = "answer",
) -> SearchStrategy[Mapping[str, Any]]:
    """The strategy of field mappings a contract test draws from.

    A mapping's values may be strategies or constants. Unless ``arbitrary_final_response``
    is False, a reward that declares ``final_response`` gets there, mixed with the given
    strategy (if any), responses that carry the example's gold (``gold_responses`` of its
    ``answer_field``, when that is a string or a number), so the reward's success path is
    checked too, and ``adversarial_text()``: no text may make a reward raise.
    """
    if isinstance(fields, SearchStrategy):
        return fields
    parts: dict[str, SearchStrategy[Any]] = {
        key: value if isinstance(value, SearchStrategy) else st.just(value)
        for key, value in dict(fields or {}).items()
    }
    if not arbitrary_final_response or not declares_field(reward, "final_response"):
        return st.fixed_dictionaries(parts)
    given_text = parts.pop("final_response", None)
    order = [*parts, "final_response"] if given_text is None else list(dict(fields or {}))
    hostile = adversarial_text()

    @st.composite
    def with_responses(draw: st.DrawFn) -> Mapping[str, Any]:
        drawn = draw(st.fixed_dictionaries(parts))
        gold = drawn.get(answer_field) if answer_field is not None else None
        choices = [] if given_text is None else [given_text]
        if isinstance(gold, (str, int, Fraction)) and not isinstance(gold, bool):
            choices.append(gold_responses(str(gold)))
        drawn["final_response"] = draw(st.one_of(*choices, hostile))
        return {key: drawn[key] for key in order}

    return with_responses()


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    try:
        return bool(a == b)
    except Exception:  # e.g. numpy arrays: fall back to their text
        return repr(a) == repr(b)


class _ContractRun:
    """One contract check: calls the reward per example and raises ``_Violation``s."""

    def __init__(
        self,
        reward: Any,
        *,
        bounds: tuple[float, float] | None,
        max_seconds: float | None,
        extra_check: ExtraCheck | None,
        caller: RewardCaller,
    ) -> None:
        self.reward = reward
        self.bounds = bounds
        self.max_seconds = max_seconds
        self.extra_check = extra_check
        self.caller = caller
        self.baseline_keys: tuple[frozenset[str], Mapping[str, Any]] | None = None

    def _call(self, fields: Mapping[str, Any], which: str) -> tuple[Any, float]:
        from rewardkit.runtime.define.errors import (
            FieldCollisionError,
            MissingFieldError,
            RewardShapeError,
            RewardValueError,
        )

        started = time.perf_counter()
        try:
            result = self.caller(self.reward, copy.deepcopy(dict(fields)))
        except (MissingFieldError, FieldCollisionError) as exc:
            raise _Violation("fields", str(exc), fields) from None
        except RewardValueError as exc:
            raise _Violation("finite", f"returned a non-finite reward ({exc})", fields) from None
        except RewardShapeError as exc:
            raise _Violation(
                "shape", f"returned a value that is not a reward ({exc})", fields
            ) from None
        except Exception as exc:
            raise _Violation(
                "no-exception", f"raised {type(exc).__name__}: {exc} (on the {which} call)", fields
            ) from None
        return result, time.perf_counter() - started

    def check(self, fields: Mapping[str, Any]) -> None:
        first, elapsed = self._call(fields, "first")
        value = first.reward
        if not isinstance(value, float) or not math.isfinite(value):
            raise _Violation("finite", f"reward is {value!r}, not a finite float", fields)
        if self.bounds is not None:
            low, high = self.bounds
            if not low <= value <= high:
                raise _Violation("bounds", f"reward {value!r} is outside [{low}, {high}]", fields)
        if self.max_seconds is not None and elapsed > self.max_seconds:
            raise _Violation(
                "time", f"one call took {elapsed:.3f}s, over max_seconds={self.max_seconds}", fields
            )
        second, _ = self._call(fields, "second")
        if not _same(first.reward, second.reward) or not _same(first.extras, second.extras):
            raise _Violation(
                "deterministic",
                f"two calls with equal fields gave {first.reward!r} {preview(first.extras)} "
                f"then {second.reward!r} {preview(second.extras)}",
                fields,
            )
        keys = frozenset(first.extras)
        if self.baseline_keys is None:
            self.baseline_keys = (keys, fields)
        elif keys != self.baseline_keys[0]:
            expected, earlier = self.baseline_keys
            raise _Violation(
                "extras-keys",
                f"extras keys {sorted(keys)} differ from {sorted(expected)} returned for "
                f"fields={preview(earlier, 120)}",
                fields,
            )
        if self.extra_check is not None:
            try:
                _call_with_declared(self.extra_check, fields=fields, result=first)
            except AssertionError as exc:
                raise _Violation("property", str(exc) or "assertion failed", fields) from None


def _call_with_declared(function: ExtraCheck, **available: Any) -> Any:
    declared = inspect.signature(function).parameters
    return function(**{name: value for name, value in available.items() if name in declared})


def search_settings(
    max_examples: int | None, base: hypothesis_settings | None
) -> hypothesis_settings:
    """hypothesis settings for a search over a reward: no deadline (a reward's first call may be
    slow), health checks that huge hostile text trips off, on top of ``base``."""
    options: dict[str, Any] = {
        "deadline": None,
        "report_multiple_bugs": False,
        "suppress_health_check": [
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
            HealthCheck.function_scoped_fixture,
        ],
    }
    if max_examples is not None:
        options["max_examples"] = max_examples
    return (
        hypothesis_settings(base, **options) if base is not None else hypothesis_settings(**options)
    )


def _database_key(reward: Any, bounds: Any, extra_check: ExtraCheck | None) -> bytes:
    def qualified(obj: Any) -> str:
        inner = getattr(obj, "__wrapped__", obj)
        return f"{getattr(inner, '__module__', '')}.{getattr(inner, '__qualname__', type(obj).__qualname__)}"

    check = qualified(extra_check) if extra_check is not None else ""
    return f"{qualified(reward)}|{bounds}|{check}".encode()


def check_reward_contract(
    reward: Any,
    fields: FieldsSpec = None,
    *,
    bounds: tuple[float, float] | None = (0.0, 1.0),
    max_seconds: float | None = None,
    arbitrary_final_response: bool = True,
    answer_field: str | None = "answer",
    max_examples: int | None = None,
    settings: hypothesis_settings | None = None,
    extra_check: ExtraCheck | None = None,
) -> None:
    """Run a hypothesis search for inputs that break ``reward``'s contract; raise on the first.

    The contract: every call returns a finite float reward (or a dict with ``reward``)
    within ``bounds`` (None: any finite value), on responses that carry the gold
    ``answer_field`` as on wrong ones; equal inputs give equal results; no text in
    ``final_response`` makes it raise; every call returns the same extras keys; with
    ``max_seconds``, no call takes longer (opt-in). ``fields`` is a strategy of field
    mappings, or a mapping whose values are strategies or constants. ``extra_check(fields,
    result)`` may add assertions of your own. Raises ``RewardContractError`` naming the
    rule and the minimal failing example.
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not this function's source
    target = resolve_reward(reward)
    name = reward_name(target)
    strategy = fields_strategy(
        target,
        fields,
        arbitrary_final_response=arbitrary_final_response,
        answer_field=answer_field,
    )
    with RewardCaller() as caller:
        run = _ContractRun(
            target, bounds=bounds, max_seconds=max_seconds, extra_check=extra_check, caller=caller
        )

        @search_settings(max_examples, settings)
        @given(strategy)
        def contract(example: Mapping[str, Any]) -> None:
            run.check(example)

        # One inner function serves every reward: give each contract its own key in
        # hypothesis' example database, so saved failures replay for the right reward only
        # (hypothesis digests the inner test; its pytest plugin keys parametrized tests so).
        contract.hypothesis.inner_test._hypothesis_internal_add_digest = _database_key(  # type: ignore[attr-defined]
            target, bounds, extra_check
        )

        try:
            with warnings.catch_warnings():
                # A huge hostile example is expected here; its repr is cut in our own report.
                warnings.filterwarnings("ignore", "Generating overly large repr", HypothesisWarning)
                contract()
        except _Violation as violation:
            if violation.rule == "fields":
                raise TypeError(
                    f"check_reward_contract: the fields do not fit reward {name!r} "
                    f"(a test set-up error, not a contract violation): {violation.detail}"
                ) from None
            raise RewardContractError(
                f"reward {name!r} broke its contract ({violation.rule}): {violation.detail}\n"
                f"minimal failing example found by hypothesis:\n  fields = {preview(violation.fields)}",
                rule=violation.rule,
                fields=violation.fields,
            ) from None
        except Flaky as exc:
            raise RewardContractError(
                f"reward {name!r} broke its contract (flaky): a failure did not reproduce when "
                f"hypothesis replayed it, so the reward depends on something besides its fields "
                f"(time, randomness, state): {exc}",
                rule="flaky",
                fields=None,
            ) from exc


def reward_contract(
    reward: Any,
    fields: FieldsSpec = None,
    **options: Any,
) -> Callable[[ExtraCheck], Callable[[], None]]:
    """Decorator form of ``check_reward_contract``: turns a function into a pytest test.

    The decorated function may take ``fields`` and ``result`` (the ``RewardResult``) to
    assert properties of your own on every example; its body may also be just ``...``::

        @reward_contract(my_reward, fields={"answer": "42"})
        def test_my_reward_contract(fields, result):
            if not fields["final_response"]:
                assert result.reward == 0.0
    """

    def decorate(function: ExtraCheck) -> Callable[[], None]:
        def test() -> None:
            __tracebackhide__ = True
            check_reward_contract(reward, fields, extra_check=function, **options)

        functools.update_wrapper(
            test,
            function,
            assigned=("__module__", "__name__", "__qualname__", "__doc__"),
            updated=(),
        )
        del test.__wrapped__  # pytest must not see (and try to inject) ``fields``/``result``
        return test

    return decorate
