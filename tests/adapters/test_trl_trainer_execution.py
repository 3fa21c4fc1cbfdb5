"""A math_verify reward inside TRL's real ``GRPOTrainer.train()`` (issue 23, item 2): with a
timeout, the adapter's reward threads make math_verify's ``signal.alarm`` fail on every sample
(the error names the mode); ``execution="process"`` grades every sample. 2 steps on CPU, a tiny
Llama and a word-level tokenizer built here (nothing from the hub)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from adapter_testing import require_module
from tiny_models import word_tokenizer

from rewardkit import reward
from rewardkit.adapters import to_trl
from rewardkit.reward_processes import reward_processes

PROMPTS = [("what is 6 times 7", "42"), ("what is 2 plus 2", "4")]
WORDS = {word for prompt, answer in PROMPTS for word in f"{prompt} {answer} the answer is".split()}


@reward(name="math_verify_trl", auto_register=False)
def math_verify_trl(final_response: str, answer: str) -> float:
    """TRL's accuracy reward: math_verify with its default (signal) timeouts."""
    from math_verify import parse, verify

    return float(verify(parse(answer), parse(final_response)))


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("WANDB_MODE", "disabled")
    yield
    reward_processes.shutdown()


def test_grpo_trainer_grades_with_math_verify_only_in_worker_processes(tmp_path: Path) -> None:
    trl = require_module("trl", "the frameworks extra installs TRL, whose GRPOTrainer is run here")
    datasets = require_module("datasets", "TRL's trainer takes a datasets.Dataset")
    transformers = require_module("transformers", "TRL's trainer trains a transformers model")
    require_module("math_verify", "the test extra installs math-verify, the grader under test")

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

    threaded = to_trl(math_verify_trl, name="threaded", timeout=60.0)
    in_process = to_trl(math_verify_trl, name="in_process", timeout=60.0, execution="process")
    args = trl.GRPOConfig(
        output_dir=str(tmp_path),
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
    )
    trainer = trl.GRPOTrainer(
        model=model,
        reward_funcs=[threaded, in_process],
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
    )
    trainer.train()

    assert trainer.state.global_step == 2
    assert (threaded.stats.calls, threaded.stats.failures) == (8, 8)
    assert (in_process.stats.calls, in_process.stats.failures) == (8, 0)
    errors = list(trainer._logs["extra"]["threaded/error"])
    assert errors
    assert all(error.startswith("SignalInThreadError: reward 'math_verify_trl'") for error in errors)
    assert all("execution='thread'" in error and "execution='process'" in error for error in errors)
    assert list(trainer._logs["extra"]["in_process/error"]) == [None] * len(errors)
