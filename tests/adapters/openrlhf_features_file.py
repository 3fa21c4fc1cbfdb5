"""The reward file OpenRLHF's SingleTurnAgentExecutor loads in the feature tests (``--reward.remote_url``)."""

from __future__ import annotations

from typing import Any

from rewardkit import NOT_APPLICABLE, reward, weighted_sum
from rewardkit.adapters import to_openrlhf


@reward(name="orl_reads_prompt", auto_register=False, extra_keys={"prompt_words": int})
def reads_prompt(final_response: str, prompt: str, answer: str) -> Any:
    """Exact match; not applicable when the label is empty; logs the prompt's length in words."""
    if not answer:
        return NOT_APPLICABLE
    return {"reward": float(final_response.split()[-1:] == [answer]), "prompt_words": len(prompt.split())}


@reward(name="orl_brevity", auto_register=False)
def brevity(final_response: str) -> float:
    return 1.0 if len(final_response.split()) <= 2 else 0.0


reward_func = to_openrlhf(weighted_sum([reads_prompt, brevity], [1.0, 0.0], name="total"))
