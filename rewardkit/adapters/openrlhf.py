"""OpenRLHF: ``reward_func(queries, prompts, labels)`` for ``--reward.remote_url path/to/file.py``.

OpenRLHF (0.11) imports ``reward_func`` from the file and calls it from a worker thread
(``asyncio.to_thread``) with one-element lists: ``queries`` (the prompt and the response,
decoded with ``skip_special_tokens=False``), ``prompts`` (the prompt text after the chat
template) and ``labels`` (the dataset's ``--data.label_key`` column). It expects a dict with
``rewards`` (for advantages), ``scores`` (for dynamic filtering) and ``extra_logs`` (one value
per sample per key, logged to wandb), as tensors. It never awaits: the adapter is sync and
runs an async reward to completion itself.

Field mapping (defaults; change with ``field_map``): ``final_response`` is the query minus its
prompt, without trailing end-of-turn markers (``stop_strings``), or its last assistant turn when
the response holds several (an agent's multi-turn rollout rendered with ChatML or Llama 3
markers: ``completion`` is then those turns as messages, else the response as one assistant
message); ``trajectory`` is the prompt as a user message followed by ``completion``; ``prompt``
is the prompt's text; a label holding several fields
(a dict, or a JSON object in a string) gives one task field per key, any other label becomes
``answer`` (``field_map={"label": ...}`` renames it); a ``None`` label (no ``--data.label_key``)
supplies no field, so a reward that requires it raises ``MissingFieldError`` instead of scoring
``None`` as a wrong answer.

Results: ``rewards`` and ``scores`` (the same values), ``extra_logs`` and ``error`` (1.0 for a
failed sample); ``torch`` tensors when torch is importable (``return_tensors=None``), lists
otherwise. ``extra_logs`` holds every extra of the reward's result schema (fixed when the adapter
is built) except those known not to be numbers (a string or a container in the returns, or
``str``/``list``/``dict`` declared in ``extra_keys``): OpenRLHF concatenates every sample's info by key, so each key is in every row.
Bools log as 1/0. A failed sample's extras, and a value that is not a finite number, log as
``missing_extra`` (0.0): OpenRLHF averages each info key with ``torch.mean``, where a NaN would
make the logged mean NaN; ``error`` tells the failed rows apart.
"""

from __future__ import annotations

import dataclasses
import importlib
import logging
import math
import types
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from rewardkit.adapters.base import RewardAdapter, Scored, compose_fields
from rewardkit.adapters.messages import (
    COMMON_STOP_STRINGS,
    AdapterInputError,
    chat_turns,
    decode_label,
    last_assistant_text,
    response_from_query,
    strip_stop_strings,
)
from rewardkit.adapters.options import FRAMEWORK_DEFAULT, AdapterOptions
from rewardkit.runtime.batch.metrics import as_number
from rewardkit.runtime.define.errors import MissingFieldError

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from rewardkit.adapters.options import AdapterOptionsDict

logger = logging.getLogger("rewardkit.adapters")

OPENRLHF_RESERVED_EXTRAS: Mapping[str, str] = types.MappingProxyType(
    {
        "reward": "OpenRLHF stores the reward under it in each experience's info",
        "score": "OpenRLHF stores the score under it in each experience's info",
        "error": "the adapter reports failures under it",
        "kl": "OpenRLHF logs its KL estimate under it",
        "return": "OpenRLHF logs the return under it",
        "response_clip_ratio": "OpenRLHF logs the clipped-response ratio under it",
        "response_length": "OpenRLHF logs response lengths under it",
        "total_length": "OpenRLHF logs sequence lengths under it",
    }
)
"""Extras names that collide with what OpenRLHF (0.11) itself puts in an experience's info."""


def _torch() -> Any:
    """The ``torch`` module, or ``None`` when it cannot be imported."""
    try:
        return importlib.import_module("torch")
    except ImportError:
        return None


class OpenRLHFReward(RewardAdapter):
    """OpenRLHF ``reward_func`` (sync): see the module docstring for the call and the mapping."""

    framework: ClassVar[str] = "OpenRLHF"
    factory: ClassVar[str] = "to_openrlhf"
    renamed_inputs: ClassVar[Mapping[str, str]] = types.MappingProxyType({"label": "answer"})
    reserved_extras: ClassVar[Mapping[str, str]] = OPENRLHF_RESERVED_EXTRAS
    default_missing_extra: ClassVar[Any] = 0.0

    def __init__(
        self,
        reward: Any,
        *,
        options: AdapterOptions | None = None,
        stop_strings: Sequence[str] = COMMON_STOP_STRINGS,
        return_tensors: bool | None = None,
        **keywords: Unpack[AdapterOptionsDict],
    ) -> None:
        settings = AdapterOptions.build(options, keywords, factory=self.factory)
        missing_extra = settings.missing_extra
        if missing_extra is FRAMEWORK_DEFAULT:
            missing_extra = self.default_missing_extra
        number = as_number(missing_extra)
        if number is None or not math.isfinite(number):
            raise ValueError(
                f"missing_extra must be a finite number for OpenRLHF, whose extra_logs are tensors it "
                f"averages (a NaN would poison the mean); got {missing_extra!r}"
            )
        super().__init__(reward, options=dataclasses.replace(settings, missing_extra=number))
        if self.is_group and self.reward.over == "group":
            # Raised here: OpenRLHF logs and swallows what reward_func raises, leaving samples unrewarded.
            raise self.group_error(
                f"{self.group_hint()} (file and HTTP paths alike), so the samples of a prompt never meet "
                "in one call; a reward declared @group_reward(over='batch') is scored over each call"
            )
        self.stop_strings = tuple(stop_strings)
        self.return_tensors = return_tensors
        self.logged_keys = tuple(
            key for key in self.schema.keys if self.schema.kinds[key] in ("number", "any")
        )
        """The extras in ``extra_logs``: the schema's, less those known not to be numbers."""
        self._warned: set[str] = set()

    def options(self) -> dict[str, Any]:
        return {
            **super().options(),
            "stop_strings": self.stop_strings,
            "return_tensors": self.return_tensors,
        }

    def sample(
        self, query: Any, prompt: Any, label: Any, *, where: str
    ) -> dict[str, Any] | AdapterInputError:
        """The reward fields of one OpenRLHF sample (an ``AdapterInputError`` if it cannot be mapped)."""
        try:
            response = strip_stop_strings(
                response_from_query(query, prompt, where=where), self.stop_strings
            )
        except AdapterInputError as exc:
            return exc
        task: dict[str, Any] = {}
        label_fields = decode_label(label)
        if label_fields is None:
            target = self.mapped("label", "answer")
            if target is not None and label is not None:  # None: no label, a missing field
                task[target] = label
        else:
            for source, value in label_fields.items():
                target = self.mapped(source, source)
                if target is not None:
                    task[target] = value
        completion = chat_turns(response)
        predefined = {
            "final_response": last_assistant_text(completion, where=where),
            "completion": completion,
            "trajectory": [{"role": "user", "content": prompt}, *completion],
            "prompt": prompt,
        }
        return compose_fields(self, task, predefined, where=where)

    def group_hint(self) -> str:
        return "OpenRLHF 0.11 calls reward_func with one sample per call"

    def explain_missing(self, error: MissingFieldError) -> MissingFieldError:
        """Also say where OpenRLHF's labels come from when the label's field is the one missing."""
        explained = super().explain_missing(error)
        target = self.mapped("label", "answer")
        if error.parameter != target:
            return explained
        return MissingFieldError(
            f"{explained}. OpenRLHF sends the dataset column named by --data.label_key as labels "
            f"(over HTTP, the request's \"labels\"); this sample's label is missing or null, so {target!r} "
            "has no value: set --data.label_key <column> (a missing label is never scored as a wrong answer)",
            reward_name=error.reward_name,
            parameter=error.parameter,
            available=error.available,
            suggestion=error.suggestion,
        )

    def log_value(self, key: str, value: Any) -> float:
        """``value`` of extra ``key`` as ``extra_logs`` holds it: a finite number, else ``missing_extra``."""
        number = as_number(value)
        if number is not None and math.isfinite(number):
            return number
        if value is not None and key not in self._warned:
            self._warned.add(key)
            logger.warning(
                "reward %r: extra %r is %r, not a finite number; OpenRLHF's extra_logs holds numbers, so it "
                "logs %r: declare it as text (extra_keys={%r: str, ...}) to leave it out of extra_logs",
                self.__name__,
                key,
                value,
                self.settings.missing_extra,
                key,
            )
        return self.settings.missing_extra  # type: ignore[no-any-return]

    def result(self, scored: Sequence[Scored]) -> dict[str, Any]:
        """OpenRLHF's dict for a batch: ``rewards``, ``scores`` and ``extra_logs`` (the same keys on every call)."""
        rows = [self.schema.conform(item.extras) for item in scored]
        rewards = [float(item.reward) for item in scored]  # type: ignore[arg-type]
        extra_logs = {
            key: [self.log_value(key, row[key]) for row in rows] for key in self.logged_keys
        }
        extra_logs["error"] = [0.0 if item.error is None else 1.0 for item in scored]
        torch = None if self.return_tensors is False else _torch()
        if self.return_tensors and torch is None:
            raise ImportError(
                f"adapter {self.__name__!r}: return_tensors=True but torch cannot be imported"
            )
        if torch is None:
            return {"rewards": rewards, "scores": list(rewards), "extra_logs": extra_logs}
        return {
            "rewards": torch.tensor(rewards, dtype=torch.float32),
            "scores": torch.tensor(rewards, dtype=torch.float32),
            "extra_logs": {
                key: torch.tensor(values, dtype=torch.float32) for key, values in extra_logs.items()
            },
        }

    def samples(
        self, queries: Sequence[Any], prompts: Sequence[Any], labels: Sequence[Any]
    ) -> list[dict[str, Any] | AdapterInputError]:
        """The reward fields of each sample of one call (one query, prompt and label each)."""
        if not len(queries) == len(prompts) == len(labels):
            raise AdapterInputError(
                f"OpenRLHF call: {len(queries)} queries, {len(prompts)} prompts and {len(labels)} labels; "
                "expected one of each per sample"
            )
        return [
            self.sample(query, prompt, label, where=f"OpenRLHF sample {index}")
            for index, (query, prompt, label) in enumerate(zip(queries, prompts, labels))
        ]

    def __call__(
        self, queries: Sequence[Any], prompts: Sequence[Any], labels: Sequence[Any]
    ) -> dict[str, Any]:
        samples = self.samples(queries, prompts, labels)
        return self.result(self.score_samples(samples, lambda: [list(range(len(samples)))]))


def to_openrlhf(
    reward: Any,
    *,
    options: AdapterOptions | None = None,
    stop_strings: Sequence[str] = COMMON_STOP_STRINGS,
    return_tensors: bool | None = None,
    **keywords: Unpack[AdapterOptionsDict],
) -> OpenRLHFReward:
    """Wrap ``reward`` as OpenRLHF's ``reward_func``: in the file given to ``--reward.remote_url``,
    write ``reward_func = to_openrlhf(my_reward)``. ``options`` and the keyword arguments are
    ``AdapterOptions`` (docs/adapters.md; ``missing_extra`` defaults to 0.0 here).

    Or serve it over HTTP, off the training nodes: ``rewardkit serve my_rewards:my_reward`` (or
    ``rewardkit serve file.py:reward_func``, with this adapter's options), then pass OpenRLHF the
    URL form, ``--reward.remote_url http://HOST:8000/get_reward`` (several URLs shard each batch;
    ``.../get_reward/NAME`` picks one of several served rewards). The server answers with exactly
    this adapter's result, as JSON lists (docs/serve.md).

    Always sync (OpenRLHF calls it from a thread and never awaits); an async reward is run to
    completion inside. ``stop_strings``: end-of-turn markers stripped from the response's end.
    ``return_tensors``: ``None`` = tensors when torch imports, lists otherwise (e.g. for JSON).
    """
    return OpenRLHFReward(
        reward,
        options=options,
        stop_strings=stop_strings,
        return_tensors=return_tensors,
        **keywords,
    )
