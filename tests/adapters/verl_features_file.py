"""The reward file verl loads in the feature tests: rewards that need the prompt, token ids, groups."""

from __future__ import annotations

from typing import Any

from rewardkit import NOT_APPLICABLE, group_reward, reward
from rewardkit.adapters import to_verl


@reward(name="verl_prompt_and_ids", auto_register=False, extra_keys={"prompt_words": int, "tokens": int, "turns": int})
def prompt_and_ids(
    final_response: str, prompt: str, trajectory: list[dict[str, Any]], completion_ids: list[int], completion_length: int
) -> Any:
    """Reads what only rewardkit's managers pass; not applicable when the prompt has no 'what'."""
    if "what" not in prompt.split():
        return NOT_APPLICABLE
    assert len(completion_ids) == completion_length
    return {"reward": float(completion_length), "prompt_words": len(prompt.split()), "tokens": completion_length, "turns": len(trajectory)}


@group_reward(name="verl_group_share", auto_register=False, extra_keys={"group_size": int})
def group_share(final_response: list[str], uid: list[str]) -> list[dict[str, Any]]:
    """Each response's share of its group's words (a GRPO group = one uid)."""
    assert len(set(uid)) == 1
    total = sum(len(text.split()) for text in final_response) or 1
    return [{"reward": len(text.split()) / total, "group_size": len(final_response)} for text in final_response]


compute_score_prompt = to_verl(prompt_and_ids)
compute_score_group = to_verl(group_share)


@group_reward(name="verl_batch_rank", over="batch", auto_register=False)
def batch_rank(final_response: list[str]) -> list[float]:
    """Like a reward model scoring a whole batch at once: each response's rank by length, in [0, 1]."""
    order = sorted(range(len(final_response)), key=lambda index: (len(final_response[index]), index))
    return [order.index(index) / max(1, len(final_response) - 1) for index in range(len(final_response))]


compute_score_batch = to_verl(batch_rank)
