"""What every framework adapter shares: the reward reference, the options (``AdapterOptions``),
the per-call timeout, the error policy and its counters, scoring for sync and async callers,
and pickling.

The frameworks either have no per-call timeout and error handling for custom rewards, or
retry the whole batch: one pathological sample (a catastrophic regex, a hung API call) then
stalls or kills training. The adapter owns both: a failing or timed-out sample yields the
configured ``fallback`` and an ``error`` extra, is logged and counted in ``adapter.stats``.
Every sample carries the same extras keys, the reward's result schema (``adapter.schema``, a
``rewardkit.runtime.define.schema.ResultSchema``), fixed when the adapter is built; a failed sample's extras
are the schema's fill values. Configuration errors (a required field no mapping supplies, an
extra named like a reserved key, extras that cannot be known before the first call) are not
sample failures and always raise, the last two when the adapter is built.

Scoring is written once, for async callers; sync callers (``score_one``, ``score_batch``,
``score_groups``, a sync adapter's ``__call__``) run the same coroutine with ``run_sync``.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import functools
import inspect
import logging
import threading
import types
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from rewardkit.adapters.extras import adapter_schema
from rewardkit.adapters.grouping import group_error, group_outcomes, is_group
from rewardkit.adapters.hints import field_map_for, with_field_map_hint
from rewardkit.adapters.messages import AdapterInputError
from rewardkit.adapters.options import (
    DEFAULT_CONCURRENCY,
    FRAMEWORK_DEFAULT,
    OPTION_NAMES,
    AdapterOptions,
    AdapterOptionsDict,
    OnError,
)
from rewardkit.adapters.reference import RewardNotShippableError, RewardReference
from rewardkit.runtime.batch.calculate import build_fields
from rewardkit.runtime.define.errors import (
    FieldCollisionError,
    MissingFieldError,
    RewardShapeError,
    describe_error,
)
from rewardkit.runtime.define.options import ExecutionMode
from rewardkit.runtime.define.results import RewardResult
from rewardkit.runtime.define.rewards import as_reward
from rewardkit.runtime.run.execution import CONFIGURATION_ERRORS as RUNTIME_CONFIGURATION_ERRORS
from rewardkit.runtime.run.execution import SampleFailure, SampleRunner, finish_now, run_coroutine
from rewardkit.runtime.run.group_calls import group_runner

if TYPE_CHECKING:
    from typing_extensions import Unpack

logger = logging.getLogger("rewardkit.adapters")

T = TypeVar("T")
A = TypeVar("A", bound="RewardAdapter")

CONFIGURATION_ERRORS: tuple[type[BaseException], ...] = (
    MissingFieldError,
    *RUNTIME_CONFIGURATION_ERRORS,
)
"""Errors that mean the adapter or the data mapping is wrong, not one sample: never a fallback.
Unlike ``calculate_rewards``, an adapter sees one framework batch at a time (often one sample),
so any missing field counts: the mapping, not the sample, is what lacks it."""

Sample = Mapping[str, Any] | AdapterInputError
"""One sample's reward fields, or why its framework input could not be mapped."""


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


_SYNC_CALLER: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "rewardkit_adapters_sync_caller", default=False
)
"""Whether the scoring running in this context is ``RewardAdapter.run_sync``'s (a sync caller):
its reward calls then block, and a batch's calls run on an event loop of their own. Never seen by
the reward's own code (set back to ``False`` around every call)."""


def sync_face(implementation: Callable[..., Coroutine[Any, Any, T]]) -> Callable[..., T]:
    """A sync ``__call__`` running the async ``implementation`` with ``RewardAdapter.run_sync``
    (``inspect.signature`` shows the implementation's signature)."""

    @functools.wraps(implementation)
    def __call__(self: RewardAdapter, *args: Any, **kwargs: Any) -> T:
        return self.run_sync(implementation(self, *args, **kwargs))

    __call__.__name__ = __call__.__qualname__ = "__call__"
    return __call__


def _option(name: str) -> property:
    """Read option ``name`` of the adapter's ``settings`` as an attribute (``adapter.timeout``)."""
    return property(lambda self: getattr(self.settings, name), doc=f"The ``{name}`` option.")


class RewardAdapter:
    """Base of the framework adapters: a top-level, picklable callable wrapping one reward.

    Built from the reward and its ``AdapterOptions`` (an ``options`` object, keyword arguments,
    or both: the keywords override). Pickling sends the reward as a ``RewardReference``
    (``module:qualname``, the file a framework loaded it from, or its registry name; a
    ``BaseReward`` instance by value) plus the options, so the worker runs the same code.
    Counters (``stats``) are per process.
    """

    framework: ClassVar[str] = "a framework"
    reserved_extras: ClassVar[Mapping[str, str]] = types.MappingProxyType({})
    """Extras names the framework uses itself, with the reason: rejected with a clear error."""
    allows_none_fallback: ClassVar[bool] = False
    """Whether the framework accepts ``None`` as a sample's reward (TRL: "not applicable")."""
    not_applicable: ClassVar[float | None] = 0.0
    """The reward a ``NOT_APPLICABLE`` sample gets: ``None`` where the framework has the notion
    (TRL leaves it out of its weighted sum), else a number (see docs/adapters.md)."""
    default_missing_extra: ClassVar[Any] = None
    """``missing_extra`` when the options leave it to the framework."""
    factory: ClassVar[str] = "the adapter"
    """The ``to_*`` function that builds this adapter, as error messages spell it."""
    renamed_inputs: ClassVar[Mapping[str, str]] = types.MappingProxyType({})
    """Framework inputs fed to another field by default (verl's ``ground_truth`` -> ``answer``)."""
    context_fields: ClassVar[frozenset[str]] = frozenset()
    """Fields the framework passes that are no task input (TRL's ``trainer_state``)."""
    options_taken: ClassVar[frozenset[str]] = frozenset(OPTION_NAMES)
    """The ``AdapterOptions`` the framework has a use for; setting another is a ``TypeError``."""
    # The options read as attributes, as they were before they became one object.
    field_map = _option("field_map")
    timeout = _option("timeout")
    execution = _option("execution")
    on_error = _option("on_error")
    fallback = _option("fallback")
    extra_keys = _option("extra_keys")
    missing_extra = _option("missing_extra")
    concurrency = _option("concurrency")

    def __init_subclass__(
        cls, *, awaitable: Callable[..., Any] | None = None, **kwargs: Any
    ) -> None:
        """``class AsyncX(X, awaitable=template)``: the ``async def`` face of adapter ``X``, whose
        ``__call__`` is ``X.score_call`` (the implementation ``X``'s sync ``__call__`` runs), and
        which reads as a coroutine function with ``template``'s signature."""
        super().__init_subclass__(**kwargs)
        if awaitable is not None:
            cls.__call__ = cls.score_call  # type: ignore[attr-defined]
            mark_coroutine_function(cls, awaitable)

    def __init__(
        self,
        reward: Any,
        *,
        options: AdapterOptions | None = None,
        **keywords: Unpack[AdapterOptionsDict],
    ) -> None:
        settings = AdapterOptions.build(options, keywords, factory=self.factory)
        unused = [name for name in settings.changed() if name not in self.options_taken]
        if unused:
            taken = ", ".join(name for name in OPTION_NAMES if name in self.options_taken)
            raise TypeError(
                f"{self.factory}() got an unexpected keyword argument {unused[0]!r}: {self.framework} "
                f"has no use for it (its options: {taken})"
            )
        if settings.missing_extra is FRAMEWORK_DEFAULT:
            settings = dataclasses.replace(settings, missing_extra=self.default_missing_extra)
        self.settings = settings
        """This adapter's options (``name`` as given: the adapter's name is ``__name__``)."""
        if isinstance(reward, RewardReference):
            self.reference = reward
            reward = reward.resolve()
        else:
            self.reference = RewardReference.of(reward)
            if isinstance(reward, str):
                reward = self.reference.resolve()
        self.reward = as_reward(reward)
        self.runner = self._runner()
        self.__name__ = self.__qualname__ = settings.name or self.reward.name
        if settings.fallback is None and not self.allows_none_fallback:
            raise RewardShapeError(
                f"adapter {self.__name__!r}: fallback=None is not allowed for {self.framework}, "
                "which needs a number for every sample; pass a float (e.g. 0.0)"
            )
        self.stats = AdapterStats()
        self.schema = adapter_schema(
            self.reward,
            owner=self.__name__,
            framework=self.framework,
            extra_keys=settings.extra_keys,
            reserved=self.reserved_extras,
            fill_for=self.failure_fill,
        )
        """The extras every sample carries and their fills; see ``rewardkit.runtime.define.schema``."""

    def _runner(self) -> SampleRunner:
        """The reward's runner: one call per group for a group reward (``group_runner``), else the
        per-sample path ``calculate_rewards`` uses too."""
        settings = self.settings
        shipped = self.reference if self.reference.shippable else None
        if is_group(self.reward):
            return group_runner(
                self.reward,
                execution=settings.execution,
                timeout=settings.timeout,
                configuration=CONFIGURATION_ERRORS,
                reference=shipped,
            )
        return SampleRunner(
            self.reward,
            execution=settings.execution,
            timeout=settings.timeout,
            untimed="inline",
            place="sample {}",
            configuration=CONFIGURATION_ERRORS,
            reference=shipped,
        )

    def failure_fill(self, key: str) -> Any:
        """The value extra ``key`` takes on a failed sample (or one whose result lacks it):
        ``missing_extra``; a framework adapter may choose per key."""
        return self.settings.missing_extra

    # -- pickling ---------------------------------------------------------------------------

    def options(self) -> dict[str, Any]:
        """The keyword arguments that rebuild this adapter (the reward aside)."""
        return {**self.settings.as_dict(), "name": self.__name__}

    def __reduce__(self) -> tuple[Any, ...]:
        if not self.reference.shippable:
            raise RewardNotShippableError(self.reference.problem or f"reward {self.__name__!r}")
        return (_rebuild, (type(self), self.reference, self.options()))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.__name__!r} for {self.framework}: {self.reward!r}>"

    # -- field mapping ----------------------------------------------------------------------

    def mapped(self, source: str, default: str | None) -> str | None:
        """The reward field that framework input ``source`` feeds (``None``: dropped)."""
        return (self.settings.field_map or {}).get(source, default)

    def explain_missing(self, error: MissingFieldError) -> MissingFieldError:
        """``error`` with the ``field_map`` that would supply the missing fields from this
        framework's inputs, when one clearly does (``rewardkit.adapters.hints``)."""
        if "field_map" not in self.options_taken:
            return error
        binding = getattr(self.reward, "binding", None)
        required = getattr(binding, "required", (error.parameter,))
        field_map = self.settings.field_map or {}
        mapping = field_map_for(
            [name for name in required if name not in error.available] or [error.parameter],
            error.available,
            renamed=self.renamed_inputs,
            field_map={key: value for key, value in field_map.items() if value is not None},
            taken=getattr(binding, "parameters", ()),
            context=self.context_fields,
        )
        return with_field_map_hint(
            error, factory=self.factory, framework=self.framework, mapping=mapping
        )

    # -- outcomes ---------------------------------------------------------------------------

    def _failed(
        self, index: int, exc: BaseException, *, timed_out: bool = False, text: str | None = None
    ) -> Scored:
        if self.settings.on_error == "raise":
            raise exc
        self.stats.count(failures=1, timeouts=int(timed_out))
        text = text or describe_error(exc)
        fallback = self.settings.fallback
        logger.warning(
            "reward %r failed on sample %d under %s; scored %r instead: %s",
            self.__name__,
            index,
            self.framework,
            fallback,
            text,
        )
        return Scored(fallback, None, text)

    def scored(self, result: RewardResult) -> Scored:
        """A sample's outcome from its ``RewardResult`` (a ``NotApplicable`` one included)."""
        if result.applicable:
            return Scored(result.reward, result.extras)
        return Scored(self.not_applicable, result.extras or None, applicable=False)

    def settle(self, index: int, outcome: RewardResult | SampleFailure | BaseException) -> Scored:
        """Sample ``index``'s ``Scored`` from its outcome: a result, the failure of its call, or
        why its input could not be mapped (a failure under the error policy)."""
        if isinstance(outcome, RewardResult):
            return self.scored(outcome)
        if isinstance(outcome, SampleFailure):
            return self._failed(
                index, outcome.error, timed_out=outcome.timed_out, text=outcome.text
            )
        return self._failed(index, outcome)

    async def _call(self, fields: Mapping[str, Any], where: Any) -> Any:
        """The runner's result for one call (a sample or a group), or its ``SampleFailure``; a
        missing field raises, explained (a configuration error). For a sync caller
        (``run_sync``) the call blocks this thread, as the runner's sync face does."""
        try:
            if _SYNC_CALLER.get():
                return self._call_blocking(fields, where)
            return await self.runner.run(fields, where)
        except SampleFailure as failure:
            return failure
        except MissingFieldError as error:
            raise self.explain_missing(error) from None

    def _call_blocking(self, fields: Mapping[str, Any], where: Any) -> Any:
        token = _SYNC_CALLER.set(False)  # the reward's own code is no sync caller of this adapter
        try:
            return self.runner.call(fields, where)
        finally:
            _SYNC_CALLER.reset(token)

    # -- groups -----------------------------------------------------------------------------

    @property
    def is_group(self) -> bool:
        """Whether the adapted reward scores groups of samples."""
        return is_group(self.reward)

    def group_error(self, what: str) -> TypeError:
        """The configuration error for a group reward called where the framework gives no group."""
        return group_error(self.__name__, self.reward, what)

    def group_hint(self) -> str:
        """How to give this framework's adapter whole groups (adapters override it)."""
        return "score it where the framework hands over a batch"

    # -- scoring (async: the implementation) ------------------------------------------------

    @property
    def runs_inline(self) -> bool:
        """Whether the reward runs in the caller's thread (a sync reward, ``execution="inline"``):
        its calls then never overlap, so a batch is scored one sample after another."""
        return self.runner.execution == "inline" and not self.runner.reward.is_async

    async def score_one_async(self, fields: Sample, index: int = 0) -> Scored:
        """Score one sample, under the timeout, execution mode and error policy."""
        if self.is_group:
            raise self.group_error(f"{self.framework} handed it one sample ({self.group_hint()})")
        self.stats.count(calls=1)
        if isinstance(fields, AdapterInputError):
            return self._failed(index, fields)
        return self.settle(index, await self._call(fields, index))

    async def bounded(self, calls: Sequence[Callable[[], Awaitable[T]]]) -> list[T]:
        """Run ``calls`` at most ``concurrency`` at once (one after another when the reward runs
        inline: nothing would overlap); their results in order, the rest cancelled on an error.
        For a sync caller they run on an event loop of their own (``run_coroutine``)."""
        if self.runs_inline:
            return [await call() for call in calls]
        if _SYNC_CALLER.get():
            return run_coroutine(self._gathered(calls))  # type: ignore[no-any-return]
        return await self._gathered(calls)

    async def _gathered(self, calls: Sequence[Callable[[], Awaitable[T]]]) -> list[T]:
        _SYNC_CALLER.set(False)  # in this task's own context: its calls await, on this loop
        semaphore = asyncio.Semaphore(self.settings.concurrency)

        async def one(call: Callable[[], Awaitable[T]]) -> T:
            async with semaphore:
                return await call()

        tasks = [asyncio.ensure_future(one(call)) for call in calls]
        try:
            return list(await asyncio.gather(*tasks))
        finally:
            for task in tasks:
                task.cancel()

    async def score_batch_async(self, samples: Sequence[Sample]) -> list[Scored]:
        """Score a batch concurrently (up to ``concurrency``); results keep the samples' order."""
        return await self.bounded(
            [
                functools.partial(self.score_one_async, fields, index)
                for index, fields in enumerate(samples)
            ]
        )

    async def score_groups_async(
        self, samples: Sequence[Sample], groups: Sequence[list[int]]
    ) -> list[Scored]:
        """Score each group (lists of indices into ``samples``) at most ``concurrency`` at once;
        one ``Scored`` per sample, in the samples' order."""
        outcomes: dict[int, Any] = {}
        calls = [
            functools.partial(group_outcomes, self._call, samples, members) for members in groups
        ]
        for part in await self.bounded(calls):
            outcomes.update(part)
        scored = []
        for index in range(len(samples)):
            self.stats.count(calls=1)
            scored.append(self.settle(index, outcomes[index]))
        return scored

    async def score_samples_async(
        self, samples: Sequence[Sample], groups: Callable[[], Sequence[list[int]]]
    ) -> list[Scored]:
        """Score the samples of one framework call: each alone, or for a group reward by the
        groups ``groups()`` gives (asked only then: it may refuse the call)."""
        if self.is_group:
            return await self.score_groups_async(samples, groups())
        return await self.score_batch_async(samples)

    # -- sync faces -------------------------------------------------------------------------

    def run_sync(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """A coroutine of this adapter's scoring run to its end for a sync caller, in this thread
        with no event loop: each reward call blocks (``SampleRunner.call``), and a batch's calls
        run on an event loop of their own (``bounded``), as they always did for sync callers."""
        token = _SYNC_CALLER.set(True)
        try:
            return finish_now(coroutine)
        finally:
            _SYNC_CALLER.reset(token)

    def score_one(self, fields: Sample, index: int = 0) -> Scored:
        """``score_one_async`` from sync code."""
        return self.run_sync(self.score_one_async(fields, index))

    def score_batch(self, samples: Sequence[Sample]) -> list[Scored]:
        """``score_batch_async`` from sync code."""
        return self.run_sync(self.score_batch_async(samples))

    def score_groups(self, samples: Sequence[Sample], groups: Sequence[list[int]]) -> list[Scored]:
        """``score_groups_async`` from sync code."""
        return self.run_sync(self.score_groups_async(samples, groups))

    def score_samples(
        self, samples: Sequence[Sample], groups: Callable[[], Sequence[list[int]]]
    ) -> list[Scored]:
        """``score_samples_async`` from sync code."""
        return self.run_sync(self.score_samples_async(samples, groups))


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


def adapter_class(
    reward: Any, asynchronous: bool | None, sync: type[A], awaitable: type[A]
) -> type[A]:
    """``awaitable`` (an ``async def`` adapter) when ``asynchronous`` says so, or, when it is
    ``None``, when the reward is async; else ``sync``."""
    return awaitable if (as_async(reward) if asynchronous is None else asynchronous) else sync


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


__all__ = [
    "CONFIGURATION_ERRORS",
    "DEFAULT_CONCURRENCY",
    "AdapterOptions",
    "AdapterStats",
    "ExecutionMode",
    "OnError",
    "RewardAdapter",
    "Scored",
    "adapter_class",
    "as_async",
    "compose_fields",
    "mark_coroutine_function",
    "run_coroutine",
    "sync_face",
]
