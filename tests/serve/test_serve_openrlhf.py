"""Acceptance: OpenRLHF's own HTTP reward path against `rewardkit serve`, with two server URLs.

OpenRLHF 0.11.2 (installed with --no-deps: its GPU stack does not install on CPU) is run as
shipped: ``SingleTurnAgentExecutor`` posts each rollout to ``--reward.remote_url``'s URLs through
``_fetch_rewards_via_http`` (sharding a batch over them, rotating them across rollouts), its
``_process_response_into_experience`` turns each answer into an ``Experience``, and its batching
(``concat_experiences``, ``split_experience_batch``, ``make_experience_batch``) stacks the info
by key: where a hand-written server's ragged extras crashed it. Failing samples come first, on
fresh servers, 20 times. Only vLLM and OpenRLHF's vLLM engine module, which the module imports but
this path never calls, are stubs; the model is a canned engine and a character tokenizer built here.
"""

from __future__ import annotations

import asyncio
import sys
import types
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import ThreadServer

from rewardkit.serve import RewardSpec, ServeConfig, create_app

PROMPT = "<|im_start|>user\nWhat is 6*7?<|im_end|>\n<|im_start|>assistant\n"
LABEL = "42"
# (response, reward, acc, length, error): failing samples first, as real runs have them.
ROLLOUTS = [
    ("boom<|im_end|>", 0.0, 0.0, 0.0, 1.0),  # the reward raises
    ("none<|im_end|>", 0.0, 0.0, 0.0, 1.0),  # it returns None
    ("hang<|im_end|>", 0.0, 0.0, 0.0, 1.0),  # past the per-sample timeout
    ("42<|im_end|>", 1.0, 1.0, 2.0, 0.0),
    ("41<|im_end|>", 0.0, 0.0, 2.0, 0.0),
    (" 42 <|im_end|>", 1.0, 1.0, 2.0, 0.0),
]


def openrlhf() -> SimpleNamespace:
    """OpenRLHF's modules on this path; vLLM is stubbed (imported at module level, never called)."""
    pytest.importorskip("torch")
    try:
        import openrlhf  # noqa: F401
    except ImportError:
        if __import__("os").environ.get("CI") == "true":
            pytest.fail("openrlhf is not installed; .ci/test-all installs openrlhf==0.11.2 with --no-deps")
        pytest.skip("openrlhf is not installed (pip install --no-deps openrlhf==0.11.2)")
    # samples_generator imports vLLM's SamplingParams and OpenRLHF's vLLM engine module, whose
    # import needs vLLM itself; the reward path uses neither.
    for name, attributes in {
        "vllm": {"SamplingParams": SimpleNamespace},
        "openrlhf.trainer.ray.vllm_engine": {"batch_vllm_engine_call": None, "create_vllm_engines": None},
    }.items():
        if name not in sys.modules:
            stub = types.ModuleType(name)
            stub.__dict__.update(attributes)
            sys.modules[name] = stub
    from openrlhf.trainer.ppo_utils import experience
    from openrlhf.trainer.ppo_utils.samples_generator import SamplesGenerator
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    return SimpleNamespace(
        Executor=SingleTurnAgentExecutor,
        to_experience=SamplesGenerator._process_response_into_experience,
        Experience=experience.Experience,
        split=experience.split_experience_batch,
        make_batch=experience.make_experience_batch,
    )


class CharacterTokenizer:
    """The two calls OpenRLHF's executor makes of a Hugging Face tokenizer, one id per character."""

    pad_token_id = 0

    def __call__(self, text: str, add_special_tokens: bool = False, return_tensors: str = "pt") -> Any:
        import torch

        return {"input_ids": torch.tensor([[ord(character) for character in text]])}

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = False) -> str:
        return "".join(chr(token) for token in ids)


class CannedEngine:
    """vLLM's engine for one rollout: generates ``text``."""

    def __init__(self, text: str) -> None:
        self.text = text

    async def generate(self, prompt_token_ids: list[int], params: Any, multi_modal_data: Any = None) -> Any:
        output = SimpleNamespace(token_ids=[ord(c) for c in self.text], text=self.text, finish_reason="stop", logprobs=None)
        return SimpleNamespace(outputs=[output])


def served_app() -> Any:
    return create_app(ServeConfig(rewards=(RewardSpec.parse("serve_rewards:exact"),), timeout=1.0))


async def rollouts(orl: SimpleNamespace, executor: Any) -> list[dict[str, Any]]:
    """OpenRLHF's rollouts: one executor call per prompt, all at once, failing ones started first."""
    params = SimpleNamespace(max_tokens=64, logprobs=None)
    tokenizer = CharacterTokenizer()
    calls = [executor.execute(PROMPT, LABEL, params, 512, tokenizer, CannedEngine(text)) for text, *_ in ROLLOUTS]
    return list(await asyncio.gather(*calls))


def check_first_requests(orl: SimpleNamespace, urls: list[str]) -> None:
    """The very first request each fresh server sees holds only failing samples (one batch,
    sharded one sample per server): its answer still has every extra_logs key."""
    executor = orl.Executor(remote_rm_url=urls)
    queries = [PROMPT + ROLLOUTS[0][0], PROMPT + ROLLOUTS[1][0]]
    answers = asyncio.run(executor._fetch_rewards_via_http(queries, [PROMPT] * 2, [LABEL] * 2))
    assert len(answers) == 2, "one answer per server"
    for answer in answers:
        assert answer == {
            "rewards": [0.0],
            "scores": [0.0],
            "extra_logs": {"acc": [0.0], "length": [0.0], "error": [1.0]},
        }


def check_training_batch(orl: SimpleNamespace, urls: list[str]) -> None:
    """Rollouts through the executor, then OpenRLHF's own experience batching."""
    executor = orl.Executor(remote_rm_url=urls)
    outputs = asyncio.run(rollouts(orl, executor))
    experiences = [orl.to_experience(None, output, max_len=512) for output in outputs]
    batch = orl.Experience.concat_experiences(experiences, pad_token_id=0)
    size = len(ROLLOUTS)
    assert batch.rewards.flatten().tolist() == [rollout[1] for rollout in ROLLOUTS]
    for index, key in enumerate(("acc", "length", "error"), start=2):
        assert batch.info[key].flatten().tolist() == [rollout[index] for rollout in ROLLOUTS], key
    assert set(batch.info) == {"response_clip_ratio", "reward", "score", "acc", "length", "error"}
    items = orl.split(batch)  # raised "Size of info[acc] (3) does not match batch_size (6)" on ragged extras
    assert len(items) == size
    again = orl.make_batch(items)  # the replay buffer's batches: info values per sample
    assert [float(value) for value in again.info["acc"]] == [rollout[2] for rollout in ROLLOUTS]


@pytest.mark.slow
def test_openrlhf_http_path_with_two_fresh_servers_failing_samples_first_20_times() -> None:
    orl = openrlhf()
    for _ in range(20):
        with ThreadServer(served_app()) as first, ThreadServer(served_app()) as second:
            urls = [first + "/get_reward", second + "/get_reward"]
            check_first_requests(orl, urls)
            check_training_batch(orl, urls)


@pytest.mark.slow
def test_openrlhf_http_path_against_the_command(start_server) -> None:
    """The same, against two `rewardkit serve` processes (one of them with two workers)."""
    orl = openrlhf()
    one = start_server("serve_rewards:exact", "--timeout", "1")
    two = start_server("serve_rewards:exact", "--timeout", "1", "--workers", "2")
    urls = [one.url + "/get_reward", two.url + "/get_reward"]
    check_first_requests(orl, urls)
    check_training_batch(orl, urls)
