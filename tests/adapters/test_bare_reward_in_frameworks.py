"""A bare ``@reward`` handed to a framework fails on its first call with an error that names the
adapter to wrap it with, in each framework's real code."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from adapter_testing import require_module
from test_verl_managers import make_batch, run_reward_loop, verl_config
from tiny_models import word_tokenizer

from rewardkit.runtime.define.errors import MissingFieldError

HERE = Path(__file__).resolve().parent
BARE_FILE = HERE / "bare_reward_file.py"


def test_verl_reward_loop_says_to_wrap_with_to_verl(verl: Any, event_loop_of_a_worker: asyncio.AbstractEventLoop) -> None:
    from test_verl_managers import ROWS
    from verl.trainer.ppo.reward import load_reward_manager

    tokenizer = word_tokenizer(word for row in ROWS for text in row for word in text.split())
    manager = load_reward_manager(verl_config("naive", path=BARE_FILE), tokenizer)
    with pytest.raises(MissingFieldError, match=r"verl's compute_score.*import to_verl") as caught:
        run_reward_loop(manager, make_batch(verl, tokenizer))
    assert "solution_str" in str(caught.value)


def test_trl_trainer_says_to_wrap_with_to_trl(tmp_path: Path) -> None:
    trl = require_module("trl", "the frameworks extra installs TRL")
    datasets = require_module("datasets", "TRL's trainer takes a datasets.Dataset")
    transformers = require_module("transformers", "TRL's trainer trains a transformers model")
    from bare_reward_file import math_like
    from test_trl_trainer import grpo_config, tiny_trainer_parts

    model, tokenizer, dataset = tiny_trainer_parts(transformers, datasets)
    trainer = trl.GRPOTrainer(
        model=model, reward_funcs=[math_like], args=grpo_config(trl, tmp_path), train_dataset=dataset, processing_class=tokenizer
    )
    with pytest.raises(MissingFieldError, match=r"TRL's reward function.*import to_trl"):
        trainer.train()


def test_openrlhf_reward_file_says_to_wrap_with_to_openrlhf() -> None:
    require_module("openrlhf", "installed with --no-deps by .ci/test-all")
    agent = require_module("openrlhf.utils.agent", "OpenRLHF's reward-file path")
    executor = agent.SingleTurnAgentExecutor(remote_rm_url=str(BARE_FILE))
    with pytest.raises(TypeError, match=r"OpenRLHF's reward_func\(queries, prompts, labels\).*to_openrlhf"):
        asyncio.run(executor._fetch_rewards_via_func(["Q: 42"], ["Q: "], ["42"]))
