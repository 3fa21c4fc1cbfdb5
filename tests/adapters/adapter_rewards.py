"""Rewards the adapter tests wrap: importable by name, so worker processes can find them again."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from rewardkit.runtime.define.rewards import BaseReward, reward


@reward(name="adapters_exact")
def exact(final_response: str, answer: str) -> dict[str, Any]:
    """1.0 when the response equals the answer (whitespace aside), with two extras."""
    matched = final_response.strip() == str(answer).strip()
    return {"reward": float(matched), "matched": matched, "length": len(final_response)}


@reward(name="adapters_exact_async")
async def exact_async(final_response: str, answer: str) -> dict[str, Any]:
    """The async twin of ``exact``."""
    await asyncio.sleep(0)
    matched = final_response.strip() == str(answer).strip()
    return {"reward": float(matched), "matched": matched, "length": len(final_response)}


@reward(name="adapters_fields")
def echo_fields(**fields: Any) -> dict[str, Any]:
    """Returns the reward 1.0 and, as the extra ``seen``, every field it received."""
    return {"reward": 1.0, "seen": fields}


@reward(name="adapters_picky")
def picky(final_response: str, answer: str) -> float:
    """Fails on ``boom``, raises its own ``TimeoutError`` on ``upstream``, hangs on ``sleep``, NaN on ``nan``."""
    if "boom" in final_response:
        raise RuntimeError("boom in the response")
    if "upstream" in final_response:
        raise TimeoutError("upstream API timed out")
    if "sleep" in final_response:
        time.sleep(2.0)
    if "nan" in final_response:
        return float("nan")
    return float(final_response.strip() == answer)


@reward(name="adapters_picky_async")
async def picky_async(final_response: str, answer: str) -> float:
    """Async: fails on ``boom``, hangs on ``sleep``, raises its own ``TimeoutError`` on ``upstream``."""
    if "boom" in final_response:
        raise RuntimeError("boom in the response")
    if "upstream" in final_response:
        raise TimeoutError("upstream API timed out")
    if "sleep" in final_response:
        await asyncio.sleep(30.0)
    return float(final_response.strip() == answer)


@reward(name="adapters_reserved")
def reserved_extra(final_response: str) -> dict[str, Any]:
    """Returns an extra named like one verl reserves."""
    return {"reward": 1.0, "uid": "u-1"}


@reward(name="adapters_dapo_like")
def dapo_like(final_response: str, answer: str) -> dict[str, Any]:
    """Like verl's math_dapo: ``acc`` and ``pred`` extras; fails on ``boom``."""
    if "boom" in final_response:
        raise RuntimeError("boom in the response")
    pred = final_response.split()[-1]
    return {"reward": float(pred == answer), "acc": pred == answer, "pred": pred}


@reward(name="adapters_uneven")
def uneven_extras(final_response: str) -> dict[str, Any]:
    """Extras differ by sample: ``short`` only for short responses."""
    extras: dict[str, Any] = {"reward": 1.0, "length": len(final_response)}
    if len(final_response) < 5:
        extras["short"] = True
    return extras


class KeywordReward(BaseReward):
    """Stateful reward: 1.0 when the response contains the instance's keyword."""

    name = "adapters_keyword"

    def __init__(self, keyword: str) -> None:
        self.keyword = keyword

    def call(self, final_response: str) -> float:
        return float(self.keyword in final_response)
