"""A math_verify reward inside TRL's real ``GRPOTrainer.train()`` (issue 23, item 2): with a
timeout, the adapter's reward threads make math_verify's ``signal.alarm`` fail on every sample
(the error names the mode); ``execution="process"`` grades every sample. 2 steps on CPU, a tiny
Llama and a word-level tokenizer built here (nothing from the hub)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from adapter_testing import require_module
from tiny_models import tiny_llama, two_step_grpo_config, word_tokenizer

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
    require_module("transformers", "TRL's trainer trains a transformers model")
    require_module("math_verify", "the test extra installs math-verify, the grader under test")

    tokenizer = word_tokenizer(WORDS)
    model = tiny_llama(tokenizer)
    dataset = datasets.Dataset.from_list([{"prompt": prompt, "answer": answer} for prompt, answer in PROMPTS])
    threaded = to_trl(math_verify_trl, name="threaded", timeout=60.0)
    in_process = to_trl(math_verify_trl, name="in_process", timeout=60.0, execution="process")
    args = two_step_grpo_config(str(tmp_path))
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
