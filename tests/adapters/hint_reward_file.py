"""Reward files whose rewards name their fields differently from what the adapter passes: the
error names the ``field_map`` of that adapter (verl loads this file by path, OpenRLHF imports
``reward_func`` from it)."""

from __future__ import annotations

from rewardkit import reward
from rewardkit.adapters import to_openrlhf, to_verl


@reward(name="hint_verl_names", auto_register=False)
def verl_names(solution_str: str, ground_truth: str) -> float:  # rewardkit: ignore[RK101]
    """Written with verl's own argument names."""
    return float(solution_str.split()[-1:] == [ground_truth])


@reward(name="hint_reference", auto_register=False)
def reference_reward(final_response: str, reference: str) -> float:
    """Calls the reference answer ``reference``."""
    return float(reference in final_response)


@reward(name="hint_answer", auto_register=False)
def answer_reward(final_response: str, answer: str) -> float:
    """The usual names: OpenRLHF's label is its ``answer``."""
    return float(final_response.strip() == answer)


compute_score = to_verl(verl_names)
reward_func = to_openrlhf(reference_reward)
