"""A reward file whose user forgot the adapter: verl's ``compute_score`` and OpenRLHF's
``reward_func`` are the bare ``@reward`` object."""

from __future__ import annotations

from typing import Any

from rewardkit import reward


@reward(name="bare_math_like", auto_register=False)
def math_like(final_response: str, answer: str) -> dict[str, Any]:
    pred = final_response.split()[-1] if final_response.split() else ""
    return {"reward": float(pred == answer), "acc": pred == answer}


compute_score = math_like
reward_func = math_like
