"""Weighted composition: several rewards as one, each component's value kept as an extra.

Trainers combine rewards: TRL sums ``reward_funcs`` with ``reward_weights``, verifiers' ``Rubric``
sums its functions with ``weights`` and logs each one. ``weighted_sum(rewards, weights)`` is that
sum as one rewardkit reward, so every framework (and ``calculate_rewards``) gets the same number
and the same per-component logs:

- ``reward`` = the sum of ``weight * component reward`` over the components that apply (a
  component returning ``NOT_APPLICABLE`` is left out, as TRL leaves out ``None``); when every
  component with a non-zero weight is not applicable, the composition is not applicable too;
- extras: ``<label>`` = each component's reward (``None`` when not applicable) and
  ``<label>/<key>`` = each component's own extras; a weight of 0 makes a component a metric only
  (computed and logged, not summed);
- a component that fails fails the sample (``RewardComponentError`` naming the component): a sum
  missing a term would be a wrong reward that looks right.

A composition with a group reward among its components is itself a group reward.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import math
import sys
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import Any, ClassVar, TypeVar

from rewardkit.builtin_rewards import get_reward
from rewardkit.runtime.define.errors import MissingFieldError, RewardError
from rewardkit.runtime.define.results import NotApplicable, RewardResult
from rewardkit.runtime.define.rewards import (
    BaseReward,
    FieldBinding,
    Reward,
    as_reward,
    is_group_reward,
)
from rewardkit.runtime.run.execution import (
    CONFIGURATION_ERRORS,
    SampleFailure,
    SampleRunner,
    finish_now,
)
from rewardkit.runtime.run.group_calls import group_runner

T = TypeVar("T")


class RewardComponentError(RewardError):
    """A component of a weighted reward failed; the message names the component and the error."""

    def __init__(self, message: str, *, component: str) -> None:
        super().__init__(message)
        self.component = component


class Component:
    """One term of a weighted sum: a label, a weight, the reward (normalized) and, for a reward
    that declares where or how long it runs, the runner that runs it so (see ``own_runner``)."""

    __slots__ = ("label", "reward", "runner", "weight")

    def __init__(self, label: str, reward: Any, weight: float) -> None:
        self.label = label
        self.reward = reward
        self.weight = weight
        self.runner = own_runner(reward)

    async def run(self, payload: Any, *, group: bool, blocking: bool) -> Any:
        """The component's result on one sample (``group``: its results on a list of samples), in
        its own mode: from a sync sum (``blocking``) through its runner's sync face, else awaited
        on the caller's loop."""
        if self.runner is not None:
            call = {"samples": payload} if group else payload
            return self.runner.call(call, 0) if blocking else await self.runner.run(call, 0)
        result = (self.reward.invoke_group if group else self.reward.invoke)(payload)
        return await result if self.reward.is_async else result

    def __repr__(self) -> str:
        return f"Component({self.label!r}, weight={self.weight!r})"


def own_runner(reward: Any) -> SampleRunner | None:
    """The runner of a component that declares its own ``execution`` or ``timeout``
    (``@reward(execution="process")`` for math_verify's signals), so the sum runs it there
    wherever the sum itself runs (verl's thread pool, a reward thread); ``None``: call it
    directly (also for ``execution="thread"`` without a timeout: the sum's thread serves;
    waiting on another thread of the pool could exhaust it). In a worker process of
    ``reward_processes`` the sum already runs on a process's main thread, under its own
    timeout: components are called directly there. A component
    defined in ``__main__`` with ``execution="process"`` is a ``RewardLoadError`` here."""
    execution = getattr(reward, "execution", None)
    timeout = getattr(reward, "timeout", None)
    if execution != "process" and timeout is None:
        return None
    from rewardkit.runtime.run.reward_processes import in_worker_process

    if in_worker_process():
        return None
    if is_group_reward(reward):
        return group_runner(reward)
    return SampleRunner(reward, untimed="inline", place="the sample")


def _normalize(reward: Any) -> Any:
    if isinstance(reward, str):
        reward = get_reward(reward)
        if isinstance(reward, type) and issubclass(reward, BaseReward):
            reward = reward()
    return as_reward(reward)


def _weight(value: Any, label: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(
            f"the weight of component {label!r} must be a finite number, got {value!r}"
        )
    return float(value)


def make_components(
    rewards: Sequence[Any], weights: Sequence[float] | None, labels: Sequence[str] | None
) -> tuple[Component, ...]:
    """Validate the parts of a weighted sum (as TRL validates ``reward_weights``)."""
    if isinstance(rewards, (str, Mapping)) or not rewards:
        raise ValueError("weighted_sum needs a non-empty list of rewards")
    normalized = [_normalize(reward) for reward in rewards]
    weights = [1.0] * len(normalized) if weights is None else list(weights)
    labels = [reward.name for reward in normalized] if labels is None else list(labels)
    if len(weights) != len(normalized) or len(labels) != len(normalized):
        raise ValueError(
            f"weighted_sum: {len(normalized)} rewards, {len(weights)} weights and {len(labels)} labels; "
            "give one weight (and label) per reward"
        )
    seen: set[str] = set()
    for label in labels:
        if not isinstance(label, str) or not label or label == "reward" or "/" in label:
            raise ValueError(
                f"weighted_sum: component label {label!r} must be a non-empty name other than 'reward', without '/'"
            )
        if label in seen:
            raise ValueError(
                f"weighted_sum: two components are labelled {label!r}; pass labels=[...] (or name the "
                "rewards differently) so that each component's extras stay apart"
            )
        seen.add(label)
    return tuple(
        Component(label, reward, _weight(weight, label))
        for label, reward, weight in zip(labels, normalized, weights)
    )


def union_binding(components: Sequence[Component], name: str, location: str) -> FieldBinding:
    """A binding that selects every field any component declares (required if any requires it)."""
    required: list[str] = []
    optional: list[str] = []
    accepts_all = False
    for component in components:
        binding = component.reward.binding
        if binding is None:
            continue
        accepts_all = accepts_all or binding.accepts_all
        required.extend(parameter for parameter in binding.required if parameter not in required)
    for component in components:
        binding = component.reward.binding
        if binding is not None:
            optional.extend(p for p in binding.optional if p not in required and p not in optional)
    keyword = inspect.Parameter.KEYWORD_ONLY
    parameters = [inspect.Parameter(p, keyword) for p in required]
    parameters += [inspect.Parameter(p, keyword, default=None) for p in optional]
    if accepts_all:
        parameters.append(inspect.Parameter("fields", inspect.Parameter.VAR_KEYWORD))

    def fields(**selected: Any) -> None:
        """The fields of a weighted sum (never called)."""

    fields.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    binding = FieldBinding(fields, name)
    binding.location = location
    return binding


def combine(components: Sequence[Component], parts: Sequence[RewardResult]) -> RewardResult:
    """The weighted sum of one sample's component results, each component logged as extras."""
    extras: dict[str, Any] = {}
    terms: list[float] = []
    weighted = False
    for component, part in zip(components, parts):
        extras[component.label] = part.reward
        for key, value in part.items():
            if key != "reward":
                extras[f"{component.label}/{key}"] = value
        if component.weight != 0.0:
            weighted = True
            if part.applicable:
                terms.append(component.weight * part.reward)  # type: ignore[operator]
    if weighted and not terms:
        return NotApplicable("no weighted component applies to this sample", extras)
    return RewardResult(math.fsum(terms), extras)


def _component_failure(component: Component, owner: str, exc: Exception) -> Exception:
    if isinstance(exc, SampleFailure):  # from the component's own runner
        if not isinstance(exc.error, Exception):
            exc = RewardComponentError(exc.text, component=component.label)
        else:
            exc = exc.error
    if isinstance(exc, (*CONFIGURATION_ERRORS, MissingFieldError)):
        exc.add_note(f"in component {component.label!r} of weighted reward {owner!r}")
        return exc
    error = RewardComponentError(
        f"component {component.label!r} of weighted reward {owner!r} failed: {type(exc).__name__}: {exc}",
        component=component.label,
    )
    error.__cause__ = exc
    return error


async def _each(calls: Sequence[Callable[[], Awaitable[T]]], *, concurrently: bool) -> list[T]:
    """The results of ``calls`` in order: gathered, or one after another."""
    if concurrently:
        return list(await asyncio.gather(*(call() for call in calls)))
    return [await call() for call in calls]


def _caller_location() -> str:
    frame = sys._getframe(2)
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


class WeightedReward(Reward):
    """A weighted sum of per-sample rewards, itself a per-sample reward (see the module docstring).

    Async when any component is. Pickled by value: its components travel as references.
    """

    travels_by_value: ClassVar[bool] = True

    def __init__(self, components: Sequence[Component], *, name: str, location: str) -> None:
        self.components = tuple(components)
        self.name = name
        self.none_as_zero = False
        self.is_async = any(component.reward.is_async for component in self.components)
        self.binding = union_binding(self.components, name, location)
        self.parameters = self.binding.parameters
        self.invoke = self._invoke_async if self.is_async else self._invoke_sync  # type: ignore[method-assign]
        self.__name__ = self.__qualname__ = name
        self.__module__ = __name__

    def _invoke_sync(self, fields: Mapping[str, Any]) -> RewardResult:
        return finish_now(self._invoke(fields, blocking=True))

    def _invoke_async(self, fields: Mapping[str, Any]) -> Coroutine[Any, Any, RewardResult]:
        return self._invoke(fields, blocking=False)

    async def _invoke(self, fields: Mapping[str, Any], *, blocking: bool) -> RewardResult:
        """One sample's weighted sum: the components one after another for a sync sum, else at
        once (the one implementation behind ``_invoke_sync`` and ``_invoke_async``)."""
        calls = [
            functools.partial(self._part, component, fields, group=False, blocking=blocking)
            for component in self.components
        ]
        return combine(self.components, await _each(calls, concurrently=not blocking))

    async def _part(
        self, component: Component, payload: Any, *, group: bool, blocking: bool
    ) -> Any:
        """``component.run``, its failure as the sum's (``RewardComponentError`` naming it)."""
        try:
            return await component.run(payload, group=group, blocking=blocking)
        except Exception as exc:
            raise _component_failure(component, self.name, exc) from None

    @property
    def extra_keys(self) -> dict[str, Any]:
        """The extras of every result, for ``rewardkit.runtime.define.schema``: each label (its component's
        reward, a number or ``None``) and ``<label>/<key>`` for each component's own extras."""
        from rewardkit.runtime.define.schema import result_schema

        types = {"number": float, "text": str}
        keys: dict[str, Any] = {}
        for component in self.components:
            keys[component.label] = float
            schema = result_schema(component.reward)
            for key in schema.keys:
                keys[f"{component.label}/{key}"] = types.get(schema.kinds[key], object)
        return keys

    @property
    def labels(self) -> tuple[str, ...]:
        """The components' labels, in order."""
        return tuple(component.label for component in self.components)

    @property
    def weights(self) -> tuple[float, ...]:
        """The components' weights, in order."""
        return tuple(component.weight for component in self.components)

    def __repr__(self) -> str:
        terms = " + ".join(f"{c.weight:g}*{c.label}" for c in self.components)
        return f"<weighted reward {self.name!r} = {terms}>"

    def __reduce__(self) -> tuple[Any, ...]:
        rewards = [component.reward for component in self.components]
        return (
            _rebuild,
            (rewards, list(self.weights), list(self.labels), self.name, self.binding.location),
        )


class WeightedGroupReward(WeightedReward):
    """A weighted sum with a group reward among its components: a group reward itself."""

    is_group: ClassVar[bool] = True

    def __init__(self, components: Sequence[Component], *, name: str, location: str) -> None:
        super().__init__(components, name=name, location=location)
        grouped = [c.reward for c in self.components if is_group_reward(c.reward)]
        self.over = "group" if any(reward.over == "group" for reward in grouped) else "batch"
        self.invoke = self._refuse_one  # type: ignore[method-assign]

    def _refuse_one(self, fields: Mapping[str, Any]) -> Any:
        grouped = next(c for c in self.components if is_group_reward(c.reward))
        return grouped.reward.invoke(fields)  # the group reward's own "needs a group" error

    def invoke_group(self, samples: Sequence[Mapping[str, Any]]) -> Any:
        """Score one group: each component over it, then the weighted sum per sample."""
        if self.is_async:
            return self._invoke_group(samples, blocking=False)
        return finish_now(self._invoke_group(samples, blocking=True))

    async def _invoke_group(
        self, samples: Sequence[Mapping[str, Any]], *, blocking: bool
    ) -> list[RewardResult]:
        calls = [
            functools.partial(self._column, component, samples, blocking=blocking)
            for component in self.components
        ]
        columns = await _each(calls, concurrently=not blocking)
        return [combine(self.components, parts) for parts in zip(*columns)] if samples else []

    async def _column(
        self, component: Component, samples: Sequence[Mapping[str, Any]], *, blocking: bool
    ) -> list[RewardResult]:
        """One component's results over a group: a group component's one call, else one call per
        sample (at once where it awaits: an async component, or one with its own runner)."""
        if is_group_reward(component.reward):
            return await self._part(component, samples, group=True, blocking=blocking)  # type: ignore[no-any-return]
        overlaps = component.reward.is_async or component.runner is not None
        calls = [
            functools.partial(self._part, component, sample, group=False, blocking=blocking)
            for sample in samples
        ]
        return await _each(calls, concurrently=overlaps and not blocking)


def _build(components: tuple[Component, ...], name: str, location: str) -> WeightedReward:
    cls = (
        WeightedGroupReward
        if any(is_group_reward(c.reward) for c in components)
        else WeightedReward
    )
    return cls(components, name=name, location=location)


def _rebuild(
    rewards: list[Any], weights: list[float], labels: list[str], name: str, location: str
) -> WeightedReward:
    """Unpickle a weighted reward from its parts."""
    return _build(make_components(rewards, weights, labels), name, location)


def weighted_sum(
    rewards: Sequence[Any],
    weights: Sequence[float] | None = None,
    *,
    name: str,
    labels: Sequence[str] | None = None,
) -> WeightedReward:
    """One reward that is the weighted sum of ``rewards`` (TRL's ``reward_funcs`` and
    ``reward_weights``, verifiers' ``Rubric(funcs, weights)``), each component logged.

    ``rewards``: reward objects, ``BaseReward`` instances, functions, group rewards or registry
    names; ``weights``: one finite number each (default 1.0; 0 = a metric only); ``labels``: the
    extras' names of the components (default: the rewards' names; they must differ).
    """
    if not isinstance(name, str) or not name.strip():
        raise TypeError(f"weighted_sum needs a name (a non-empty string), got {name!r}")
    return _build(make_components(rewards, weights, labels), name, _caller_location())


__all__ = ["RewardComponentError", "WeightedGroupReward", "WeightedReward", "weighted_sum"]
