"""Call the portable reward exactly as each framework does, and print what each gets back."""

import asyncio

from portable_reward import agentfly_reward, compute_score, reward_func, trl_reward

# verl's reward managers, one sample at a time:
verl_result = compute_score(
    data_source="openai/gsm8k",
    solution_str="6 * 7 = 42. The answer is 42.",
    ground_truth="42",
    extra_info={"split": "train", "index": 0},
)
print("verl:", verl_result)

# TRL's GRPOTrainer, conversational data: one entry per completion, dataset columns as lists.
trl_result = trl_reward(
    prompts=[[{"role": "user", "content": "What is 6*7?"}]] * 2,
    completions=[[{"role": "assistant", "content": "42"}], [{"role": "assistant", "content": "Hmm."}]],
    completion_ids=[[19, 17], [39, 76]],
    solution=["42", "42"],
)
print("TRL:", trl_result)

# OpenRLHF, from a worker thread: one-element lists; the query is the prompt plus the response.
prompt = "<|im_start|>user\nWhat is 6*7?<|im_end|>\n<|im_start|>assistant\n"
openrlhf_result = reward_func([prompt + "It is 42.<|im_end|>"], [prompt], ["42"])
print("OpenRLHF:", openrlhf_result)

# AgentFly's runner awaits the reward with the rollout's fields.
agentfly_result = asyncio.run(
    agentfly_reward(final_response="42", trajectory=[], id="rollout-0", chain_id="c0", answer="42")
)
print("AgentFly:", agentfly_result)
