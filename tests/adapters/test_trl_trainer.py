"""``to_trl`` inside TRL's real ``GRPOTrainer.train()`` (the ``frameworks`` extra), 2 steps on CPU.

The model is a tiny Llama and the tokenizer a word-level one, both built here: nothing comes from
the hub (``HF_HUB_OFFLINE=1``). Three adapters: a sync reward returning a dict with extras, an
async reward, and a reward that fails on every sample with ``fallback=None``.
"""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Any

import pytest
from adapter_testing import require_module
from tiny_models import word_tokenizer

from rewardkit import reward
from rewardkit.adapters import AsyncTrlReward, TrlReward, to_trl

PROMPTS = [
    ("what is 6 times 7", "42"),
    ("what is 2 plus 2", "4"),
    ("what is 9 minus 1", "8"),
    ("what is 3 times 3", "9"),
]
WORDS = {word for prompt, answer in PROMPTS for word in f"{prompt} {answer} the answer is".split()}


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("WANDB_MODE", "disabled")


@reward(name="trl_contains_answer", auto_register=False)
def contains_answer(final_response: str, answer: str) -> dict[str, Any]:
    """1.0 when the completion contains the answer; extras ``found`` and ``words``."""
    words = final_response.split()
    return {"reward": float(answer in words), "found": answer in words, "words": len(words)}


@reward(name="trl_short", auto_register=False)
async def short(final_response: str) -> float:
    """Async: 1.0 for completions of at most two words."""
    await asyncio.sleep(0)
    return float(len(final_response.split()) <= 2)


@reward(name="trl_judge_down", auto_register=False)
def judge_down(final_response: str, answer: str) -> float:
    """Always fails, like a judge whose API is down."""
    raise RuntimeError("judge API unreachable")


@reward(name="trl_judge_warming_up", auto_register=False)
async def judge_warming_up(final_response: str, answer: str, trainer_state: Any) -> dict[str, Any]:
    """Fails on the first step (a judge still warming up), then answers with ``found`` and ``verdict``."""
    await asyncio.sleep(0)
    if trainer_state.global_step == 0:
        raise RuntimeError("judge warming up")
    found = answer in final_response.split()
    return {"reward": float(found), "found": found, "verdict": "yes" if found else "no"}


def tiny_trainer_parts(transformers: Any, datasets: Any) -> tuple[Any, Any, Any]:
    """A tiny Llama, its word-level tokenizer and the prompts dataset, all built here."""
    tokenizer = word_tokenizer(WORDS)
    config = transformers.LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=64,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    transformers.set_seed(0)
    model = transformers.LlamaForCausalLM(config)
    dataset = datasets.Dataset.from_list([{"prompt": prompt, "answer": answer} for prompt, answer in PROMPTS])
    return model, tokenizer, dataset


def grpo_config(trl: Any, output_dir: Path, **options: Any) -> Any:
    return trl.GRPOConfig(
        output_dir=str(output_dir),
        use_cpu=True,
        max_steps=2,
        per_device_train_batch_size=4,
        num_generations=2,
        max_completion_length=4,
        learning_rate=1e-3,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        seed=0,
        dataloader_num_workers=0,
        **options,
    )


def test_grpo_trainer_trains_two_steps_and_logs_the_adapters(tmp_path: Path) -> None:
    trl = require_module("trl", "the frameworks extra installs TRL, whose GRPOTrainer is run here")
    datasets = require_module("datasets", "TRL's trainer takes a datasets.Dataset")
    transformers = require_module("transformers", "TRL's trainer trains a transformers model")
    model, tokenizer, dataset = tiny_trainer_parts(transformers, datasets)

    dict_reward = to_trl(contains_answer)
    async_reward = to_trl(short)
    failing_reward = to_trl(judge_down, fallback=None)  # documented: a failed sample is "not applicable"
    assert isinstance(dict_reward, TrlReward)
    assert isinstance(async_reward, AsyncTrlReward)

    logged: list[dict[str, Any]] = []

    class KeepLogs(transformers.TrainerCallback):  # type: ignore[misc]
        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kwargs: Any) -> None:
            logged.append(dict(logs or {}))

    args = grpo_config(trl, tmp_path)
    trainer = trl.GRPOTrainer(
        model=model,
        reward_funcs=[dict_reward, async_reward, failing_reward],
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
        callbacks=[KeepLogs()],
    )
    trainer.train()

    assert trainer.state.global_step == 2
    steps = [entry for entry in logged if "rewards/trl_contains_answer/mean" in entry]
    assert len(steps) == 2
    for entry in steps:
        # TRL's own per-function means, under the adapters' names.
        assert 0.0 <= entry["rewards/trl_contains_answer/mean"] <= 1.0
        assert 0.0 <= entry["rewards/trl_short/mean"] <= 1.0
        assert entry["rewards/trl_judge_down/mean"] is None  # every sample "not applicable" (NaN)
        # The adapters' log_metric: numeric extras and the failure rate.
        assert 0.0 <= entry["trl_contains_answer/found"] <= 1.0
        assert 0.0 <= entry["trl_contains_answer/words"] <= 4.0
        assert entry["trl_contains_answer/failure_rate"] == 0.0
        assert entry["trl_short/failure_rate"] == 0.0
        assert entry["trl_judge_down/failure_rate"] == 1.0
        assert math.isfinite(entry["reward"])

    # The adapters' log_extra: completions-table columns, one value per completion.
    completions = list(trainer._logs["completion"])
    extra = {column: list(values) for column, values in trainer._logs["extra"].items()}
    assert len(completions) == 4
    assert len(extra["trl_contains_answer/found"]) == len(extra["trl_contains_answer/words"]) == 4
    assert extra["trl_contains_answer/error"] == [None] * 4
    assert extra["trl_contains_answer/words"] == [len(text.split()) for text in completions]
    assert extra["trl_judge_down/error"] == ["RuntimeError: judge API unreachable"] * 4
    assert all(math.isnan(value) for value in trainer._logs["rewards"]["trl_judge_down"])
    assert (failing_reward.stats.calls, failing_reward.stats.failures) == (8, 8)
    assert (dict_reward.stats.calls, dict_reward.stats.failures) == (8, 0)
    assert async_reward.stats.calls == 8



def test_grpo_trainer_whose_first_batch_fails_keeps_its_completions_table(tmp_path: Path) -> None:
    """The judge fails every sample of step 0, then succeeds: the extras columns are in every
    batch from the start (the result schema), so TRL's completions table (a DataFrame of equal
    columns, written each logging step with log_completions=True) never sees ragged columns.
    20 trainings, each with fresh adapters, sync and async."""
    trl = require_module("trl", "the frameworks extra installs TRL, whose GRPOTrainer is run here")
    datasets = require_module("datasets", "TRL's trainer takes a datasets.Dataset")
    transformers = require_module("transformers", "TRL's trainer trains a transformers model")
    pandas = require_module("pandas", "TRL writes its completions table with pandas")
    for repetition in range(20):
        model, tokenizer, dataset = tiny_trainer_parts(transformers, datasets)
        adapter = to_trl(judge_warming_up, asynchronous=bool(repetition % 2))
        output_dir = tmp_path / f"run-{repetition}"
        args = grpo_config(trl, output_dir, log_completions=True, num_completions_to_print=0)
        trainer = trl.GRPOTrainer(
            model=model, reward_funcs=[adapter], args=args, train_dataset=dataset, processing_class=tokenizer
        )
        trainer.train()
        assert trainer.state.global_step == 2
        columns = ["trl_judge_warming_up/found", "trl_judge_warming_up/verdict", "trl_judge_warming_up/error"]
        first, second = (
            pandas.read_parquet(output_dir / "completions" / f"completions_{step:05d}.parquet") for step in (1, 2)
        )
        # Step 0 failed everywhere, yet its table already has every extras column (filled with None).
        assert set(columns) <= set(first.columns)
        assert list(first["trl_judge_warming_up/error"]) == ["RuntimeError: judge warming up"] * 4
        assert first["trl_judge_warming_up/found"].isna().all()
        # Step 1 answered every sample: its own values, aligned with its completions.
        assert second["trl_judge_warming_up/error"].isna().all()
        verdicts = ["yes" if found else "no" for found in second["trl_judge_warming_up/found"]]
        assert list(second["trl_judge_warming_up/verdict"]) == verdicts
        assert (adapter.stats.calls, adapter.stats.failures) == (8, 4)
