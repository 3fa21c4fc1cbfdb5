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
import pickle
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, ClassVar, Literal

from rewardkit.runtime.define.errors import MissingFieldError, RewardError, RewardShapeError
from rewardkit.runtime.define.registry import Registration, register
from rewardkit.runtime.define.results import NotApplicable, RewardResult
from rewardkit.runtime.define.rewards import (
    FieldBinding,
    _declared_extra_keys,
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
    schema (``rewardkit.runtime.define.schema``; returns of lists are not read): none unless declared, an
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


__all__ = ["GroupReward", "GroupingError", "Over", "group_reward"]
