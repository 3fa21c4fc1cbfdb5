"""A reward file as a verl user writes it (``custom_reward_function.path`` = this file): verl's own
gsm8k ``compute_score``, as installed, wrapped with its argument names kept."""

from __future__ import annotations

from verl.utils.reward_score import gsm8k

from rewardkit import reward
from rewardkit.adapters import to_verl

VERL_NAMES = {"solution_str": "solution_str", "ground_truth": "ground_truth"}
"""verl's argument names, kept as the reward's fields."""

compute_score = to_verl(
    reward(gsm8k.compute_score, name="verl_gsm8k", auto_register=False), field_map=VERL_NAMES
)


@reward(name="gsm8k_by_rewardkit_names", auto_register=False)
def gsm8k_reward(final_response: str, answer: str):
    """A port that keeps verl's function and calls it: its returns are read through the call."""
    return gsm8k.compute_score(final_response, answer)
