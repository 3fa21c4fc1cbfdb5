"""A reward file verl loads by path (``custom_reward_function.path``) in the process-mode tests of
``weighted_sum``: a math_verify accuracy that needs ``execution="process"`` (its default timeouts
use ``signal.alarm``), a plain format reward, and their sum, adapted for verl three ways."""

from __future__ import annotations

import os
from typing import Any

from rewardkit import reward, weighted_sum
from rewardkit.adapters import to_verl


@reward(name="mv_accuracy", auto_register=False, execution="process", timeout=60.0)
def accuracy(final_response: str, answer: str) -> dict[str, Any]:
    """math_verify with its default (signal) timeouts; fails on ``boom``."""
    from math_verify import parse, verify

    if "boom" in final_response:
        raise RuntimeError("boom in the response")
    return {"reward": float(verify(parse(answer), parse(final_response))), "pid": os.getpid()}


@reward(name="short", auto_register=False)
def short(final_response: str) -> float:
    """1.0 for a response of at most four words."""
    return float(len(final_response.split()) <= 4)


total = weighted_sum([accuracy, short], [1.0, 0.5], name="total")

compute_score = to_verl(total)
"""The sum in verl's own threads: the accuracy component runs in its worker processes."""

compute_score_in_process = to_verl(total, execution="process")
"""The whole sum in worker processes (the components called on a worker's main thread)."""

compute_score_in_threads = to_verl(total, execution="thread", timeout=60.0)
"""The sum in rewardkit's reward threads: the accuracy component still runs in its processes."""
