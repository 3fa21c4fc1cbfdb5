"""TRL: the prompt, the completion's messages and token ids, group rewards over each prompt's
completions, "not applicable" and weighted sums, in the adapter and in a real
``GRPOTrainer.train()`` (2 steps on CPU; tiny model and tokenizer built here)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from adapter_testing import require_module
from tiny_models import word_tokenizer

from rewardkit import NOT_APPLICABLE, RewardResult, group_reward, reward, weighted_sum
from rewardkit.adapters import to_trl
from rewardkit.shaping import SoftOverlongPunishment, soft_overlong_punishment_score

SEEN: list[dict[str, Any]] = []
GROUPS: list[list[str]] = []


@reward(name="trl_sees_fields", auto_register=False)
def sees_fields(
    final_response: str, prompt: str, completion: list[dict[str, Any]], completion_ids: list[int], completion_length: int
) -> float:
    SEEN.append(
        {"prompt": prompt, "completion": completion, "ids": completion_ids, "length": completion_length, "final": final_response}
    )
    return float(completion_length)


@group_reward(name="trl_group_rank", auto_register=False)
def group_rank(final_response: list[str], prompt: list[str]) -> list[float]:
    """Each completion's share of its group's words; records the groups it was given."""
    GROUPS.append(list(prompt))
    total = sum(len(text.split()) for text in final_response) or 1
    return [len(text.split()) / total for text in final_response]


@reward(name="trl_only_even", auto_register=False)
def only_even(final_response: str, answer: str) -> Any:
    """Not applicable to odd answers (open-r1's "skip the example")."""
    if int(answer) % 2:
        return NOT_APPLICABLE
    return RewardResult(float(answer in final_response.split()), {"checked": True})


def test_prompt_completion_messages_and_token_ids() -> None:
    SEEN.clear()
    adapter = to_trl(sees_fields)
    prompts = [[{"role": "system", "content": "be brief"}, {"role": "user", "content": "what is 6 times 7"}]] * 2
    completions = [
        [
            {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "mul", "arguments": {"a": 6, "b": 7}}}]},
            {"role": "tool", "name": "mul", "content": "42"},
            {"role": "assistant", "content": "it is 42"},
        ],
        [{"role": "assistant", "content": "42"}],
    ]
    assert adapter(prompts=prompts, completions=completions, completion_ids=[[5, 6, 7, 8], [9]]) == [4.0, 1.0]
    first, second = SEEN
    assert first["prompt"] == "what is 6 times 7"  # the chat prompt's last user message
    assert first["completion"] == completions[0]  # the multi-turn completion, tool call and result kept
    assert first["final"] == "it is 42"
    assert (first["ids"], first["length"]) == ([5, 6, 7, 8], 4)
    assert second["completion"] == [{"role": "assistant", "content": "42"}]


def test_a_group_reward_gets_the_completions_of_each_prompt() -> None:
    GROUPS.clear()
    adapter = to_trl(group_rank, group_size=2)
    prompts = ["p1", "p1", "p2", "p2", "p1", "p1"]  # TRL repeats each prompt num_generations times in a row
    rewards = adapter(prompts=prompts, completions=["a", "a b b", "x", "y", "one", "two"], completion_ids=None)
    assert sorted(GROUPS) == [["p1", "p1"], ["p1", "p1"], ["p2", "p2"]]  # groups are scored concurrently
    assert rewards == [0.25, 0.75, 0.5, 0.5, 0.5, 0.5]


def test_not_applicable_is_none_for_trl_and_not_a_failure() -> None:
    logged: dict[str, Any] = {}
    adapter = to_trl(only_even)
    rewards = adapter(
        prompts=["q", "q"],
        completions=["4", "3"],
        answer=["4", "3"],
        log_extra=lambda column, values: logged.__setitem__(column, values),
        log_metric=lambda name, value: logged.__setitem__(name, value),
    )
    assert rewards == [1.0, None]
    assert logged["trl_only_even/error"] == [None, None]
    assert logged["trl_only_even/failure_rate"] == 0.0
    assert adapter.stats.failures == 0


def test_soft_overlong_punishment_equals_trls_own() -> None:
    trl = require_module("trl", "the frameworks extra installs TRL, whose soft overlong punishment is compared")
    from trl.rewards import get_soft_overlong_punishment

    theirs = get_soft_overlong_punishment(max_completion_len=16, soft_punish_cache=4)
    ours = to_trl(SoftOverlongPunishment(16, 4))
    ids = [[1] * length for length in (0, 5, 12, 13, 14, 16, 17, 40)]
    assert ours(prompts=["p"] * len(ids), completions=["c"] * len(ids), completion_ids=ids) == theirs(completion_ids=ids)
    assert [soft_overlong_punishment_score(len(i), 16, 4) for i in ids] == theirs(completion_ids=ids)
    assert trl.__version__


PROMPTS = [("what is 6 times 7", "42"), ("what is 2 plus 2", "4"), ("what is 9 minus 1", "8"), ("what is 3 times 3", "9")]
WORDS = {word for prompt, answer in PROMPTS for word in f"{prompt} {answer} the answer is".split()}


def test_grpo_trainer_with_group_length_skip_and_weighted_rewards(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trl = require_module("trl", "the frameworks extra installs TRL, whose GRPOTrainer is run here")
    datasets = require_module("datasets", "TRL's trainer takes a datasets.Dataset")
    transformers = require_module("transformers", "TRL's trainer trains a transformers model")
    monkeypatch.setenv("WANDB_MODE", "disabled")

    tokenizer = word_tokenizer(WORDS)
    config = transformers.LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64,
        pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
    )
    transformers.set_seed(0)
    model = transformers.LlamaForCausalLM(config)
    dataset = datasets.Dataset.from_list([{"prompt": prompt, "answer": answer} for prompt, answer in PROMPTS])

    GROUPS.clear()
    SEEN.clear()
    overlong = to_trl(SoftOverlongPunishment(max_completion_length=4, soft_punish_cache=2), name="overlong")
    grouped = to_trl(group_rank)
    skipping = to_trl(only_even)
    lengths = to_trl(sees_fields)
    total = to_trl(weighted_sum([only_even, group_rank], [1.0, 0.0], name="total"))
    logged: list[dict[str, Any]] = []

    class KeepLogs(transformers.TrainerCallback):  # type: ignore[misc]
        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kwargs: Any) -> None:
            logged.append(dict(logs or {}))

    args = trl.GRPOConfig(
        output_dir=str(tmp_path), use_cpu=True, max_steps=2, per_device_train_batch_size=4, num_generations=2,
        max_completion_length=4, learning_rate=1e-3, logging_steps=1, save_strategy="no", report_to="none",
        seed=0, dataloader_num_workers=0, reward_weights=[1.0, 1.0, 1.0, 0.0, 1.0],
    )
    trainer = trl.GRPOTrainer(
        model=model, reward_funcs=[overlong, grouped, skipping, lengths, total], args=args,
        train_dataset=dataset, processing_class=tokenizer, callbacks=[KeepLogs()],
    )
    trainer.train()
    assert trainer.state.global_step == 2

    # the group reward saw TRL's groups: num_generations completions of one prompt each
    assert GROUPS
    assert all(len(group) == 2 and group[0] == group[1] for group in GROUPS)
    # the token ids TRL generated reached the reward, and the overlong punishment follows them
    assert all(item["length"] == len(item["ids"]) <= 4 for item in SEEN)
    table = trainer._logs
    lengths_logged = list(table["rewards"]["trl_sees_fields"])
    assert [float(value) for value in table["rewards"]["overlong"]] == [
        soft_overlong_punishment_score(int(length), 4, 2) for length in lengths_logged
    ]
    # "not applicable": NaN in TRL's table for odd answers, never counted as a failure
    skipped = [value for value in table["rewards"]["trl_only_even"] if math.isnan(value)]
    assert skipped
    assert skipping.stats.failures == 0
    # the weighted sum logs each component; the metric-only one (weight 0) does not count
    extra = table["extra"]
    assert set(extra) >= {"total/trl_only_even", "total/trl_group_rank", "total/trl_only_even/checked", "total/error"}
    for value, even, share in zip(table["rewards"]["total"], extra["total/trl_only_even"], extra["total/trl_group_rank"]):
        assert share is not None
        assert (math.isnan(value) and even is None) or value == even
    steps = [entry for entry in logged if "rewards/total/mean" in entry]
    assert len(steps) == 2
    assert all(math.isfinite(entry["reward"]) for entry in steps)
