"""Rewards whose failing sample finishes first: the others wait for a gate file before scoring.

Real runs have failing samples, and the order results arrive in varies. A failure that arrives
before any success is the case that used to crash trainers (extras fixed by the first
successful result). Each sample's ``gate`` field names a file: a sample whose response contains
``boom`` fails at once; the others wait until the gate exists (written by the failing sample, or
by the test once the failure is in), then ``settle`` seconds more, then score.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

from rewardkit import reward
from rewardkit.adapters import to_openrlhf, to_verl

GATE_TIMEOUT = 120.0
"""Seconds a sample waits for its gate before failing the test loudly (a busy machine is slow)."""


def _score(final_response: str, answer: str) -> dict[str, Any]:
    words = final_response.split()
    pred = words[-1] if words else ""
    return {"reward": float(pred == answer), "acc": pred == answer, "pred": pred}


def _fail_or_wait(final_response: str, gate: str | None, settle: float) -> float:
    """Raise for a ``boom`` response (opening the gate); else the seconds left to wait for the gate."""
    if "boom" in final_response:
        if gate:
            Path(gate).touch()
        raise RuntimeError("boom in the response")
    return settle


def _gate_is_open(gate: str | None, started: float) -> bool:
    if not gate or os.path.exists(gate):
        return True
    if time.monotonic() - started > GATE_TIMEOUT:
        raise TimeoutError(f"gate {gate} never opened")
    return False


@reward(name="gated_math_like", auto_register=False)
def gated(final_response: str, answer: str, gate: str | None = None, settle: float = 0.0) -> dict[str, Any]:
    """verl's math_dapo-like reward (``acc``, ``pred``), failing on ``boom`` before any other finishes."""
    settle = _fail_or_wait(final_response, gate, settle)
    started = time.monotonic()
    while not _gate_is_open(gate, started):
        time.sleep(0.01)
    time.sleep(settle)
    return _score(final_response, answer)


@reward(name="gated_math_like_async", auto_register=False)
async def gated_async(final_response: str, answer: str, gate: str | None = None, settle: float = 0.0) -> dict[str, Any]:
    """The async twin of ``gated``."""
    settle = _fail_or_wait(final_response, gate, settle)
    started = time.monotonic()
    while True:  # a file written by another process: polled
        if _gate_is_open(gate, started):
            break
        await asyncio.sleep(0.01)
    await asyncio.sleep(settle)
    return _score(final_response, answer)


compute_score = to_verl(gated)
compute_score_async = to_verl(gated_async)
reward_func = to_openrlhf(gated)
