"""verl: ``compute_score`` for its reward managers, per sample or batched.

verl (0.9) loads ``custom_reward_function.name`` from ``custom_reward_function.path`` and
calls it in one of two shapes:

* per sample (``naive``, ``dapo``, ``prime`` managers and the reward loop):
  ``compute_score(data_source, solution_str, ground_truth, extra_info, **reward_kwargs)``,
  by keyword (the ``prime`` manager passes the four positionally), expecting a float or a
  dict with ``score``. The reward loop awaits it when ``inspect.iscoroutinefunction`` says so.
* batched (``batch`` manager): ``compute_score(data_sources=..., solution_strs=...,
  ground_truths=..., extra_infos=..., **reward_kwargs)``, expecting a list of those.

The same adapter answers both. Field mapping (defaults; change with ``field_map``):
``solution_str`` -> ``final_response``; ``ground_truth`` -> ``answer``; ``data_source`` ->
``data_source``; each ``extra_info`` key -> a task field of that name; extra keyword
arguments (``reward_kwargs`` from the config) -> task fields of their names. ``trajectory`` and
``completion`` are the single assistant message (verl passes no prompt text to
``compute_score``; rewardkit's reward managers in ``rewardkit.adapters.verl_managers`` add the
prompt, token ids and ``uid`` groups). Where ``ground_truth`` and an ``extra_info`` key map to
one field, ``ground_truth`` wins. A ``NOT_APPLICABLE`` sample scores 0.0 with ``error`` ``""``.

Results: ``{"score": reward, **extras, "error": ""}`` with the same keys on every sample, the
reward's result schema fixed when the adapter is built (``error`` holds the failure text, ``""``
when the sample succeeded), as a ``VerlScore``: a dict whose ``[0]`` is also the score, because
verl's ``prime`` manager reads ``float(result[0])`` from anything that is not a number (verl's own
``(score, metadata)`` tuples). A failed sample's extras are ``missing_extra`` (``None``): verl's
trainer turns each key into a column (``np.array`` of the batch's values) and its validation
metrics average only numbers, so ``None`` is left out of every mean instead of counting as a
measurement. The exception is ``acc`` (verl's ``math_dapo`` returns one; validation makes it the
headline metric): a failed sample's ``acc`` is 0.0, as verl's own managers write for a failed call.
"""

from __future__ import annotations

import types
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from rewardkit.adapters.base import (
    RewardAdapter,
    Scored,
    adapter_class,
    compose_fields,
    sync_face,
)
from rewardkit.adapters.messages import AdapterInputError, prompt_text
from rewardkit.runtime.define.errors import MissingFieldError

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from rewardkit.adapters.options import AdapterOptions, AdapterOptionsDict

MANAGER_FIELDS = ("prompt", "completion_ids", "completion_length")
"""Predefined fields only rewardkit's verl reward managers supply (verl's own pass the response
text only); they also supply the task field ``uid``."""

MANAGER_HINT = (
    "rewardkit's verl reward manager supplies them: reward.reward_manager.source=importlib "
    "reward.reward_manager.module.path=pkg://rewardkit.adapters.verl_managers "
    "reward.reward_manager.name=RewardkitRewardLoopManager (or the classic manager 'rewardkit')"
)

VERL_RESERVED_EXTRAS: Mapping[str, str] = types.MappingProxyType(
    {
        "score": "verl reads the reward from it; the adapter fills it from the result's 'reward': a "
        "verl-style function returning {'score': s, ...} (verl's math_dapo) is wrapped as "
        "return {'reward': result['score'], ...}",
        "reward": "verl's validation collects each sample's score under it",
        "error": "the adapter reports failures under it",
        "uid": "the trainer copies extras into the batch, and uid groups GRPO's samples",
        "data_source": "the trainer copies extras into the batch, where it names each sample's dataset",
        "reward_model": "the trainer copies extras into the batch, where it holds the ground truth",
        "extra_info": "the trainer copies extras into the batch, where it is the dataset's extra_info",
        "index": "the trainer copies extras into the batch, where it is the sample index",
        "raw_prompt": "the trainer copies extras into the batch, where it is the prompt",
        "multi_modal_inputs": "the trainer copies extras into the batch, where it feeds the model",
        "agent_name": "the trainer copies extras into the batch, where it selects the agent loop",
        "request_id": "the trainer copies extras into the batch, where it is the rollout request id",
        "__num_turns__": "the trainer copies extras into the batch, where it counts the turns",
    }
)
"""Extras names verl's reward path uses itself, with the reason (verl 0.9 trainer and managers)."""


class VerlScore(dict):  # type: ignore[type-arg]
    """verl's result dict for one sample; ``result[0]`` is ``result["score"]`` too.

    verl's ``prime`` manager reads ``float(result[0])`` from any result that is not a number (for
    verl's own scorers that return ``(score, metadata)`` tuples); a plain dict would raise
    ``KeyError: 0`` there, and prime then scores the whole batch 0.0. Every other manager reads
    ``result["score"]`` and iterates the keys, where ``0`` never appears.
    """

    __slots__ = ()

    def __missing__(self, key: Any) -> Any:
        if key.__class__ is int and key == 0:
            return self["score"]
        raise KeyError(key)


class VerlReward(RewardAdapter):
    """verl ``compute_score`` (sync): per sample or batched, see the module docstring."""

    framework: ClassVar[str] = "verl"
    factory: ClassVar[str] = "to_verl"
    renamed_inputs: ClassVar[Mapping[str, str]] = types.MappingProxyType(
        {"solution_str": "final_response", "ground_truth": "answer"}
    )
    context_fields: ClassVar[frozenset[str]] = frozenset({"data_source", "uid"})
    reserved_extras: ClassVar[Mapping[str, str]] = VERL_RESERVED_EXTRAS

    def fields(
        self,
        data_source: Any,
        solution_str: Any,
        ground_truth: Any,
        extra_info: Any,
        reward_kwargs: Mapping[str, Any],
        *,
        where: str,
        prompt: str | None = None,
        prompt_messages: list[Any] | None = None,
        completion_ids: list[int] | None = None,
        uid: Any = None,
    ) -> dict[str, Any] | AdapterInputError:
        """The reward fields of one verl sample (an ``AdapterInputError`` if it cannot be mapped).
        ``prompt`` (the decoded prompt), ``prompt_messages`` (``raw_prompt``), ``completion_ids``
        and ``uid`` come from rewardkit's reward managers, which read the whole batch row."""
        if not isinstance(solution_str, str):
            return AdapterInputError(
                f"{where}: solution_str must be a string, got {type(solution_str).__name__}"
            )
        if extra_info is not None and not isinstance(extra_info, Mapping):
            return AdapterInputError(
                f"{where}: extra_info must be a dict or None, got {type(extra_info).__name__}"
            )
        task: dict[str, Any] = {}
        for source, value in (*reward_kwargs.items(), *(extra_info or {}).items()):
            target = self.mapped(source, source)
            if target is not None:
                task[target] = value
        for source, value, default in (
            ("data_source", data_source, "data_source"),
            ("ground_truth", ground_truth, "answer"),
        ):
            target = self.mapped(source, default)
            if target is not None:
                task[target] = value
        if uid is not None and self.mapped("uid", "uid") is not None:
            task[self.mapped("uid", "uid")] = uid  # type: ignore[index]
        response_field = self.mapped("solution_str", "final_response")
        completion = [{"role": "assistant", "content": solution_str}]
        predefined: dict[str, Any] = {"trajectory": completion, "completion": completion}
        if prompt_messages is not None or prompt is not None:
            try:
                predefined["prompt"] = prompt_text(
                    prompt if prompt_messages is None else prompt_messages
                )
            except AdapterInputError as exc:
                return AdapterInputError(f"{where}: raw_prompt: {exc}")
            head = (
                [{"role": "user", "content": prompt}]
                if prompt_messages is None
                else [dict(m) for m in prompt_messages]
            )
            predefined["trajectory"] = [*head, *completion]
        if completion_ids is not None:
            predefined["completion_ids"] = completion_ids
            predefined["completion_length"] = len(completion_ids)
        if response_field == "final_response":
            predefined["final_response"] = solution_str  # type: ignore[assignment]
        elif response_field is not None:
            task[response_field] = solution_str
        return compose_fields(self, task, predefined, where=f"verl {where}")

    # -- results ----------------------------------------------------------------------------

    def failure_fill(self, key: str) -> Any:
        """``acc`` is 0.0 on a failed sample (it was not answered right), not ``missing_extra``:
        verl's validation would otherwise leave it out of the accuracy."""
        return 0.0 if key == "acc" else self.settings.missing_extra

    def result(self, scored: Scored) -> VerlScore:
        """verl's dict for one sample: ``score``, the extras (the schema's keys) and ``error``."""
        return VerlScore(
            {
                "score": scored.reward,
                **self.schema.conform(scored.extras),
                "error": scored.error or "",
            }
        )

    def check_plain_call(self) -> None:
        """Raise, for verl's own managers, what only rewardkit's managers can give the reward."""
        needed = self.__dict__.get("_manager_fields")
        if needed is None:  # worked out once: this runs on every call
            binding = getattr(self.reward, "binding", None)
            needed = self._manager_fields = [
                name for name in (binding.required if binding else ()) if name in MANAGER_FIELDS
            ]
        if needed:
            raise MissingFieldError(
                f"reward {self.__name__!r} requires {', '.join(map(repr, needed))}, which verl's "
                f"reward managers do not pass to compute_score; {MANAGER_HINT}",
                reward_name=self.__name__,
                parameter=needed[0],
                available=["data_source", "final_response", "answer", "trajectory", "completion"],
                suggestion=None,
            )

    def group_hint(self) -> str:
        return f"verl's managers call compute_score per sample; {MANAGER_HINT}"

    def whole_call_group(self, samples: list[Any]) -> list[list[int]]:
        """The batched call (verl's ``batch`` manager) as one group, for a batch reward; a reward
        over each prompt's group needs the ``uid`` that only rewardkit's managers pass."""
        if self.reward.over == "group":
            raise self.group_error(
                f"verl's batch manager passes no uid to group by; {MANAGER_HINT}"
            )
        return [list(range(len(samples)))]

    def results(self, scored: Sequence[Scored]) -> list[VerlScore]:
        """verl's dicts for a batch."""
        return [self.result(item) for item in scored]

    def _batch_inputs(
        self,
        data_sources: Sequence[Any] | None,
        solution_strs: Sequence[Any],
        ground_truths: Sequence[Any] | None,
        extra_infos: Sequence[Any] | None,
        reward_kwargs: Mapping[str, Any],
    ) -> list[dict[str, Any] | AdapterInputError]:
        size = len(solution_strs)
        columns = {
            "data_sources": data_sources,
            "ground_truths": ground_truths,
            "extra_infos": extra_infos,
        }
        for label, column in columns.items():
            if column is not None and len(column) != size:
                raise AdapterInputError(
                    f"verl batch: {label} has {len(column)} entries but solution_strs has {size}"
                )
        return [
            self.fields(
                data_sources[index] if data_sources is not None else None,
                solution_strs[index],
                ground_truths[index] if ground_truths is not None else None,
                extra_infos[index] if extra_infos is not None else None,
                reward_kwargs,
                where=f"batch sample {index}",
            )
            for index in range(size)
        ]

    async def score_call(
        self,
        data_source: Any = None,
        solution_str: Any = None,
        ground_truth: Any = None,
        extra_info: Any = None,
        *,
        data_sources: Sequence[Any] | None = None,
        solution_strs: Sequence[Any] | None = None,
        ground_truths: Sequence[Any] | None = None,
        extra_infos: Sequence[Any] | None = None,
        **reward_kwargs: Any,
    ) -> Any:
        """Score one verl call: one sample (its ``VerlScore``), or a batch (a list of them)."""
        self.check_plain_call()
        if solution_strs is None:
            sample = self.fields(
                data_source, solution_str, ground_truth, extra_info, reward_kwargs, where="sample"
            )
            return self.result(await self.score_one_async(sample))
        samples = self._batch_inputs(
            data_sources, solution_strs, ground_truths, extra_infos, reward_kwargs
        )
        return self.results(
            await self.score_samples_async(samples, lambda: self.whole_call_group(samples))
        )

    __call__ = sync_face(score_call)


async def _verl_compute_score(
    data_source: Any = None,
    solution_str: Any = None,
    ground_truth: Any = None,
    extra_info: Any = None,
    **kwargs: Any,
) -> Any:
    """The signature verl sees on the async adapter (never called)."""
    raise NotImplementedError


class AsyncVerlReward(VerlReward, awaitable=_verl_compute_score):
    """verl ``compute_score`` as ``async def``: the reward loop awaits it on its event loop."""


def to_verl(
    reward: Any,
    *,
    options: AdapterOptions | None = None,
    asynchronous: bool | None = None,
    **keywords: Unpack[AdapterOptionsDict],
) -> VerlReward:
    """Wrap ``reward`` (a reward object, ``BaseReward`` instance, function or registry name) as
    verl's ``compute_score``; assign the result to a module-level name that verl's config points at.
    ``options`` and the keyword arguments are ``AdapterOptions`` (docs/adapters.md).

    ``asynchronous``: ``None`` follows the reward (async reward -> ``async def`` adapter, which
    verl's reward loop awaits); pass ``False`` for the classic managers, which call it without
    awaiting. ``field_map`` maps verl's input names (``solution_str``, ``ground_truth``,
    ``data_source``, an ``extra_info`` key, a ``reward_kwargs`` key) to reward fields (``None``
    drops one). ``timeout`` (seconds per sample), ``on_error`` and ``fallback``: see
    ``rewardkit.adapters.base``. ``extra_keys`` fixes the extras every sample carries (else the
    reward's declared ``extra_keys`` or the keys its returns name; else ``ResultSchemaError`` here);
    ``missing_extra`` fills them on a failed sample (verl's validation skips ``None``).
    """
    cls = adapter_class(reward, asynchronous, VerlReward, AsyncVerlReward)
    return cls(reward, options=options, **keywords)
