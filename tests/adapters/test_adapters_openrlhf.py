"""OpenRLHF adapter: called exactly as OpenRLHF 0.11's SingleTurnAgentExecutor calls reward_func."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from adapter_rewards import echo_fields, exact, exact_async, picky
from adapter_testing import require_module

from rewardkit.adapters import to_openrlhf
from rewardkit.runtime.define.errors import RewardShapeError

HERE = Path(__file__).resolve().parent

PROMPT = "<|im_start|>user\nWhat is 6*7?<|im_end|>\n<|im_start|>assistant\n"


async def openrlhf_fetch(reward_func: Any, query: str, prompt: str, label: Any) -> Any:
    """OpenRLHF's _fetch_rewards_via_func: a worker thread, one-element lists, positional."""
    results = await asyncio.gather(asyncio.to_thread(reward_func, [query], [prompt], [label]))
    return results[0]


def test_one_element_lists_from_a_worker_thread_give_tensors() -> None:
    torch = require_module("torch", "the OpenRLHF tensor path; install torch==2.13.0 (CPU)")
    reward_func = to_openrlhf(exact)
    query = PROMPT + "42<|im_end|>"  # decoded with skip_special_tokens=False
    info = asyncio.run(openrlhf_fetch(reward_func, query, PROMPT, "42"))
    assert set(info) == {"rewards", "scores", "extra_logs"}
    assert isinstance(info["rewards"], torch.Tensor)
    assert info["rewards"].tolist() == [1.0]
    assert info["scores"].tolist() == [1.0]
    assert {key: value.tolist() for key, value in info["extra_logs"].items()} == {
        "matched": [1.0],
        "length": [2.0],
        "error": [0.0],
    }
    # What OpenRLHF's samples generator then does with them:
    assert torch.tensor([info["rewards"]]).tolist() == [1.0]
    assert all(value.flatten()[0].item() is not None for value in info["extra_logs"].values())


def test_field_mapping_response_and_label() -> None:
    reward_func = to_openrlhf(echo_fields, return_tensors=False)
    fields = reward_func.sample(PROMPT + " 42 <|im_end|>\n", PROMPT, "42", where="test")
    assert isinstance(fields, dict)
    assert fields["final_response"] == " 42"  # the query minus its prompt, end-of-turn marker stripped
    assert fields["answer"] == "42"
    assert fields["trajectory"] == [
        {"role": "user", "content": PROMPT},
        {"role": "assistant", "content": " 42"},
    ]
    info = reward_func([PROMPT + " 42 <|im_end|>\n"], [PROMPT], ["42"])
    assert info["rewards"] == [1.0]
    assert set(info["extra_logs"]) == {"error"}  # `seen` is not a number: tensors cannot hold it


def test_label_holding_several_fields_is_json_decoded() -> None:
    reward_func = to_openrlhf(echo_fields, return_tensors=False)
    label = json.dumps({"answer": "42", "max_length": 100})
    fields = reward_func.sample(PROMPT + "42", PROMPT, label, where="t")
    assert isinstance(fields, dict)
    assert fields["answer"] == "42"
    assert fields["max_length"] == 100
    assert reward_func.sample(PROMPT + "42", PROMPT, {"answer": "7"}, where="t")["answer"] == "7"  # type: ignore[index]
    # A label that only looks like JSON stays one field.
    assert reward_func.sample(PROMPT + "42", PROMPT, "{not json", where="t")["answer"] == "{not json"  # type: ignore[index]


def test_query_with_a_bos_text_before_the_prompt() -> None:
    reward_func = to_openrlhf(exact, return_tensors=False)
    assert reward_func(["<s>" + PROMPT + "42</s>"], [PROMPT], ["42"])["rewards"] == [1.0]


def test_query_without_its_prompt_fails_that_sample() -> None:
    reward_func = to_openrlhf(exact, return_tensors=False)
    info = reward_func(["something else"], [PROMPT], ["42"])
    assert info["rewards"] == [0.0]
    assert info["extra_logs"]["error"] == [1.0]
    assert reward_func.stats.failures == 1


def test_async_reward_runs_inside_the_sync_adapter() -> None:
    reward_func = to_openrlhf(exact_async, return_tensors=False)
    info = asyncio.run(openrlhf_fetch(reward_func, PROMPT + "42", PROMPT, "42"))
    assert info["rewards"] == [1.0]


def test_failure_gives_fallback_and_error_flag() -> None:
    reward_func = to_openrlhf(picky, fallback=-1.0, return_tensors=False)
    info = reward_func([PROMPT + "boom", PROMPT + "1"], [PROMPT, PROMPT], ["1", "1"])
    assert info["rewards"] == [-1.0, 1.0]
    assert info["extra_logs"]["error"] == [1.0, 0.0]


def test_reserved_names() -> None:
    with pytest.raises(RewardShapeError, match="OpenRLHF reserves"):
        to_openrlhf(exact, extra_keys=["score"])


def test_lists_when_torch_cannot_be_imported() -> None:
    script = textwrap.dedent(
        """
        import json, sys
        sys.modules["torch"] = None  # any `import torch` now raises ImportError
        from adapter_rewards import exact
        from rewardkit.adapters import to_openrlhf
        info = to_openrlhf(exact)(["Q: A"], ["Q: "], ["A"])
        print(json.dumps(info))
        """
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), *sys.path])}
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout) == {
        "rewards": [1.0],
        "scores": [1.0],
        "extra_logs": {"matched": [1.0], "length": [1.0], "error": [0.0]},
    }
