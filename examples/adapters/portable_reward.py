"""One reward definition, wired into verl, TRL, OpenRLHF and AgentFly."""

import re

from rewardkit import reward
from rewardkit.adapters import to_agentfly, to_openrlhf, to_trl, to_verl


@reward(name="final_number")
def final_number(final_response: str, answer: str) -> dict[str, object]:
    """1.0 when the last number in the response equals the answer; `found` says if there was one."""
    numbers = re.findall(r"-?\d+(?:\.\d+)?", final_response)
    correct = bool(numbers) and float(numbers[-1]) == float(answer)
    return {"reward": float(correct), "found": bool(numbers)}


# verl: custom_reward_function.path=portable_reward.py custom_reward_function.name=compute_score
compute_score = to_verl(final_number, timeout=10.0)

# TRL: GRPOTrainer(model=..., reward_funcs=[trl_reward], train_dataset=...);
# the dataset's "solution" column feeds the reward's `answer`.
trl_reward = to_trl(final_number, field_map={"solution": "answer"}, timeout=10.0)

# OpenRLHF: --reward.remote_url portable_reward.py --data.label_key answer (it loads `reward_func`).
reward_func = to_openrlhf(final_number, timeout=10.0)

# AgentFly awaits its rewards: this makes the sync `final_number` awaitable, with a timeout
# and a fallback on errors (an async @reward can be passed to AgentFly as is).
agentfly_reward = to_agentfly(final_number, timeout=10.0)
