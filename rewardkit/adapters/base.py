"""What every framework adapter shares: the reward reference, the per-call timeout, the error
policy and its counters, and pickling.

The frameworks either have no per-call timeout and error handling for custom rewards, or
retry the whole batch: one pathological sample (a catastrophic regex, a hung API call) then
stalls or kills training. The adapter owns both: a failing or timed-out sample yields the
configured ``fallback`` and an ``error`` extra, is logged and counted in ``adapter.stats``.
Every sample carries the same extras keys, the reward's result schema (``adapter.schema``, a
``rewardkit.schema.ResultSchema``), fixed when the adapter is built; a failed sample's extras
are the schema's fill values. Configuration errors (a required field no mapping supplies, an
extra named like a reserved key, extras that cannot be known before the first call) are not
sample failures and always raise, the last two when the adapter is built.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from rewardkit.adapters.extras import adapter_schema
from rewardkit.adapters.grouping import GroupScoring
from rewardkit.adapters.hints import field_map_for, with_field_map_hint
from rewardkit.adapters.messages import AdapterInputError
from rewardkit.adapters.reference import RewardNotShippableError, RewardReference
from rewardkit.calculate import CONFIGURATION_ERRORS as RUNTIME_CONFIGURATION_ERRORS
from rewardkit.calculate import build_fields
from rewardkit.errors import (
    FieldCollisionError,
    MissingFieldError,
    RewardShapeError,
    describe_error,
)
from rewardkit.execution import ExecutionMode, SampleFailure, SampleRunner, run_coroutine
from rewardkit.groups import group_runner, is_group_reward
from rewardkit.results import RewardResult
from rewardkit.rewards import as_reward

logger = logging.getLogger("rewardkit.adapters")

OnError = Literal["fallback", "raise"]

CONFIGURATION_ERRORS: tuple[type[BaseException], ...] = (
    MissingFieldError,
    *RUNTIME_CONFIGURATION_ERRORS,
)
"""Errors that mean the adapter or the data mapping is wrong, not one sample: never a fallback.
Unlike ``calculate_rewards``, an adapter sees one framework batch at a time (often one sample),
so any missing field counts: the mapping, not the sample, is what lacks it."""

DEFAULT_CONCURRENCY = 16
"""Samples of one batch an adapter computes at once (async rewards, or sync ones with a timeout)."""


@dataclass
class AdapterStats:
    """Per-process counters of one adapter: ``calls`` (samples scored), ``failures`` (samples
    that got the fallback, timeouts included) and ``timeouts``."""

    calls: int = 0
    failures: int = 0
    timeouts: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def count(self, *, calls: int = 0, failures: int = 0, timeouts: int = 0) -> None:
        """Add to the counters (thread-safe)."""
        with self._lock:
            self.calls += calls
            self.failures += failures
            self.timeouts += timeouts


@dataclass(frozen=True)
class Scored:
    """One sample's outcome: its reward (the fallback on failure), extras, and the error text."""

    reward: float | None
    extras: Mapping[str, Any] | None
    error: str | None = None
    applicable: bool = True
    """``False``: the reward does not apply to the sample (``NOT_APPLICABLE``); ``reward`` is then
    the adapter's ``not_applicable`` value."""


def mark_coroutine_function(cls: type, template: Callable[..., Any]) -> None:
    """Make instances of ``cls`` read as ``async def`` to ``inspect.iscoroutinefunction``.

    verl (``inspect.iscoroutinefunction(compute_score)``) and AgentFly inspect the object
    itself, not its ``__call__``. Giving the class the code object of an async ``template``
    with the framework's signature makes the instance function-like (Python 3.10+); 3.12's
    coroutine mark is set too. ``inspect.signature`` then shows the template's signature.
    """
    cls.__code__ = template.__code__  # type: ignore[attr-defined]
    cls.__defaults__ = template.__defaults__  # type: ignore[attr-defined]
    cls.__kwdefaults__ = template.__kwdefaults__  # type: ignore[attr-defined]
    mark = getattr(inspect, "_is_coroutine_mark", None)
    if mark is not None:
        cls._is_coroutine_marker = mark  # type: ignore[attr-defined]


class RewardAdapter(GroupScoring):
    """Base of the framework adapters: a top-level, picklable callable wrapping one reward.

    Pickling sends the reward as a ``RewardReference`` (``module:qualname``, the file a
    framework loaded it from, or its registry name; a ``BaseReward`` instance by value) plus
    the options, so the worker runs the same code. Counters (``stats``) are per process.
    """

    framework: ClassVar[str] = "a framework"
    reserved_extras: ClassVar[Mapping[str, str]] = types.MappingProxyType({})
    """Extras names the framework uses itself, with the reason: rejected with a clear error."""
    allows_none_fallback: ClassVar[bool] = False
    """Whether the framework accepts ``None`` as a sample's reward (TRL: "not applicable")."""
    not_applicable: ClassVar[float | None] = 0.0
    """The reward a ``NOT_APPLICABLE`` sample gets: ``None`` where the framework has the notion
    (TRL leaves it out of its weighted sum), else a number (see docs/adapters.md)."""
    factory: ClassVar[str] = "the adapter"
    """The ``to_*`` function that builds this adapter, as error messages spell it."""
    renamed_inputs: ClassVar[Mapping[str, str]] = types.MappingProxyType({})
    """Framework inputs fed to another field by default (verl's ``ground_truth`` -> ``answer``)."""
    context_fields: ClassVar[frozenset[str]] = frozenset()
    """Fields the framework passes that are no task input (TRL's ``trainer_state``)."""
    takes_field_map: ClassVar[bool] = True
    """Whether the ``to_*`` function offers ``field_map`` (AgentFly passes fields by name)."""

    def __init__(
        self,
        reward: Any,
        *,
        name: str | None = None,
        field_map: Mapping[str, str | None] | None = None,
        timeout: float | None = None,
        execution: ExecutionMode | None = None,
        on_error: OnError = "fallback",
        fallback: float | None = 0.0,
        extra_keys: Iterable[str] | Mapping[str, Any] | None = None,
        missing_extra: Any = None,
        concurrency: int = DEFAULT_CONCURRENCY,
    ) -> None:
        if isinstance(reward, RewardReference):
            self.reference = reward
            reward = reward.resolve()
        else:
            self.reference = RewardReference.of(reward)
            if isinstance(reward, str):
                reward = self.reference.resolve()
        self.reward = as_reward(reward)
        self.execution = execution
        shipped = self.reference if self.reference.shippable else None
        if is_group_reward(self.reward):  # one call per group (rewardkit.adapters.grouping)
            self.runner = group_runner(
                self.reward,
                execution=execution,
                timeout=timeout,
                configuration=CONFIGURATION_ERRORS,
                reference=shipped,
            )
        else:  # the per-sample path calculate_rewards uses too
            self.runner = SampleRunner(
                self.reward,
                execution=execution,
                timeout=timeout,
                untimed="inline",
                place="sample {}",
                configuration=CONFIGURATION_ERRORS,
                reference=shipped,
            )
        if on_error not in ("fallback", "raise"):
            raise ValueError(f"on_error must be 'fallback' or 'raise', got {on_error!r}")
        if timeout is not None and not timeout > 0:
            raise ValueError(f"timeout must be positive seconds or None, got {timeout!r}")
        if not isinstance(concurrency, int) or concurrency < 1:
            raise ValueError(f"concurrency must be a positive integer, got {concurrency!r}")
        self.__name__ = name or self.reward.name
        if fallback is not None:
            fallback = RewardResult(fallback).reward  # finite float or a clear error
        elif not self.allows_none_fallback:
            raise RewardShapeError(
                f"adapter {self.__name__!r}: fallback=None is not allowed for {self.framework}, "
                "which needs a number for every sample; pass a float (e.g. 0.0)"
            )
        self.__qualname__ = self.__name__
        self.field_map: dict[str, str | None] = dict(field_map or {})
        self.timeout = timeout
        self.on_error: OnError = on_error
        self.fallback = fallback
        self.extra_keys: tuple[str, ...] | dict[str, Any] | None = (
            None
            if extra_keys is None
            else dict(extra_keys)
            if isinstance(extra_keys, Mapping)
            else tuple(extra_keys)
        )
        self.missing_extra = missing_extra
        self.concurrency = concurrency
        self.stats = AdapterStats()
        self.schema = adapter_schema(
            self.reward,
            owner=self.__name__,
            framework=self.framework,
            extra_keys=self.extra_keys,
            reserved=self.reserved_extras,
            fill_for=self.failure_fill,
        )
        """The extras every sample carries and their fills; see ``rewardkit.schema``."""

    def failure_fill(self, key: str) -> Any:
        """The value extra ``key`` takes on a failed sample (or one whose result lacks it):
        ``missing_extra``; a framework adapter may choose per key."""
        return self.missing_extra

    # -- pickling ---------------------------------------------------------------------------

    def options(self) -> dict[str, Any]:
        """The keyword arguments that rebuild this adapter (the reward aside)."""
        return {
            "name": self.__name__,
            "field_map": self.field_map,
            "timeout": self.timeout,
            "on_error": self.on_error,
            "fallback": self.fallback,
            "extra_keys": self.extra_keys,
            "missing_extra": self.missing_extra,
            "concurrency": self.concurrency,
            "execution": self.execution,
        }

    def __reduce__(self) -> tuple[Any, ...]:
        if not self.reference.shippable:
            raise RewardNotShippableError(self.reference.problem or f"reward {self.__name__!r}")
        return (_rebuild, (type(self), self.reference, self.options()))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.__name__!r} for {self.framework}: {self.reward!r}>"

    # -- field mapping ----------------------------------------------------------------------

    def mapped(self, source: str, default: str | None) -> str | None:
        """The reward field that framework input ``source`` feeds (``None``: dropped)."""
        return self.field_map.get(source, default)

    # -- scoring ----------------------------------------------------------------------------

    def _failed(
        self, index: int, exc: BaseException, *, timed_out: bool = False, text: str | None = None
    ) -> Scored:
        if self.on_error == "raise":
            raise exc
        self.stats.count(failures=1, timeouts=int(timed_out))
        text = text or describe_error(exc)
        logger.warning(
            "reward %r failed on sample %d under %s; scored %r instead: %s",
            self.__name__,
            index,
            self.framework,
            self.fallback,
            text,
        )
        return Scored(self.fallback, None, text)

    def scored(self, result: RewardResult) -> Scored:
        """A sample's outcome from its ``RewardResult`` (a ``NotApplicable`` one included)."""
        if result.applicable:
            return Scored(result.reward, result.extras)
        return Scored(self.not_applicable, result.extras or None, applicable=False)

    def explain_missing(self, error: MissingFieldError) -> MissingFieldError:
        """``error`` with the ``field_map`` that would supply the missing fields from this
        framework's inputs, when one clearly does (``rewardkit.adapters.hints``)."""
        if not self.takes_field_map:
            return error
        binding = getattr(self.reward, "binding", None)
        required = getattr(binding, "required", (error.parameter,))
        mapping = field_map_for(
            [name for name in required if name not in error.available] or [error.parameter],
            error.available,
            renamed=self.renamed_inputs,
            field_map={key: value for key, value in self.field_map.items() if value is not None},
            taken=getattr(binding, "parameters", ()),
            context=self.context_fields,
        )
        return with_field_map_hint(
            error, factory=self.factory, framework=self.framework, mapping=mapping
        )

    def _refuse_group(self) -> None:
        if self.is_group:
            raise self.group_error(f"{self.framework} handed it one sample ({self.group_hint()})")

    def group_hint(self) -> str:
        """How to give this framework's adapter whole groups (adapters override it)."""
        return "score it where the framework hands over a batch"

    def score_one(self, fields: Mapping[str, Any] | AdapterInputError, index: int = 0) -> Scored:
        """Score one sample from sync code, under the timeout, execution mode and error policy."""
        self._refuse_group()
        self.stats.count(calls=1)
        if isinstance(fields, AdapterInputError):
            return self._failed(index, fields)
        try:
            result = self.runner.call(fields, index)
        except SampleFailure as failure:
            failed = failure
        except MissingFieldError as error:
            raise self.explain_missing(error) from None
        else:
            return self.scored(result)
        return self._failed(index, failed.error, timed_out=failed.timed_out, text=failed.text)

    async def score_one_async(
        self, fields: Mapping[str, Any] | AdapterInputError, index: int = 0
    ) -> Scored:
        """Score one sample on the caller's event loop, under the timeout and the error policy."""
        self._refuse_group()
        self.stats.count(calls=1)
        if isinstance(fields, AdapterInputError):
            return self._failed(index, fields)
        try:
            result = await self.runner.run(fields, index)
        except SampleFailure as failure:
            failed = failure
        except MissingFieldError as error:
            raise self.explain_missing(error) from None
        else:
            return self.scored(result)
        return self._failed(index, failed.error, timed_out=failed.timed_out, text=failed.text)

    async def score_batch_async(
        self, samples: Sequence[Mapping[str, Any] | AdapterInputError]
    ) -> list[Scored]:
        """Score a batch concurrently (up to ``concurrency``); results keep the samples' order."""
        semaphore = asyncio.Semaphore(self.concurrency)

        async def one(index: int, fields: Mapping[str, Any] | AdapterInputError) -> Scored:
            async with semaphore:
                return await self.score_one_async(fields, index)

        tasks = [asyncio.ensure_future(one(index, fields)) for index, fields in enumerate(samples)]
        try:
            return list(await asyncio.gather(*tasks))
        finally:
            for task in tasks:
                task.cancel()

    def score_batch(self, samples: Sequence[Mapping[str, Any] | AdapterInputError]) -> list[Scored]:
        """Score a batch from sync code: inline when the reward is sync and runs inline."""
        if not self.reward.is_async and self.runner.execution == "inline":
            return [self.score_one(fields, index) for index, fields in enumerate(samples)]
        return run_coroutine(self.score_batch_async(samples))  # type: ignore[no-any-return]


def _rebuild(
    cls: type[RewardAdapter], reference: RewardReference, options: dict[str, Any]
) -> RewardAdapter:
    """Unpickle an adapter: resolve its reward in this process and apply the same options."""
    return cls(reference, **options)


def as_async(reward: Any) -> bool:
    """Whether ``reward`` (any form the ``to_*`` functions accept) is an async reward."""
    if isinstance(reward, RewardReference):
        reward = reward.resolve()
    elif isinstance(reward, str):
        reward = RewardReference.of(reward).resolve()
    return bool(as_reward(reward).is_async)


def compose_fields(
    adapter: RewardAdapter, task: Mapping[str, Any], predefined: Mapping[str, Any], *, where: str
) -> dict[str, Any]:
    """The reward's fields: ``task`` fields plus the ``predefined`` ones, a task field named like
    a predefined one raising ``FieldCollisionError`` that says how to map it away."""
    try:
        return build_fields(task, where=where, **predefined)
    except FieldCollisionError as exc:
        raise FieldCollisionError(
            f"{exc}; or map it in the adapter: {adapter.framework} adapter "
            f"field_map={{{exc.field!r}: 'task_{exc.field}'}} (or None to drop it)",
            field=exc.field,
        ) from None
