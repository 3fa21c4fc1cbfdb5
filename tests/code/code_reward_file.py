"""``code_reward`` as verl (``custom_reward_function.path``) and OpenRLHF (``--reward.remote_url``)
load a reward file: each framework imports this file by its path and calls what it names."""

from __future__ import annotations

from rewardkit.adapters import to_openrlhf, to_verl
from rewardkit.code import code_reward

TESTS_FIELD = next(name for name in code_reward.parameters if name != "final_response")
"""The field ``code_reward`` reads the data set's tests from."""

compute_score = to_verl(code_reward, field_map={"ground_truth": TESTS_FIELD})
"""verl's ``compute_score``: its ``ground_truth`` column holds the tests."""

reward_func = to_openrlhf(code_reward)
"""OpenRLHF's ``reward_func``: its label (``--data.label_key``) is ``{"<tests field>": tests}``."""
