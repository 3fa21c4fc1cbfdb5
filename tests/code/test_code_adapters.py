"""``code_reward`` under the trainers (issue 35, acceptance): verl's reward loop, TRL's
``GRPOTrainer`` (2 steps on a tiny model built here) and OpenRLHF's reward file and batching,
each with a failing sample first; every score equals ``grade_code`` called directly.

The frameworks' real code runs, with the adapter tests' helpers (tests/adapters). Their
word-level tokenizers split on spaces only here, so a fenced program's newlines survive the
round trip through token ids."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "adapters"))  # the adapters' helpers

from adapter_testing import require_module
from code_samples import MALFORMED, SAMPLES, as_label, direct_scores, fenced
from test_openrlhf_batching import (
    agent_module,
    experience_module,
    numbers,
    samples_generator,
    sampling_params,
)
from test_trl_trainer import grpo_config
from test_verl_managers import collect, make_batch, run_reward_loop, verl_config
from tiny_models import tiny_llama, word_tokenizer

from rewardkit.adapters import to_trl
from rewardkit.code import code_reward, grade_code

HERE = Path(__file__).resolve().parent
REWARD_FILE = HERE / "code_reward_file.py"
TESTS_FIELD = next(name for name in code_reward.parameters if name != "final_response")
PROMPT = "write the program"

__all__ = ["agent_module", "experience_module", "samples_generator"]  # fixtures, used by name


def space_tokenizer(words: Any) -> Any:
    """The adapters' word-level tokenizer, split on spaces only (a token keeps its newlines)."""
    from tokenizers import pre_tokenizers

    tokenizer = word_tokenizer(words)
    tokenizer.backend_tokenizer.pre_tokenizer = pre_tokenizers.Split(" ", "removed")
    return tokenizer


def sample_words() -> set[str]:
    responses = [response for response, _ in (MALFORMED, *SAMPLES)]
    return {word for response in responses for word in response.split(" ")} | set(PROMPT.split())


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    tokenizer = space_tokenizer(sample_words())
    for response, _ in SAMPLES:
        assert tokenizer.decode(tokenizer.encode(response)) == response
    return tokenizer


# -- verl: the reward loop's manager, as each RewardLoopWorker runs it ----------------------


@pytest.mark.parametrize("manager_name", ["naive", "dapo"])
def test_verl_reward_loop_scores_code_as_grade_code_does(tokenizer: Any, manager_name: str) -> None:
    verl = require_module("verl", "the frameworks extra installs verl, whose reward loop runs here")
    from verl.trainer.ppo.reward import load_reward_manager

    samples = [MALFORMED, *SAMPLES]  # two failing samples first: tests that cannot be read, a crash
    rows = [(PROMPT, response, json.dumps(tests)) for response, tests in samples]
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        manager = load_reward_manager(verl_config(manager_name, path=REWARD_FILE), tokenizer)
        data = make_batch(verl, tokenizer, rows=rows)
        outputs = run_reward_loop(manager, data)
    finally:
        asyncio.set_event_loop(None)
        loop.close()
    expected = [0.0, *direct_scores()]
    assert expected[1] == 0.0
    assert [output["reward_score"] for output in outputs] == pytest.approx(expected)
    extra = collect(outputs)
    assert all(len(values) == len(samples) for values in extra.values())  # every key, every row
    assert extra["error"][0]  # the unreadable tests, named
    assert not any(extra["error"][1:])


def test_verl_classic_manager_scores_a_malformed_test_first(tokenizer: Any) -> None:
    """A sample whose tests cannot be read fails (scored 0.0, its error in the extras) and the
    batch goes on; verl's naive manager scores the rows in order, so it is the first."""
    verl = require_module(
        "verl", "the frameworks extra installs verl, whose reward managers run here"
    )
    from verl.trainer.ppo.reward import get_custom_reward_fn
    from verl.workers.reward_manager import get_reward_manager_cls

    samples = [MALFORMED, *SAMPLES[1:4]]
    rows = [(PROMPT, response, json.dumps(tests)) for response, tests in samples]
    compute_score = get_custom_reward_fn(verl_config("naive", path=REWARD_FILE))
    manager = get_reward_manager_cls("naive")(
        tokenizer=tokenizer, num_examine=0, compute_score=compute_score
    )
    output = manager(make_batch(verl, tokenizer, rows=rows), return_dict=True)
    scores = output["reward_tensor"].sum(dim=-1).tolist()
    assert scores == pytest.approx([0.0, *direct_scores(samples[1:])])
    errors = list(output["reward_extra_info"]["error"])
    assert errors[0]  # the malformed tests, named
    assert not any(errors[1:])


# -- TRL: GRPOTrainer, 2 steps ----------------------------------------------------------------


TRL_PROGRAMS = [
    fenced(program) for program in ("print(int(input())*2)", "print(42)", "print(1/0)", "print(10)")
]
"""Whole programs the tiny model's vocabulary holds as single tokens (no spaces in them)."""


def test_grpo_trainer_trains_two_steps_on_code_reward(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each completion of the tiny model is one token: a whole fenced program, or a prompt word.
    The first prompt's tests no program passes, so the first samples fail; each step's
    completions table (TRL's log_completions) holds what the adapter scored."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the model and tokenizer are built here
    monkeypatch.setenv("WANDB_MODE", "disabled")
    trl = require_module("trl", "the frameworks extra installs TRL, whose GRPOTrainer is run here")
    datasets = require_module("datasets", "TRL's trainer takes a datasets.Dataset")
    require_module("transformers", "TRL's trainer trains a transformers model")
    pandas = require_module("pandas", "TRL writes its completions table with pandas")
    tokenizer = space_tokenizer({*TRL_PROGRAMS, *PROMPT.split()})
    never = {"inputs": ["1\n"], "outputs": ["never printed\n"]}
    suites = [
        never,
        SAMPLES[1][1],
        {"inputs": ["4\n"], "outputs": ["42\n"]},
        {"inputs": ["5\n"], "outputs": ["10\n"]},
    ]
    rows = [{"prompt": f"{PROMPT}", TESTS_FIELD: json.dumps(tests)} for tests in suites]
    adapter = to_trl(code_reward)
    args = grpo_config(
        trl, tmp_path, shuffle_dataset=False, log_completions=True, num_completions_to_print=0
    )
    args.max_completion_length = 1
    trainer = trl.GRPOTrainer(
        model=tiny_llama(tokenizer),
        reward_funcs=[adapter],
        args=args,
        train_dataset=datasets.Dataset.from_list(rows),
        processing_class=tokenizer,
    )
    trainer.train()
    assert trainer.state.global_step == 2
    assert (adapter.stats.calls, adapter.stats.failures) == (8, 0)
    scored: list[tuple[str, float, float]] = []
    for step in (
        1,
        2,
    ):  # no shuffling: step 1 is rows 0 and 1, step 2 rows 2 and 3, 2 completions each
        table = pandas.read_parquet(tmp_path / "completions" / f"completions_{step:05d}.parquet")
        suites_of_step = [suites[2 * step - 2]] * 2 + [suites[2 * step - 1]] * 2
        for completion, value, tests in zip(
            table["completion"], table[code_reward.name], suites_of_step
        ):
            scored.append((completion, float(value), grade_code(completion, tests).fraction))
    assert len(scored) == 8
    assert scored[0][1] == 0.0  # the first sample fails
    assert [value for _, value, _ in scored] == pytest.approx([direct for _, _, direct in scored])
    assert any(completion in TRL_PROGRAMS for completion, _, _ in scored), (
        scored
    )  # programs were run


# -- OpenRLHF: the reward file path and its batching --------------------------------------------


class CodeEngine:
    """The LLM engine the executor awaits: each prompt's response, as vLLM's output shape."""

    def __init__(self, tokenizer: Any, responses: dict[str, str]) -> None:
        self.tokenizer = tokenizer
        self.responses = {
            tuple(tokenizer.encode(prompt)): text for prompt, text in responses.items()
        }

    async def generate(
        self, prompt_token_ids: list[int], sampling_params: Any, multi_modal_data: Any = None
    ) -> Any:
        import types

        text = self.responses[tuple(prompt_token_ids)]
        output = types.SimpleNamespace(
            token_ids=self.tokenizer.encode(text), text=text, finish_reason="stop", logprobs=None
        )
        return types.SimpleNamespace(outputs=[output])


def test_openrlhf_reward_file_and_batching(
    agent_module: Any, experience_module: Any, samples_generator: Any
) -> None:
    samples = [MALFORMED, *SAMPLES]  # two failing samples first: tests that cannot be read, a crash
    prompts = [f"{PROMPT} {index}" for index in range(len(samples))]
    tokenizer = space_tokenizer(sample_words() | {str(index) for index in range(len(samples))})
    engine = CodeEngine(
        tokenizer, {prompt: response for prompt, (response, _) in zip(prompts, samples)}
    )
    executor = agent_module.SingleTurnAgentExecutor(remote_rm_url=str(REWARD_FILE))

    async def rollouts() -> list[dict[str, Any]]:  # one after another: the failing sample first
        return [
            await executor.execute(
                prompt, as_label(TESTS_FIELD, tests), sampling_params(), 64, tokenizer, engine
            )
            for prompt, (_, tests) in zip(prompts, samples)
        ]

    outputs = asyncio.run(rollouts())
    expected = [0.0, *direct_scores()]
    assert [float(output["reward"]) for output in outputs] == pytest.approx(expected)
    make = samples_generator.SamplesGenerator._process_response_into_experience
    items = [make(None, output, max_len=64) for output in outputs]
    Experience = experience_module.Experience
    batch = Experience.concat_experiences(items, tokenizer.pad_token_id)
    assert numbers(batch.info["reward"]) == pytest.approx(expected)
    assert numbers(batch.info["error"]) == [1.0] + [0.0] * len(SAMPLES)
    keys = set(batch.info)
    singles = experience_module.split_experience_batch(batch)
    assert len(singles) == len(samples)
    assert all(set(single.info) == keys for single in singles)
    again = experience_module.make_experience_batch(singles)
    assert numbers(again.info["reward"]) == pytest.approx(expected)
