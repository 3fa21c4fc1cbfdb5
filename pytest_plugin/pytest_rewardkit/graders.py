"""Pair graders: what decides whether a golden pair's two answers are equivalent.

``math`` (the default) is ``rewardkit.math.compare_answers``. A registered reward name or
a dotted path to a reward grades ``given`` as ``final_response`` against ``gold`` as
``answer`` (equivalent when the reward is at least 1). A dotted path to a plain function
``f(given, gold[, policy=...])`` may return a bool, a mapping, or an object with
``correct``/``equivalent`` (and optionally ``reason`` and ``detail``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_rewardkit.golden_files import did_you_mean
from rewardkit.testing.calling import (
    REGISTRATION_HINT,
    RewardLookupError,
    call_reward,
    resolve_object,
)

DEFAULT_GRADER = "math"
MATH_POLICIES = ("lenient", "strict")
# What ``rewardkit.math.compare_answers`` uses when a pair names no policy.
DEFAULT_MATH_POLICY = "lenient"


class UnknownGraderError(LookupError):
    """A pair names a grader that cannot be found."""


@dataclass(frozen=True)
class PairVerdict:
    """A grader's decision on one pair, with what explains it in a failure report."""

    equivalent: bool
    reason: str
    normalized_given: str | None = None
    normalized_gold: str | None = None
    tag: str | None = None
    detail: Mapping[str, str] = field(default_factory=dict)


def _from_verdict_object(result: Any) -> PairVerdict:
    """Read a ``MathVerdict``-like object or mapping, or a bool."""
    if isinstance(result, bool):
        return PairVerdict(equivalent=result, reason=f"grader returned {result}")
    get = (
        result.get
        if isinstance(result, Mapping)
        else lambda key, default=None: getattr(result, key, default)
    )
    decided = get("correct", None)
    if decided is None:
        decided = get("equivalent", None)
    if not isinstance(decided, bool):
        raise TypeError(
            f"a pair grader must return a bool or a verdict with a bool 'correct'/'equivalent', got {result!r}"
        )
    detail = dict(get("detail", None) or {})
    tag = get("tag", None)
    return PairVerdict(
        equivalent=decided,
        reason=str(get("reason", None) or "unspecified"),
        normalized_given=detail.pop("normalized_answer", None),
        normalized_gold=detail.pop("normalized_gold", None),
        tag=None if tag is None else str(tag),
        detail={str(k): str(v) for k, v in detail.items()},
    )


class PairGrader:
    """Grades one pair; ``accepts_policy`` says whether a pair's ``policy`` means anything to it."""

    name: str = ""
    accepts_policy: bool = False

    def __call__(self, given: str, gold: str, policy: str | None) -> PairVerdict:
        raise NotImplementedError

    def policy_in_effect(self, policy: str | None) -> str | None:
        """The policy a pair naming ``policy`` (None: none) is graded under, as a failure report
        shows it; None when the grader has no policies."""
        return policy if self.accepts_policy else None


class MathPairGrader(PairGrader):
    """The math grader's answer-vs-answer comparison (``rewardkit.math.compare_answers``)."""

    name = DEFAULT_GRADER
    accepts_policy = True

    def __call__(self, given: str, gold: str, policy: str | None) -> PairVerdict:
        from rewardkit.math import compare_answers

        return _from_verdict_object(
            compare_answers(given, gold, policy=self.policy_in_effect(policy))
        )

    def policy_in_effect(self, policy: str | None) -> str:
        return policy or DEFAULT_MATH_POLICY


class FunctionPairGrader(PairGrader):
    """A user function ``f(given, gold[, policy=...])``."""

    def __init__(self, name: str, function: Callable[..., Any]) -> None:
        self.name = name
        self.function = function
        try:
            parameters = inspect.signature(function).parameters.values()
        except (TypeError, ValueError):
            parameters = ()
        self.accepts_policy = any(
            p.name == "policy" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters
        )
        # The function's own default, when it declares one: what a pair without a policy gets.
        self.default_policy = next(
            (
                str(p.default)
                for p in parameters
                if p.name == "policy" and p.default is not inspect.Parameter.empty
            ),
            None,
        )

    def __call__(self, given: str, gold: str, policy: str | None) -> PairVerdict:
        if self.accepts_policy and policy is not None:
            return _from_verdict_object(self.function(given, gold, policy=policy))
        return _from_verdict_object(self.function(given, gold))

    def policy_in_effect(self, policy: str | None) -> str | None:
        if not self.accepts_policy:
            return None
        if policy is not None:
            return policy
        return self.default_policy or "none passed"


class RewardPairGrader(PairGrader):
    """A reward used as a grader: ``given`` is the response, ``gold`` the answer; reward >= 1 is equivalent."""

    def __init__(self, name: str, reward: Any) -> None:
        self.name = name
        self.reward = reward

    def __call__(self, given: str, gold: str, policy: str | None) -> PairVerdict:
        result = call_reward(self.reward, final_response=given, answer=gold)
        extras = dict(result.extras)
        tag = extras.get("tag")
        return PairVerdict(
            equivalent=result.reward >= 1.0,
            reason=str(extras.get("reason") or f"reward {result.reward:g}"),
            normalized_given=_optional_str(extras.get("normalized_answer")),
            normalized_gold=_optional_str(extras.get("normalized_gold")),
            tag=None if tag is None else str(tag),
            detail={"reward": f"{result.reward:g}"},
        )


def _optional_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _is_reward_object(obj: Any) -> bool:
    from rewardkit import BaseReward

    return isinstance(obj, BaseReward) or (hasattr(obj, "parameters") and hasattr(obj, "is_async"))


def resolve_grader(spec: str | None) -> PairGrader:
    """The grader a pair names: None or ``"math"``, a registered reward, or a dotted path."""
    if spec is None or spec == DEFAULT_GRADER:
        return MathPairGrader()
    hint = (
        "a grader is 'math' (the default), a registered reward name, or a dotted path "
        "like 'package.module:function'"
    )
    if ":" not in spec and "." not in spec:
        from rewardkit import get_reward

        try:
            return RewardPairGrader(spec, get_reward(spec))
        except KeyError as exc:
            detail = exc.args[0] if exc.args else str(exc)
            raise UnknownGraderError(
                f"unknown grader {spec!r}: {detail}; {hint}. {REGISTRATION_HINT}"
            ) from None
    try:
        target = resolve_object(spec)
    except RewardLookupError as exc:
        raise UnknownGraderError(f"unknown grader {spec!r}: {exc}; {hint}") from None
    if _is_reward_object(target):
        return RewardPairGrader(spec, target)
    if not callable(target):
        raise UnknownGraderError(
            f"grader {spec!r} is not callable ({type(target).__name__}); {hint}"
        )
    return FunctionPairGrader(spec, target)


def policy_problem(grader: PairGrader, policy: str | None) -> str | None:
    """Why ``policy`` means nothing to ``grader`` (it takes none, or the math grader has no
    such policy), or None."""
    if policy is None:
        return None
    if not grader.accepts_policy:
        return f"grader {grader.name!r} takes no 'policy' (remove it)"
    if isinstance(grader, MathPairGrader) and policy not in MATH_POLICIES:
        return (
            f"unknown policy {policy!r}{did_you_mean(policy, MATH_POLICIES)}; "
            f"the math grader has {', '.join(MATH_POLICIES)}"
        )
    return None
