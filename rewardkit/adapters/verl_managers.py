"""verl reward managers that give a ``to_verl`` reward what ``compute_score`` alone cannot:
the prompt, the response's token ids, and its group.

verl's own managers call ``compute_score(data_source, solution_str, ground_truth, extra_info)``
with the decoded response only. These managers read the rest of the batch row and give the
reward the predefined fields ``prompt`` (``raw_prompt``'s last user message, or the decoded
prompt), ``completion``, ``trajectory`` (``raw_prompt``'s messages and the response),
``completion_ids`` and ``completion_length`` (the response's valid token ids), and the task
field ``uid`` (verl's id of a prompt's group). Group rewards are scored over the samples of one
``uid``. Select them in verl's config, keeping ``custom_reward_function`` pointed at the
``to_verl`` adapter:

* the reward loop (verl's trainer): ``reward.reward_manager.source=importlib
  reward.reward_manager.module.path=pkg://rewardkit.adapters.verl_managers
  reward.reward_manager.name=RewardkitRewardLoopManager``;
* the classic managers (``verl.workers.reward_manager``): importing this module registers
  ``rewardkit`` (``get_reward_manager_cls("rewardkit")``).

Importing this module imports verl.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from verl import DataProto
from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase
from verl.workers.reward_manager import register
from verl.workers.reward_manager.abstract import AbstractRewardManager

from rewardkit.adapters.base import Scored
from rewardkit.adapters.messages import AdapterInputError
from rewardkit.adapters.verl import VerlReward

logger = logging.getLogger("rewardkit.adapters")

DEFAULT_GROUP_WAIT = 600.0
"""Seconds the reward loop manager waits for the rest of a group's samples (verl's agent loop
sends each sample as its rollout finishes) before failing the group."""


def adapter_of(compute_score: Any) -> tuple[VerlReward, dict[str, Any]]:
    """The ``to_verl`` adapter behind verl's ``compute_score`` (verl wraps the loaded function in
    a ``functools.partial`` with the config's ``reward_kwargs``), and those kwargs."""
    reward_kwargs: dict[str, Any] = {}
    target = compute_score
    if (
        isinstance(target, functools.partial)
        and len(target.args) == 2
        and isinstance(target.args[1], Mapping)
    ):
        target, reward_kwargs = target.args[0], dict(target.args[1])
    if not isinstance(target, VerlReward):
        raise TypeError(
            "rewardkit's verl reward managers score a rewardkit reward: point "
            "reward.custom_reward_function at a `to_verl(...)` adapter (e.g. compute_score = "
            f"to_verl(my_reward)), not at {target!r}"
        )
    return target, reward_kwargs


def row_fields(
    adapter: VerlReward,
    data: DataProto,
    index: int,
    tokenizer: Any,
    reward_kwargs: Mapping[str, Any],
) -> Any:
    """The reward fields of row ``index`` of a verl batch (an ``AdapterInputError`` if it cannot be mapped)."""
    batch, extra = data.batch, data.non_tensor_batch
    prompt_width = batch["prompts"].shape[-1]
    mask = batch["attention_mask"][index]
    prompt_ids = batch["prompts"][index][prompt_width - int(mask[:prompt_width].sum()) :]
    response_ids = batch["responses"][index][: int(mask[prompt_width:].sum())].tolist()
    extra_info = dict(extra["extra_info"][index] or {}) if "extra_info" in extra else {}
    if "__num_turns__" in extra:
        extra_info["num_turns"] = extra["__num_turns__"][index]
    reward_model = extra["reward_model"][index] if "reward_model" in extra else {}
    raw_prompt = extra["raw_prompt"][index] if "raw_prompt" in extra else None
    return adapter.fields(
        extra["data_source"][index] if "data_source" in extra else None,
        tokenizer.decode(response_ids, skip_special_tokens=True),
        (reward_model or {}).get("ground_truth"),
        extra_info,
        reward_kwargs,
        where=f"batch row {index}",
        prompt=tokenizer.decode(prompt_ids, skip_special_tokens=True),
        prompt_messages=None if raw_prompt is None else list(raw_prompt),
        completion_ids=response_ids,
        uid=extra["uid"][index] if "uid" in extra else None,
    )


def uid_groups(fields: Sequence[Any]) -> list[list[int]]:
    """Row indices by ``uid`` (rows that could not be mapped, or have no uid, are groups of one)."""
    groups: dict[Any, list[int]] = {}
    for index, row in enumerate(fields):
        uid = row.get("uid") if isinstance(row, Mapping) else None
        groups.setdefault(("uid", uid) if uid is not None else ("row", index), []).append(index)
    return list(groups.values())


@register("rewardkit")
class RewardkitRewardManager(AbstractRewardManager):
    """verl's classic reward manager interface (``verl.workers.reward_manager``), whole batch at once:
    per-sample rewards with the prompt and token ids, group rewards over each ``uid``."""

    def __init__(
        self,
        tokenizer: Any,
        num_examine: int = 0,
        compute_score: Any = None,
        reward_fn_key: str = "data_source",
        **reward_kwargs: Any,
    ) -> None:
        self.tokenizer = tokenizer
        self.num_examine = num_examine
        self.adapter, kwargs = adapter_of(compute_score)
        self.reward_kwargs = {**kwargs, **reward_kwargs}

    def __call__(self, data: DataProto, return_dict: bool = False) -> Any:
        import torch

        fields = [
            row_fields(self.adapter, data, index, self.tokenizer, self.reward_kwargs)
            for index in range(len(data))
        ]
        scored = self.adapter.score_samples(fields, lambda: uid_groups(fields))
        results = self.adapter.results(scored)
        reward_tensor = torch.zeros_like(data.batch["responses"], dtype=torch.float32)
        prompt_width = data.batch["prompts"].shape[-1]
        lengths = data.batch["attention_mask"][:, prompt_width:].sum(dim=-1)
        extra_info: dict[str, list[Any]] = defaultdict(list)
        for index, result in enumerate(results):
            reward_tensor[index, int(lengths[index]) - 1] = result["score"]
            for key, value in result.items():
                extra_info[key].append(value)
        if return_dict:
            return {"reward_tensor": reward_tensor, "reward_extra_info": extra_info}
        return reward_tensor


class _PendingGroup:
    """The samples of one ``uid`` that reached this reward loop worker, waiting to be scored together."""

    def __init__(self) -> None:
        self.fields: list[Any] = []
        self.futures: list[asyncio.Future[Scored]] = []
        self.flushed = False


class RewardkitRewardLoopManager(RewardManagerBase):
    """verl's reward loop manager (``run_single`` per sample): per-sample rewards with the prompt
    and token ids; a group reward waits for the ``actor_rollout_ref.rollout.n`` samples of each
    ``uid`` (or, without that setting, for the samples that arrive together), then scores them at once.

    verl's reward loop sends a batch's samples to ``reward.num_workers`` workers, and its agent
    loop sends each finished rollout to a random one: a group reward therefore needs
    ``reward.num_workers=1`` so that a group's samples meet. A group still incomplete after
    ``group_wait`` seconds fails loudly (each sample gets the fallback with the reason).
    """

    def __init__(
        self,
        config: Any,
        tokenizer: Any,
        compute_score: Any,
        reward_router_address: Any = None,
        reward_model_tokenizer: Any = None,
        group_wait: float = DEFAULT_GROUP_WAIT,
    ) -> None:
        super().__init__(config, tokenizer, compute_score)
        self.adapter, self.reward_kwargs = adapter_of(compute_score)
        self.group_size = _rollout_n(config)
        self.group_wait = group_wait
        self._pending: dict[Any, _PendingGroup] = {}

    async def run_single(self, data: DataProto) -> dict[str, Any]:
        # as verl's managers: a multi-sequence output is scored on its last sequence
        data = data[-1:]
        fields = row_fields(self.adapter, data, 0, self.tokenizer, self.reward_kwargs)
        if self.adapter.is_group:
            scored = await self._score_in_group(fields)
        elif self.adapter.reward.is_async:
            scored = await self.adapter.score_one_async(fields)
        else:  # as verl's own managers run a sync compute_score: off the worker's event loop
            scored = await asyncio.get_running_loop().run_in_executor(
                None, self.adapter.score_one, fields
            )
        result = self.adapter.result(scored)
        return {"reward_score": result["score"], "reward_extra_info": dict(result)}

    async def _score_in_group(self, fields: Any) -> Scored:
        uid = fields.get("uid") if isinstance(fields, Mapping) else None
        if uid is None:
            return (await self.adapter.score_groups_async([fields], [[0]]))[0]
        group = self._pending.get(uid)
        if group is None or group.flushed:
            group = self._pending[uid] = _PendingGroup()
            asyncio.get_running_loop().call_later(self.group_wait, self._flush, uid, group, True)
            if self.group_size is None:  # no expected size: score what arrived in this loop cycle
                asyncio.get_running_loop().call_soon(self._flush, uid, group, False)
        future: asyncio.Future[Scored] = asyncio.get_running_loop().create_future()
        group.fields.append(fields)
        group.futures.append(future)
        if self.group_size is not None and len(group.fields) >= self.group_size:
            self._flush(uid, group, False)
        return await future

    def _flush(self, uid: Any, group: _PendingGroup, late: bool) -> None:
        if group.flushed:
            return
        group.flushed = True
        if self._pending.get(uid) is group:
            del self._pending[uid]
        members = list(range(len(group.fields)))
        if late:
            error = AdapterInputError(
                f"verl group uid={uid!r}: {len(members)} of {self.group_size} samples reached this reward "
                f"worker within {self.group_wait} s; a group reward needs every sample of a group in one "
                "worker: set reward.num_workers=1"
            )
            samples: list[Any] = [error] * len(members)
        else:
            samples = group.fields
        task = asyncio.ensure_future(self.adapter.score_groups_async(samples, [members]))
        task.add_done_callback(functools.partial(_deliver, group.futures))


def _deliver(futures: list[asyncio.Future[Scored]], task: asyncio.Future[list[Scored]]) -> None:
    for index, future in enumerate(futures):
        if future.done():
            continue
        if task.cancelled():
            future.cancel()
        elif task.exception() is not None:
            future.set_exception(task.exception())  # type: ignore[arg-type]
        else:
            future.set_result(task.result()[index])


def _rollout_n(config: Any) -> int | None:
    """``actor_rollout_ref.rollout.n`` (samples per prompt) when the config has it."""
    try:
        value = config.actor_rollout_ref.rollout.n
    except (AttributeError, KeyError, TypeError):
        return None
    return int(value) if isinstance(value, int) and value > 0 else None


__all__ = ["RewardkitRewardLoopManager", "RewardkitRewardManager", "adapter_of", "row_fields"]
