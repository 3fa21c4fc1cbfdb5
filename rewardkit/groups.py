"""Group and batch rewards: one definition scored over several samples at once.

Some rewards are not a function of one sample: open-r1's ``len_reward`` ranks a completion's
length among the completions of the same prompt (GRPO's group), group shaping normalises within
a group, and a reward model scores a whole batch in one forward pass. A ``@group_reward``
function receives each declared field as a **list** over the samples of a group (same order)
and returns one result per sample: a number, a ``{"reward": ...}`` dict, a ``RewardResult``,
``NOT_APPLICABLE``, or ``None`` (inside a returned list ``None`` can only be deliberate, so it
means "not applicable", as in TRL's and open-r1's reward functions).

Which samples form a group is the caller's: ``calculate_rewards(..., group_by="field")`` groups
samples by the value of a field; the adapters group by what the framework provides (TRL's
``num_generations`` consecutive completions, verl's ``uid``, OpenRLHF's call). A reward declared
``over="batch"`` gets every sample of the call as one group unless the caller groups; one
declared ``over="group"`` (the default) needs a grouping and says so when it has none.
"""

from __future__ import annotations

import functools
import inspect
import math
import pickle
from collections.abc import Callable, Coroutine, Hashable, Mapping, Sequence
from typing import Any, ClassVar, Literal

from rewardkit.calculate import (
    CONFIGURATION_ERRORS,
    add_note,
    check_samples,
    complete_results,
    run_pulling,
)
from rewardkit.errors import MissingFieldError, RewardError, RewardShapeError
from rewardkit.execution import ExecutionMode, SampleFailure, SampleRunner
from rewardkit.registry import Registration, register
from rewardkit.results import NotApplicable, RewardResult
from rewardkit.rewards import (
    FieldBinding,
    _declared_extra_keys,
    as_reward,
    reduce_by_reference,
    source_file,
)

Over = Literal["group", "batch"]


class GroupingError(RewardError, ValueError):
    """Samples cannot be grouped as a group reward needs: no grouping given for a reward declared
    ``over="group"``, or a sample without (or with an unhashable) value of the ``group_by`` field."""


def _definition_line(function: Callable[..., Any]) -> int:
    code = getattr(function, "__code__", None)
    return code.co_firstlineno if code is not None else 0


class GroupReward:
    """A reward scored over a group of samples at once; what ``@group_reward`` returns.

    ``reward.invoke_group(samples)`` (a list of field mappings) returns one ``RewardResult`` per
    sample (a coroutine of that list when the function is async). Called directly with lists,
    ``reward(final_response=[...], answer=[...])`` does the same. ``.name``, ``.is_async``,
    ``.parameters``, ``.over`` and ``__wrapped__`` describe it.
    """

    is_group: ClassVar[bool] = True
    """Marks group rewards for code that must not import this module (``as_reward``)."""

    def __init__(
        self,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        over: Over = "group",
        auto_register: bool = True,
        extra_keys: Sequence[str] | Mapping[str, Any] = (),
    ) -> None:
        if not callable(function):
            raise TypeError(f"@group_reward needs a function, got {function!r}")
        if over not in ("group", "batch"):
            raise ValueError(f"group reward over= must be 'group' or 'batch', got {over!r}")
        default_name = getattr(function, "__name__", type(function).__name__)
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise TypeError(
                f"reward name must be a non-empty string, got {name!r} (for {default_name!r})"
            )
        functools.update_wrapper(self, function)
        self.name: str = name or default_name
        self.over: Over = over
        self.extra_keys = _declared_extra_keys(extra_keys, self.name)
        self.is_async = inspect.iscoroutinefunction(function)
        self.binding = FieldBinding(function, self.name)
        self.parameters = self.binding.parameters
        self.registration = Registration(
            name=self.name,
            reward=self,
            module=getattr(function, "__module__", None) or "__main__",
            qualname=getattr(function, "__qualname__", default_name),
            line=_definition_line(function),
        )
        if auto_register:
            register(self.registration)

    # -- fields -----------------------------------------------------------------------------

    def columns(self, samples: Sequence[Mapping[str, Any]]) -> dict[str, list[Any]]:
        """The keyword arguments for one call: each declared field as a list over ``samples``.

        A required field missing from any sample raises ``MissingFieldError`` naming the sample;
        an optional one must be in every sample or in none (a column cannot have holes).
        """
        binding = self.binding
        names: Sequence[str]
        if binding.accepts_all:
            names = (
                [key for key in samples[0] if all(key in sample for sample in samples)]
                if samples
                else []
            )
            names = [*names, *(name for name in binding.required if name not in names)]
        else:
            names = binding.parameters
        kwargs: dict[str, list[Any]] = {}
        for name in names:
            holders = [name in sample for sample in samples]
            if all(holders):
                kwargs[name] = [sample[name] for sample in samples]
                continue
            lacking = holders.index(False)
            if name in binding.required:
                raise binding.missing_field_error(samples[lacking], unsupplied=[name])
            if any(holders):
                raise MissingFieldError(
                    f"group reward {self.name!r} ({binding.location}): optional field {name!r} is in "
                    f"some samples of the group but not in sample {lacking}; a group reward's field "
                    "must be in every sample of the group or in none",
                    reward_name=self.name,
                    parameter=name,
                    available=sorted(samples[lacking]),
                    suggestion=None,
                )
        return kwargs

    # -- results ----------------------------------------------------------------------------

    def results(self, raw: object, size: int) -> list[RewardResult]:
        """Validate what the function returned for a group of ``size`` samples."""
        if (
            isinstance(raw, (str, bytes, Mapping))
            or not hasattr(raw, "__len__")
            or not hasattr(raw, "__iter__")
        ):
            raise RewardShapeError(
                f"group reward {self.name!r} returned {type(raw).__name__}; expected a list with one "
                f"result per sample of the group ({size})"
            )
        values = list(raw)  # type: ignore[call-overload]
        if len(values) != size:
            raise RewardShapeError(
                f"group reward {self.name!r} returned {len(values)} results for a group of {size} samples; "
                "return one per sample, in the samples' order"
            )
        out: list[RewardResult] = []
        for index, value in enumerate(values):
            if value is None:
                out.append(NotApplicable("the group reward returned None for this sample"))
                continue
            if hasattr(value, "item") and getattr(value, "ndim", None) == 0:
                value = value.item()  # an element of a numpy array or tensor
            try:
                out.append(RewardResult.from_raw(value, reward_name=self.name))
            except RewardError as exc:
                raise type(exc)(f"{exc} (the result for sample {index} of the group)") from None
        return out

    # -- calling ----------------------------------------------------------------------------

    def invoke_group(
        self, samples: Sequence[Mapping[str, Any]]
    ) -> list[RewardResult] | Coroutine[Any, Any, list[RewardResult]]:
        """Score ``samples`` (one group) at once: a list of results, or a coroutine of one."""
        raw = self.__wrapped__(**self.columns(samples))
        if self.is_async:
            return self._results_later(raw, len(samples))
        return self.results(raw, len(samples))

    async def _results_later(
        self, pending: Coroutine[Any, Any, Any], size: int
    ) -> list[RewardResult]:
        return self.results(await pending, size)

    def invoke(self, fields: Mapping[str, Any]) -> Any:
        """Refuse a single sample: a group reward scores a group (a silent group of one would
        make a group-relative reward constant)."""
        raise TypeError(
            f"reward {self.name!r} is a group reward: it scores the samples of a group at once; "
            "compute it with calculate_rewards(..., group_by='<field>') or an adapter that groups "
            "(to_trl, verl's rewardkit reward manager, to_openrlhf), or call it with lists of fields"
        )

    def __call__(self, *args: Any, **columns: Sequence[Any]) -> Any:
        if args:
            raise TypeError(f"group reward {self.name!r} takes lists of fields by keyword only")
        sizes = {name: len(values) for name, values in columns.items()}
        if len(set(sizes.values())) > 1:
            raise ValueError(
                f"group reward {self.name!r}: the field lists differ in length: {sizes}"
            )
        size = next(iter(sizes.values()), 0)
        samples = [
            {name: values[index] for name, values in columns.items()} for index in range(size)
        ]
        return self.invoke_group(samples)

    def __repr__(self) -> str:
        kind = "async group reward" if self.is_async else "group reward"
        return f"<{kind} {self.name!r} over {self.over} ({', '.join(self.parameters)}) at {self.binding.location}>"

    def __reduce__(self) -> tuple[Any, ...]:
        qualname = self.__dict__.get("__qualname__")
        if qualname is None or "<locals>" in qualname:
            raise pickle.PicklingError(
                f"group reward {self.name!r} ({self.binding.location}) is defined inside a function and "
                "cannot be found again in another process; decorate a function defined at module level"
            )
        return reduce_by_reference(self.__module__, qualname, source_file(self.__wrapped__))


def group_reward(
    function: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    over: Over = "group",
    auto_register: bool = True,
    extra_keys: Sequence[str] | Mapping[str, Any] = (),
) -> Any:
    """Make a group reward: ``@group_reward``, ``@group_reward(over="batch")``, ``@group_reward(name=...)``.

    The function receives each declared field as a list over the group's samples and returns
    one result per sample (see the module docstring). ``over="group"``: the samples of one
    prompt (GRPO's group); ``over="batch"``: every sample of the call unless the caller groups.
    ``extra_keys``: the extras each sample's result carries, for the adapters' fixed result
    schema (``rewardkit.schema``; returns of lists are not read): none unless declared, an
    undeclared extra being dropped there with a warning naming it.
    """
    options: dict[str, Any] = {
        "name": name,
        "over": over,
        "auto_register": auto_register,
        "extra_keys": extra_keys,
    }
    if function is not None:
        return GroupReward(function, **options)

    def decorate(inner: Callable[..., Any]) -> GroupReward:
        return GroupReward(inner, **options)

    return decorate


def is_group_reward(reward: object) -> bool:
    """Whether ``reward`` scores groups of samples (a ``GroupReward``, a composition with one)."""
    return getattr(type(reward), "is_group", False) is True


def _group_key(value: Any, index: int, group_by: str) -> Hashable:
    if isinstance(value, float) and math.isnan(value):
        raise GroupingError(f"samples[{index}][{group_by!r}] is NaN, which cannot identify a group")
    try:
        hash(value)
    except TypeError:
        raise GroupingError(
            f"samples[{index}][{group_by!r}] is a {type(value).__name__}, which cannot identify a group "
            "(group by a hashable field: a prompt id, a uid, the prompt text)"
        ) from None
    return value  # type: ignore[no-any-return]


def group_indices(
    samples: Sequence[Mapping[str, Any]], group_by: str | None, *, reward_name: str, over: Over
) -> list[list[int]]:
    """The samples' indices by group, groups in order of first appearance.

    ``group_by=None``: one group of every sample for a reward declared ``over="batch"``, a
    ``GroupingError`` for one declared ``over="group"`` (scoring a batch as one group would
    silently give wrong group-relative rewards).
    """
    if group_by is None:
        if over == "group":
            raise GroupingError(
                f"group reward {reward_name!r} scores the samples of one prompt together: pass "
                "group_by='<field>' naming the field that identifies the group (a prompt id, the "
                "prompt), or declare it @group_reward(over='batch') to score a whole batch at once"
            )
        return [list(range(len(samples)))] if samples else []
    groups: dict[Hashable, list[int]] = {}
    for index, sample in enumerate(samples):
        if group_by not in sample:
            raise GroupingError(
                f"samples[{index}] has no field {group_by!r} to group by (reward {reward_name!r}); "
                f"its fields: {', '.join(sorted(sample)) or '(none)'}"
            )
        groups.setdefault(_group_key(sample[group_by], index, group_by), []).append(index)
    return list(groups.values())


def consecutive_groups(total: int, size: int) -> list[list[int]]:
    """Indices in runs of ``size`` (TRL's ``num_generations`` completions of one prompt are
    consecutive); a remainder that does not fill a run is a group of its own."""
    if size < 1:
        raise ValueError(f"a group size must be positive, got {size!r}")
    return [list(range(start, min(start + size, total))) for start in range(0, total, size)]


class GroupCall:
    """A group reward seen as a reward of one call per group: ``invoke({"samples": [...]})`` is
    ``invoke_group`` of those samples. What lets groups run on the per-sample path
    (``SampleRunner``): the same execution modes (``"process"`` included), timeouts, and failure
    rules (``StopIteration``, ``SystemExit``, a reward's own ``CancelledError`` are recorded as
    ``RewardAbortedError``; only ``KeyboardInterrupt`` propagates)."""

    is_group: ClassVar[bool] = True  # as_reward leaves it as it is (in a worker process too)
    binding = None  # a call ships its samples whole

    def __init__(self, reward: Any) -> None:
        self.reward = reward
        self.name: str = reward.name
        self.is_async: bool = reward.is_async
        self.timeout: float | None = getattr(reward, "timeout", None)
        self.execution: ExecutionMode | None = getattr(reward, "execution", None)
        self.__wrapped__ = getattr(reward, "__wrapped__", None) or type(reward)
        """What defines the reward (a worker process loads its module as the caller did)."""

    def invoke(self, call: Mapping[str, Any]) -> Any:
        return self.reward.invoke_group(call["samples"])

    def __reduce__(self) -> tuple[Any, ...]:
        return (GroupCall, (self.reward,))


class GroupCallReference:
    """Finds a ``GroupCall`` in a worker process through an adapter's ``RewardReference``."""

    def __init__(self, reference: Any) -> None:
        self.reference = reference

    def resolve(self) -> GroupCall:
        return GroupCall(as_reward(self.reference.resolve()))


def group_runner(
    reward: Any,
    *,
    execution: ExecutionMode | None = None,
    timeout: float | None = None,
    configuration: tuple[type[BaseException], ...] = CONFIGURATION_ERRORS,
    reference: Any = None,
) -> SampleRunner:
    """The runner of ``reward``'s group calls: ``await runner.run({"samples": group}, where)``
    returns one ``RewardResult`` per sample or raises ``SampleFailure``. A sync group reward
    runs in ``reward_threads`` unless ``execution`` (or the reward) says otherwise."""
    return SampleRunner(
        GroupCall(reward),
        execution=execution,
        timeout=timeout,
        untimed="thread",
        place="the group of {}",
        configuration=configuration,
        reference=None if reference is None else GroupCallReference(reference),
    )


def describe_group(indices: Sequence[int]) -> str:
    """``samples[0, 1, 2]``: the samples of a group, for error messages."""
    shown = ", ".join(str(index) for index in indices[:8])
    return f"samples[{shown}{', ...' if len(indices) > 8 else ''}]"


async def calculate_group_rewards(
    reward: Any,
    samples: Sequence[Mapping[str, Any]],
    *,
    group_by: str | None,
    concurrency: int,
    timeout: float | None,
    on_error: Literal["raise", "record"],
    execution: ExecutionMode | None = None,
) -> list[RewardResult]:
    """``calculate_rewards`` for a group reward: samples grouped by ``group_by`` (see
    :func:`group_indices`), each group scored in one call (under ``execution`` and ``timeout``,
    as a sample is: :func:`group_runner`), at most ``concurrency`` groups at once; results keep
    the samples' order. A failing group fails each of its samples (``on_error="record"``:
    ``RewardResult(0.0, {"error": ...})``)."""
    check_samples(reward, samples)
    groups = group_indices(samples, group_by, reward_name=reward.name, over=reward.over)
    if not groups:
        return []
    runner = group_runner(reward, execution=execution, timeout=timeout)
    results: list[RewardResult | None] = [None] * len(samples)
    record = on_error == "record"

    async def run_group(indices: list[int]) -> None:
        where = describe_group(indices)
        try:
            scored = await runner.run({"samples": [samples[index] for index in indices]}, where)  # type: ignore[arg-type]
        except SampleFailure as failure:
            if not record:
                add_note(
                    failure.error,
                    f"while computing group reward {reward.name!r} on the group of {where}",
                )
                raise failure.error from None
            failed = RewardResult(0.0, {"error": failure.text})
            scored = [failed] * len(indices)
        except CONFIGURATION_ERRORS as exc:
            add_note(exc, f"while computing group reward {reward.name!r} on the group of {where}")
            raise
        for index, result in zip(indices, scored):
            results[index] = result

    await run_pulling(groups, run_group, workers=min(concurrency, len(groups)), name=reward.name)
    return complete_results(results, reward.name, record)


__all__ = [
    "GroupCall",
    "GroupReward",
    "GroupingError",
    "Over",
    "calculate_group_rewards",
    "consecutive_groups",
    "group_indices",
    "group_reward",
    "group_runner",
    "is_group_reward",
]
