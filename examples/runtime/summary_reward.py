"""A reward with task fields: summary similarity minus a length penalty.

Run it: ``python examples/runtime/summary_reward.py``. The docs embed this file verbatim.
"""

import asyncio

from rewardkit import calculate_rewards, compute_data_metrics, reward
from rewardkit.qa import f1_score


def calculate_similarity(response: str, reference: str) -> float:
    """Token F1 (SQuAD-style) between the summary and the reference summary."""
    f1, _precision, _recall = f1_score(response, reference)
    return f1


@reward(name="summary_reward_with_penalty")
def summary_reward_with_penalty(
    final_response: str, answer: str, length_penalty: float, max_length: int
) -> float:
    # Base reward from similarity
    base_reward = calculate_similarity(final_response, answer)
    # Apply length penalty
    if len(final_response) > max_length:
        penalty = length_penalty * (len(final_response) - max_length) / max_length
        base_reward -= penalty
    return max(0.0, base_reward)


# Each task row carries its own task fields next to the predefined `final_response`.
SAMPLES = [
    {
        "final_response": "The cat sat on the mat.",
        "answer": "A cat sat on a mat.",
        "length_penalty": 0.5,
        "max_length": 40,
    },
    {
        "final_response": "The cat, which was grey and quite old, sat down slowly on the mat.",
        "answer": "A cat sat on a mat.",
        "length_penalty": 0.5,
        "max_length": 40,
    },
]


async def main() -> None:
    results = await calculate_rewards(summary_reward_with_penalty, SAMPLES)
    for sample, result in zip(SAMPLES, results):
        print(f"{result.reward:.3f}  {sample['final_response']}")
    print(compute_data_metrics(results))


if __name__ == "__main__":
    asyncio.run(main())
