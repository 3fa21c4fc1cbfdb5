"""TRL: a reward function for ``GRPOTrainer`` (and ``RLOOTrainer``, which calls the same way).

TRL (1.x) calls ``reward_func(prompts=..., completions=..., completion_ids=..., **kwargs)``
with one entry per completion, where ``kwargs`` holds every dataset column except
``prompt``/``completion``/``completion_ids`` (each a list), plus ``trainer_state`` (the
``transformers.TrainerState``), ``log_extra(column, values)`` and ``log_metric(name, value)``
(TRL >= 1.0; the adapter uses them when present), and ``environments`` when an
``environment_factory`` is set. It expects a list of floats, ``None`` meaning "not applicable"
(TRL turns it into NaN and leaves this function out for that sample). Async reward functions
are detected through ``inspect.iscoroutinefunction(func.__call__)`` and awaited concurrently.

Field mapping (defaults; change with ``field_map``): ``final_response`` is the completion
(standard data) or the text of the completion's last assistant message (conversational
data, where the completion may also hold tool calls and tool results); ``trajectory`` is
the prompt's messages followed by the completion's (a plain prompt becomes one user message,
a plain completion one assistant message); each list column -> a task field of its name;
``trainer_state`` -> ``trainer_state``; ``environments`` -> ``environment`` (this sample's);
``prompt`` is the prompt's text (a chat prompt's last user message), ``completion`` the
completion's messages, ``completion_ids``/``completion_length`` TRL's token ids and their count.
A group reward is scored over each prompt's ``num_generations`` consecutive completions, the size
taken from ``group_size`` or from the calling trainer; a call that does not tell is refused.
A ``NOT_APPLICABLE`` sample gets ``None``.

Results: the reward per completion (the ``fallback`` on failure, which may be ``None``);
through ``log_metric``: ``<name>/<key>`` (mean over samples) for numeric extras and
``<name>/failure_rate``; through ``log_extra``: a completions-table column ``<name>/<key>`` per
extra of the reward's result schema (fixed when the adapter is built) and ``<name>/error`` (the
failure text or ``None``), the same columns on every batch. A failed sample's extras are
``missing_extra`` (``None``) in the table and are left out of the logged means, which average
the successful samples' numbers only.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from rewardkit.adapters.base import (
    RewardAdapter,
    Scored,
    adapter_class,
    compose_fields,
    sync_face,
)
from rewardkit.adapters.messages import (
    AdapterInputError,
    as_messages,
    last_assistant_text,
    prompt_text,
)
from rewardkit.runtime.batch.groups import consecutive_groups
from rewardkit.runtime.batch.metrics import as_number

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from rewardkit.adapters.options import AdapterOptions, AdapterOptionsDict

TRL_CALLBACK_KWARGS = ("log_extra", "log_metric")
"""Keyword arguments TRL passes that are callbacks for the adapter, never reward fields."""


def trainer_group_size(kwargs: Mapping[str, Any]) -> int | None:
    """The calling trainer's completions per prompt, ``None`` when the call does not tell.

    TRL's ``GRPOTrainer`` and ``RLOOTrainer`` (1.x) pass their own bound ``log_metric`` and
    ``log_extra`` methods: the trainer behind them holds ``num_generations`` (training) and
    ``num_generations_eval`` (evaluation, when its model is not in training mode)."""
    for key in TRL_CALLBACK_KWARGS:
        trainer = getattr(kwargs.get(key), "__self__", None)
        size = getattr(trainer, "num_generations", None)
        if isinstance(size, int) and not isinstance(size, bool) and size > 0:
            if getattr(getattr(trainer, "model", None), "training", True) is False:
                evaluation = getattr(trainer, "num_generations_eval", None)
                size = evaluation if isinstance(evaluation, int) and evaluation > 0 else size
            return size
    return None


def size_from_prompts(prompts: Sequence[Any]) -> tuple[int | None, str]:
    """The group size TRL's layout allows for ``prompts`` when there is exactly one, else
    ``(None, why not)``.

    TRL repeats each prompt ``num_generations`` (at least 2) times in a row, so every run of
    equal prompts is a whole number of groups: the size divides the runs' greatest common
    divisor. Only a prime divisor leaves one choice; a composite one (a run of 4: one group of 4,
    or a prompt the dataset repeats, two groups of 2) or 1 (interleaved prompts) leaves none."""
    runs: list[int] = []
    for index, prompt in enumerate(prompts):
        if runs and prompts[index - 1] == prompt:
            runs[-1] += 1
        else:
            runs.append(1)
    divisor = math.gcd(*runs) if runs else 0
    if divisor < 2:
        return (
            None,
            "its prompts are not runs of equal prompts of one size (interleaved prompts are no groups)",
        )
    if any(divisor % factor == 0 for factor in range(2, math.isqrt(divisor) + 1)):
        return None, (
            f"runs of {divisor} equal prompts may each be one group or several (a dataset that repeats "
            "a prompt puts its groups side by side)"
        )
    return divisor, ""


TRL_DEFAULT_FIELD_MAP: Mapping[str, str | None] = types.MappingProxyType(
    {"environments": "environment"}
)

TRL_RESERVED_EXTRAS: Mapping[str, str] = types.MappingProxyType(
    {
        "error": "the adapter logs failures under <name>/error",
        "failure_rate": "the adapter logs the failure rate under <name>/failure_rate",
    }
)
"""Extras names the TRL adapter's own logging uses."""


class TrlReward(RewardAdapter):
    """TRL reward function (sync): see the module docstring for the call and the mapping."""

    framework: ClassVar[str] = "TRL"
    factory: ClassVar[str] = "to_trl"
    renamed_inputs: ClassVar[Mapping[str, str]] = types.MappingProxyType(
        {"completion": "final_response", **TRL_DEFAULT_FIELD_MAP}
    )
    context_fields: ClassVar[frozenset[str]] = frozenset({"trainer_state", "environment"})
    reserved_extras: ClassVar[Mapping[str, str]] = TRL_RESERVED_EXTRAS
    allows_none_fallback: ClassVar[bool] = True
    not_applicable: ClassVar[float | None] = None

    def __init__(
        self,
        reward: Any,
        *,
        options: AdapterOptions | None = None,
        group_size: int | None = None,
        **keywords: Unpack[AdapterOptionsDict],
    ) -> None:
        if group_size is not None and (
            isinstance(group_size, bool) or not isinstance(group_size, int) or group_size < 1
        ):
            raise ValueError(
                f"group_size must be a positive integer (GRPOConfig.num_generations) or None, got {group_size!r}"
            )
        super().__init__(reward, options=options, **keywords)
        self.group_size = group_size

    def options(self) -> dict[str, Any]:
        return {**super().options(), "group_size": self.group_size}

    def groups(
        self, prompts: Sequence[Any], kwargs: Mapping[str, Any] | None = None
    ) -> list[list[int]]:
        """The completions of each prompt: runs of the group size (``group_size``, else the calling
        trainer's ``num_generations``, else the only size the prompts allow), each of one prompt;
        a batch reward gets the whole call.

        Never guessed from runs of equal prompts: a dataset that repeats a prompt can put two of
        its groups side by side, and interleaved prompts are no groups at all. Raises
        ``TypeError`` (a configuration error, at the first call) when the size is unknown or
        does not fit."""
        if self.reward.over == "batch":
            return [list(range(len(prompts)))] if prompts else []
        size, source = self.call_group_size(prompts, kwargs or {})
        if len(prompts) % size:
            raise self.group_error(
                f"TRL passed {len(prompts)} completions, which do not split into groups of {size} "
                f"({source}); keep per_device_train_batch_size a multiple of num_generations"
            )
        groups = consecutive_groups(len(prompts), size)
        for members in groups:
            if any(prompts[index] != prompts[members[0]] for index in members):
                raise self.group_error(
                    f"TRL's completions {members[0]}..{members[-1]} form one group of {size} "
                    f"({source}) but hold different prompts: TRL repeats each prompt "
                    "num_generations times in a row, so the group size does not match this call"
                )
        return groups

    def call_group_size(self, prompts: Sequence[Any], kwargs: Mapping[str, Any]) -> tuple[int, str]:
        """The group size of one call and where it comes from: ``group_size``, else the calling
        trainer's (they must agree), else the one size the prompts allow (``size_from_prompts``)."""
        trainer_size = trainer_group_size(kwargs)
        if (
            self.group_size is not None
            and trainer_size is not None
            and trainer_size != self.group_size
        ):
            raise self.group_error(
                f"to_trl(..., group_size={self.group_size}) disagrees with the calling trainer's "
                f"num_generations={trainer_size}: drop group_size (the trainer's is used) or make them equal"
            )
        if self.group_size is not None:
            return self.group_size, f"group_size={self.group_size}"
        if trainer_size is not None:
            return trainer_size, "the trainer's num_generations"
        size, problem = size_from_prompts(prompts)
        if size is None:
            raise self.group_error(
                f"its TRL call does not say how many completions each prompt has (TRL's GRPOTrainer and "
                f"RLOOTrainer do; this caller does not), and {problem}: pass "
                "to_trl(..., group_size=<GRPOConfig.num_generations>)"
            )
        return size, "the only size its prompts allow"

    def mapped(self, source: str, default: str | None) -> str | None:
        return super().mapped(source, TRL_DEFAULT_FIELD_MAP.get(source, default))

    def samples(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        kwargs: Mapping[str, Any],
        completion_ids: Sequence[Any] | None = None,
    ) -> list[dict[str, Any] | AdapterInputError]:
        """The reward fields of each completion (an ``AdapterInputError`` for one that cannot be mapped)."""
        size = len(completions)
        if len(prompts) != size:
            raise AdapterInputError(f"TRL call: {len(prompts)} prompts but {size} completions")
        if completion_ids is not None and len(completion_ids) != size:
            raise AdapterInputError(
                f"TRL call: {len(completion_ids)} completion_ids but {size} completions"
            )
        columns: dict[str, Sequence[Any]] = {}
        shared: dict[str, Any] = {}
        for source, value in kwargs.items():
            if source in TRL_CALLBACK_KWARGS:
                continue
            target = self.mapped(source, source)
            if target is None:
                continue
            if isinstance(value, (list, tuple)):
                if len(value) != size:
                    raise AdapterInputError(
                        f"TRL call: column {source!r} has {len(value)} entries but there are {size} completions"
                    )
                columns[target] = value
            else:
                shared[target] = value
        out: list[dict[str, Any] | AdapterInputError] = []
        for index, (prompt, completion) in enumerate(zip(prompts, completions)):
            where = f"TRL completions[{index}]"
            try:
                if isinstance(completion, str):
                    final_response = completion
                else:
                    final_response = last_assistant_text(completion, where=where)
                completion_messages = as_messages(completion, "assistant")
                trajectory = [*as_messages(prompt, "user"), *completion_messages]
                predefined: dict[str, Any] = {
                    "trajectory": trajectory,
                    "completion": completion_messages,
                    "prompt": prompt_text(prompt),
                }
                if completion_ids is not None:
                    ids = [int(token) for token in completion_ids[index]]
                    predefined["completion_ids"] = ids
                    predefined["completion_length"] = len(ids)
            except (AdapterInputError, TypeError, ValueError, KeyError) as exc:
                out.append(
                    exc
                    if isinstance(exc, AdapterInputError)
                    else AdapterInputError(f"{where}: {exc}")
                )
                continue
            task = {**shared, **{target: column[index] for target, column in columns.items()}}
            response_field = self.mapped("completion", "final_response")
            if response_field == "final_response":
                predefined["final_response"] = final_response
            elif response_field is not None:
                task[response_field] = final_response
            out.append(compose_fields(self, task, predefined, where=where))
        return out

    def report(
        self,
        scored: Sequence[Scored],
        log_extra: Callable[[str, list[Any]], Any] | None,
        log_metric: Callable[[str, float], Any] | None,
    ) -> list[float | None]:
        """Send extras and failures to TRL's logging callbacks; the rewards, one per completion."""
        rows = [self.schema.conform(item.extras) for item in scored]
        keys = self.schema.keys
        if log_metric is not None:
            for key in keys:
                values = (
                    as_number(row[key]) for row, item in zip(rows, scored) if item.error is None
                )
                numbers = [number for number in values if number is not None]
                if numbers:
                    log_metric(f"{self.__name__}/{key}", sum(numbers) / len(numbers))
            if scored:
                failures = sum(item.error is not None for item in scored)
                log_metric(f"{self.__name__}/failure_rate", failures / len(scored))
        if log_extra is not None:
            for key in keys:
                log_extra(f"{self.__name__}/{key}", [row[key] for row in rows])
            log_extra(f"{self.__name__}/error", [item.error for item in scored])
        return [item.reward for item in scored]

    async def score_call(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        completion_ids: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        """Score one TRL call: per completion, or by groups for a group reward; the rewards."""
        samples = self.samples(prompts, completions, kwargs, completion_ids)
        scored = await self.score_samples_async(samples, lambda: self.groups(prompts, kwargs))
        return self.report(scored, kwargs.get("log_extra"), kwargs.get("log_metric"))

    __call__ = sync_face(score_call)


async def _trl_reward_func(
    prompts: Sequence[Any],
    completions: Sequence[Any],
    completion_ids: Sequence[Any] | None = None,
    **kwargs: Any,
) -> list[float | None]:
    """The signature TRL sees on the async adapter (never called)."""
    raise NotImplementedError


class AsyncTrlReward(TrlReward, awaitable=_trl_reward_func):
    """TRL reward function as ``async def``: TRL gathers async reward functions on its event loop."""


def to_trl(
    reward: Any,
    *,
    options: AdapterOptions | None = None,
    asynchronous: bool | None = None,
    group_size: int | None = None,
    **keywords: Unpack[AdapterOptionsDict],
) -> TrlReward:
    """Wrap ``reward`` as a TRL reward function (pass it in ``GRPOTrainer(reward_funcs=[...])``);
    ``options`` and the keyword arguments are ``AdapterOptions`` (docs/adapters.md).

    Its ``__name__`` (``name``, default the reward's name) is what TRL logs rewards under.
    ``asynchronous=None`` follows the reward. ``field_map`` maps TRL's names (a dataset
    column, ``completion``, ``trainer_state``, ``environments``) to reward fields (``None`` drops
    one). ``fallback=None`` makes a failed sample "not applicable" for TRL instead of a score.
    ``group_size`` (a group reward): TRL's ``num_generations``; by default taken from the calling
    trainer (TRL 1.x's GRPO and RLOO trainers), and a call that does not tell is refused.
    """
    cls = adapter_class(reward, asynchronous, TrlReward, AsyncTrlReward)
    return cls(reward, options=options, group_size=group_size, **keywords)
