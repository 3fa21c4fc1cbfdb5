"""The reward file verl loads in the tests (``custom_reward_function.path``), as a user writes it."""

from __future__ import annotations

import asyncio
from typing import Any

from rewardkit import reward
from rewardkit.adapters import to_verl


def _score(final_response: str, answer: str) -> dict[str, Any]:
    if "boom" in final_response:
        raise RuntimeError("boom in the response")
    words = final_response.split()
    pred = words[-1] if words else ""
    return {"reward": float(pred == answer), "acc": pred == answer, "pred": pred}


@reward(name="verl_file_math_like", auto_register=False)
def math_like(final_response: str, answer: str) -> dict[str, Any]:
    """Like verl's math_dapo: the last word against the answer, with ``acc`` and ``pred``; fails on ``boom``."""
    return _score(final_response, answer)


@reward(name="verl_file_math_like_async", auto_register=False)
async def math_like_async(final_response: str, answer: str) -> dict[str, Any]:
    """The async twin of ``math_like`` (verl's reward loop awaits it)."""
    await asyncio.sleep(0)
    return _score(final_response, answer)


compute_score = to_verl(math_like)
compute_score_async = to_verl(math_like_async)
