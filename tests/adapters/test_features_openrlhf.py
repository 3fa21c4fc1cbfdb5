"""OpenRLHF: the prompt and multi-turn trajectories reach a ``to_openrlhf`` reward through
OpenRLHF's own agent executors (``openrlhf.utils.agent``, as shipped), with a generation engine
stubbed here (vLLM needs a GPU); "not applicable", weighted sums and group rewards."""

from __future__ import annotations

import asyncio
import types
from pathlib import Path
from typing import Any

import pytest
from adapter_testing import require_module
from tiny_models import word_tokenizer

from rewardkit import group_reward, reward
from rewardkit.adapters import to_openrlhf

HERE = Path(__file__).resolve().parent
PROMPT = "<|im_start|>user\nWhat is 6*7?<|im_end|>\n<|im_start|>assistant\n"
FEEDBACK = "<|im_end|>\n<|im_start|>user\nTool says 42<|im_end|>\n<|im_start|>assistant\n"
SEEN: list[dict[str, Any]] = []


@pytest.fixture(scope="module")
def agent() -> Any:
    return require_module("openrlhf.utils.agent", "OpenRLHF's agent executors call reward_func (installed --no-deps)")


class Engine:
    """vLLM's engine as the executors use it: ``await generate(token_ids, params)`` -> outputs[0]."""

    def __init__(self, tokenizer: Any, actions: list[str]) -> None:
        self.tokenizer = tokenizer
        self.actions = list(actions)

    async def generate(self, token_ids: list[int], sampling_params: Any, multi_modal_data: Any = None) -> Any:
        text = self.actions.pop(0)
        output = types.SimpleNamespace(
            token_ids=self.tokenizer.encode(text, add_special_tokens=False), text=text, finish_reason="stop", logprobs=None
        )
        return types.SimpleNamespace(outputs=[output])


def sampling_params() -> Any:
    return types.SimpleNamespace(max_tokens=None, logprobs=None)


def tokenizer_for(*texts: str) -> Any:
    return word_tokenizer(word for text in texts for word in text.split())


@reward(name="orl_records_turns", auto_register=False, extra_keys={"turns": int})
def records_turns(final_response: str, prompt: str, completion: list[dict[str, Any]], trajectory: list[dict[str, Any]]) -> Any:
    SEEN.append({"final": final_response, "prompt": prompt, "completion": completion, "trajectory": trajectory})
    return {"reward": float(final_response.endswith("42")), "turns": len(completion)}


def test_multi_turn_agent_trajectory_reaches_the_reward(agent: Any) -> None:
    SEEN.clear()
    reward_func = to_openrlhf(records_turns, return_tensors=False)

    class ToolAgent(agent.AgentInstanceBase):  # type: ignore[misc]
        """A user's agent: one tool call, then the answer, scored by the rewardkit reward at the end."""

        def __init__(self) -> None:
            self.turn = 0

        async def reset(self, states: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
            self.prompt = states["observation"]
            return {"observation": self.prompt}

        async def step(self, states: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
            import torch

            self.turn += 1
            if self.turn == 1:
                return {"rewards": torch.tensor(0.0), "environment_feedback": FEEDBACK, "done": False}
            query = states["observation_text"] + states["action_text"]
            info = await asyncio.to_thread(reward_func, [query], [self.prompt], [states["label"]])
            return {
                "rewards": torch.tensor(info["rewards"][0]),
                "scores": torch.tensor(info["scores"][0]),
                "environment_feedback": "",
                "done": True,
                "extra_logs": {key: torch.tensor(values[0]) for key, values in info["extra_logs"].items()},
            }

    actions = ["I will call the tool.", "The answer is 42"]
    tokenizer = tokenizer_for(PROMPT, FEEDBACK, *actions)
    executor = agent.MultiTurnAgentExecutor(ToolAgent)
    output = asyncio.run(executor.execute(PROMPT, "42", sampling_params(), 256, tokenizer, Engine(tokenizer, actions)))
    assert output["reward"] == 1.0
    assert float(output["extra_logs"]["turns"]) == 3.0
    (seen,) = SEEN
    assert seen["prompt"] == PROMPT
    assert seen["completion"] == [
        {"role": "assistant", "content": "I will call the tool."},
        {"role": "user", "content": "Tool says 42"},
        {"role": "assistant", "content": "The answer is 42"},
    ]
    assert seen["final"] == "The answer is 42"  # the last assistant turn, not the whole exchange
    assert seen["trajectory"] == [{"role": "user", "content": PROMPT}, *seen["completion"]]


def run_single_turn(agent: Any, label: str, action: str) -> dict[str, Any]:
    tokenizer = tokenizer_for("What is 6*7? the answer is 42 four", action)
    executor = agent.SingleTurnAgentExecutor(remote_rm_url=str(HERE / "openrlhf_features_file.py"))
    return asyncio.run(executor.execute("What is 6*7?", label, sampling_params(), 64, tokenizer, Engine(tokenizer, [action])))  # type: ignore[no-any-return]


def test_single_turn_executor_weighted_sum_and_not_applicable(agent: Any) -> None:
    scored = run_single_turn(agent, "42", "the answer is 42")
    assert float(scored["reward"][0]) == 1.0  # brevity has weight 0: a metric only
    logs = {key: float(value[0]) for key, value in scored["extra_logs"].items()}
    assert logs == {"orl_reads_prompt": 1.0, "orl_reads_prompt/prompt_words": 3.0, "orl_brevity": 0.0, "error": 0.0}
    skipped = run_single_turn(agent, "", "four")  # no label: the weighted component does not apply
    assert float(skipped["reward"][0]) == 0.0  # OpenRLHF needs a number: 0.0 stands for "not applicable"
    logs = {key: float(value[0]) for key, value in skipped["extra_logs"].items()}
    assert logs["error"] == 0.0
    assert logs["orl_brevity"] == 1.0
    assert logs["orl_reads_prompt/prompt_words"] == 0.0


@group_reward(name="orl_batch_share", over="batch", auto_register=False)
def batch_share(final_response: list[str]) -> list[float]:
    return [1.0 / len(final_response)] * len(final_response)


@group_reward(name="orl_group_share", auto_register=False)
def group_share(final_response: list[str]) -> list[float]:
    return [1.0 / len(final_response)] * len(final_response)


def test_group_rewards_under_openrlhf() -> None:
    reward_func = to_openrlhf(batch_share, return_tensors=False)
    info = reward_func([PROMPT + "a", PROMPT + "b"], [PROMPT, PROMPT], ["x", "y"])
    assert info["rewards"] == [0.5, 0.5]  # a batch reward is scored over each call
    with pytest.raises(TypeError, match="one sample per call"):  # at build time: OpenRLHF swallows call errors
        to_openrlhf(group_share)
