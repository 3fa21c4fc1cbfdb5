"""``to_openrlhf`` inside OpenRLHF 0.11.2's own code, with a failing sample finishing first.

OpenRLHF's GPU stack (flash-attn, DeepSpeed, vLLM) does not install on CPU, so .ci/test-all
installs its wheel with ``--no-deps`` and these tests run its modules as shipped:

* its reward-file path and its HTTP path: ``SingleTurnAgentExecutor.execute`` (``utils/agent.py``)
  loads ``reward_func`` from the file given to ``--reward.remote_url`` and calls it from a thread
  (``_fetch_rewards_via_func``), or posts to the URLs given there, sharding over two servers
  (``_fetch_rewards_via_http``, aiohttp). Only the LLM engine is a stand-in: it returns each
  prompt's response as token ids;
* the step that turns each rollout's reward into an ``Experience`` (``SamplesGenerator.
  _process_response_into_experience``, ``trainer/ppo_utils/samples_generator.py``; that module
  imports ``vllm`` names at import time, so a stand-in ``vllm`` module is put in ``sys.modules``
  for the import: no vLLM code runs in it);
* its batching (``trainer/ppo_utils/experience.py``): ``Experience.concat_experiences``,
  ``split_experience_batch`` and ``make_experience_batch``, which raised ``ValueError: Size of
  info[acc] (4) does not match batch_size (5)`` or ``KeyError: 'acc'`` when a failed sample's
  extras came first.

Each path runs 20 times with a fresh adapter (a fresh load of the reward file, fresh servers).
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import types
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from adapter_testing import require_module
from tiny_models import word_tokenizer

from rewardkit.adapters import to_openrlhf

HERE = Path(__file__).resolve().parent
REWARD_FILE = HERE / "gated_rewards.py"
REPETITIONS = 20

# (prompt, response, answer): the failing sample, then right, wrong, right, right.
ROWS = [
    ("what is 9 minus 1", "boom", "8"),
    ("what is 6 times 7", "the answer is 42", "42"),
    ("what is 2 plus 2", "the answer is 5", "4"),
    ("what is 3 times 3", "it is 9", "9"),
    ("what is 1 plus 1", "it is 2", "2"),
]
EXPECTED_REWARDS = [0.0, 1.0, 0.0, 1.0, 1.0]


@pytest.fixture(scope="module")
def agent_module() -> Any:
    require_module("openrlhf", "installed with --no-deps by .ci/test-all: its batching and reward paths are tested here")
    return require_module("openrlhf.utils.agent", "OpenRLHF's reward-file and HTTP reward paths (needs aiohttp)")


@pytest.fixture(scope="module")
def experience_module(agent_module: Any) -> Any:
    return require_module("openrlhf.trainer.ppo_utils.experience", "OpenRLHF's experience batching")


@pytest.fixture(scope="module")
def samples_generator(agent_module: Any) -> Any:
    """OpenRLHF's samples_generator module, imported with a stand-in ``vllm`` (GPU only)."""
    stand_in = types.ModuleType("vllm")
    stand_in.__version__ = "0.29.0"  # type: ignore[attr-defined]
    stand_in.SamplingParams = type("SamplingParams", (), {})  # type: ignore[attr-defined]
    inputs = types.ModuleType("vllm.inputs")
    inputs.TokensPrompt = dict  # type: ignore[attr-defined]
    utils = types.ModuleType("vllm.utils")
    utils.random_uuid = lambda: "uuid"  # type: ignore[attr-defined]
    saved = {name: sys.modules.get(name) for name in ("vllm", "vllm.inputs", "vllm.utils")}
    sys.modules.update({"vllm": stand_in, "vllm.inputs": inputs, "vllm.utils": utils})
    try:
        return require_module("openrlhf.trainer.ppo_utils.samples_generator", "OpenRLHF's rollout -> Experience step")
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


@pytest.fixture(scope="module")
def tokenizer(agent_module: Any) -> Any:
    return word_tokenizer(word for row in ROWS for text in row for word in text.split())


class Engine:
    """The LLM engine the executor awaits: each prompt's response, as vLLM's output shape."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.responses = {tuple(tokenizer.encode(prompt)): response for prompt, response, _ in ROWS}

    async def generate(self, prompt_token_ids: list[int], sampling_params: Any, multi_modal_data: Any = None) -> Any:
        text = self.responses[tuple(prompt_token_ids)]
        output = types.SimpleNamespace(
            token_ids=self.tokenizer.encode(text), text=text, finish_reason="stop", logprobs=None
        )
        return types.SimpleNamespace(outputs=[output])


def sampling_params() -> Any:
    return types.SimpleNamespace(max_tokens=16, logprobs=None)


def label(answer: str, gate: Path | None) -> str:
    """The dataset's label column (``--data.label_key``): the answer and the gate file to wait for."""
    return json.dumps({"answer": answer, "gate": None if gate is None else str(gate)})


async def rollouts(executor: Any, tokenizer: Any, gate: Path) -> list[dict[str, Any]]:
    """Every row's ``execute`` in flight at once; the failing row's (which has no gate) finishes
    before the others score: they wait for the gate the test opens once the failure is in."""
    engine = Engine(tokenizer)
    tasks = [
        asyncio.ensure_future(
            executor.execute(prompt, label(answer, gate if index else None), sampling_params(), 64, tokenizer, engine)
        )
        for index, (prompt, _, answer) in enumerate(ROWS)
    ]
    first = await tasks[0]
    assert not any(task.done() for task in tasks[1:]), "a successful sample finished before the failing one"
    await asyncio.to_thread(gate.touch)
    return [first, *await asyncio.gather(*tasks[1:])]


def experiences(samples_generator: Any, outputs: list[dict[str, Any]]) -> list[Any]:
    """What SamplesGenerator does with each rollout, in the order they finished (failure first)."""
    make = samples_generator.SamplesGenerator._process_response_into_experience
    return [make(None, output, max_len=64) for output in outputs]


def numbers(values: Any) -> list[float]:
    """One float per sample from an info entry: a batched tensor, or a list of per-sample tensors."""
    if isinstance(values, list):
        return [float(value) for value in values]
    return [float(value) for value in values.flatten()]


def check_batching(experience_module: Any, items: list[Any], pad_token_id: int) -> None:
    """OpenRLHF's batching of these experiences: concat, split into samples, batch again."""
    Experience = experience_module.Experience
    batch = Experience.concat_experiences(items, pad_token_id)
    keys = {"response_clip_ratio", "reward", "score", "acc", "error"}
    assert set(batch.info) == keys
    assert numbers(batch.info["reward"]) == EXPECTED_REWARDS
    assert numbers(batch.info["acc"]) == EXPECTED_REWARDS  # failed: 0.0
    assert numbers(batch.info["error"]) == [1.0, 0.0, 0.0, 0.0, 0.0]
    singles = experience_module.split_experience_batch(batch)
    assert len(singles) == len(ROWS)
    assert all(set(single.info) == keys for single in singles)
    again = experience_module.make_experience_batch(singles)
    assert set(again.info) == keys
    assert numbers(again.info["acc"]) == EXPECTED_REWARDS


def test_reward_file_path_failing_sample_first(
    agent_module: Any, experience_module: Any, samples_generator: Any, tokenizer: Any, tmp_path: Path
) -> None:
    for repetition in range(REPETITIONS):
        executor = agent_module.SingleTurnAgentExecutor(remote_rm_url=str(REWARD_FILE))  # loads the file afresh
        assert executor.reward_func is not None
        gate = tmp_path / f"gate-{repetition}"
        outputs = asyncio.run(rollouts(executor, tokenizer, gate))
        assert [float(output["reward"]) for output in outputs] == EXPECTED_REWARDS
        assert outputs[0]["extra_logs"].keys() == {"acc", "error"}  # `pred` is text: not a tensor
        check_batching(experience_module, experiences(samples_generator, outputs), tokenizer.pad_token_id)


class RewardServer:
    """A reward server as a user writes one around ``to_openrlhf`` (OpenRLHF's ``/get_reward``
    protocol), on a free local port, in a thread."""

    def __init__(self) -> None:
        from gated_rewards import gated

        reward_func = to_openrlhf(gated, return_tensors=False)  # a fresh adapter per server

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                info = reward_func(body["query"], body["prompts"], body["labels"])
                payload = json.dumps(info).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/get_reward"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=30)


@pytest.fixture
def servers() -> Iterator[list[RewardServer]]:
    started: list[RewardServer] = []
    yield started
    for server in started:
        server.close()


def test_http_path_two_servers_failing_sample_first(
    agent_module: Any,
    experience_module: Any,
    samples_generator: Any,
    tokenizer: Any,
    tmp_path: Path,
    servers: list[RewardServer],
) -> None:
    for repetition in range(REPETITIONS):
        pair = [RewardServer(), RewardServer()]
        servers.extend(pair)
        executor = agent_module.SingleTurnAgentExecutor(remote_rm_url=[server.url for server in pair])
        gate = tmp_path / f"gate-{repetition}"
        outputs = asyncio.run(rollouts(executor, tokenizer, gate))
        assert [output["reward"] for output in outputs] == [[value] for value in EXPECTED_REWARDS]
        assert all(output["extra_logs"].keys() == {"acc", "error"} for output in outputs)
        check_batching(experience_module, experiences(samples_generator, outputs), tokenizer.pad_token_id)
        for server in pair:
            server.close()
        servers.clear()
