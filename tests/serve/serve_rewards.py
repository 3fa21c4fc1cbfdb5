"""Rewards the serve tests put behind `rewardkit serve` (imported by the server with --app-dir).

Each reward reads what it should do from the response text, so one request can mix samples that
pass, fail, hang or run long: ``boom`` raises, ``none`` returns None, ``hang`` never returns,
``slow:<seconds>`` takes that long. Rewards that tests watch from outside (cancellation,
draining) write marker files under ``$SERVE_TEST_MARKERS``.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

from rewardkit import group_reward, reward


def _mark(name: str) -> None:
    directory = os.environ.get("SERVE_TEST_MARKERS")
    if directory:
        Path(directory, f"{name}-{os.getpid()}-{time.monotonic_ns()}").touch()


def _delay(response: str) -> float:
    return float(response.split(":", 1)[1]) if response.startswith("slow:") else 0.0


@reward(name="exact")
def exact(final_response: str, answer: str) -> dict[str, Any]:
    """1.0 when the response equals the answer; ``boom`` raises, ``none`` returns None, ``hang``
    blocks far past any test timeout, ``slow:<s>`` sleeps first."""
    text = final_response.strip()
    if text == "boom":
        raise ValueError("the reward failed on purpose")
    if text == "none":
        return None  # type: ignore[return-value]  # rewardkit: ignore[RK202]
    if text == "hang":
        time.sleep(600)
    time.sleep(_delay(text))
    matched = text == str(answer).strip()
    return {"reward": 1.0 if matched else 0.0, "acc": matched, "length": len(text)}


@reward(name="exact_async")
async def exact_async(final_response: str, answer: str) -> dict[str, Any]:
    """``exact`` as an async reward; a cancelled call (timeout, disconnect) leaves a ``cancelled`` marker."""
    text = final_response.strip()
    _mark("started")
    try:
        if text == "boom":
            raise ValueError("the reward failed on purpose")
        if text == "hang":
            await asyncio.sleep(600)
        await asyncio.sleep(_delay(text))
    except asyncio.CancelledError:
        _mark("cancelled")
        raise
    _mark("finished")
    matched = text == str(answer).strip()
    return {"reward": 1.0 if matched else 0.0, "acc": matched, "length": len(text)}


@reward(name="sleepy")
def sleepy(final_response: str) -> float:
    """A sync reward that sleeps ``slow:<s>`` and marks each call it starts and finishes."""
    _mark("started")
    time.sleep(_delay(final_response.strip()))
    _mark("finished")
    return 1.0


@reward(name="length_reward")
def length_reward(final_response: str) -> dict[str, Any]:
    """A second reward for serving several by name."""
    return {"reward": min(len(final_response) / 100.0, 1.0), "chars": len(final_response)}


def _abort(text: str) -> None:
    """Raise what ends a process or a generator, as a reward might by mistake."""
    if text == "KeyboardInterrupt":
        raise KeyboardInterrupt
    if text == "SystemExit":
        sys.exit(3)
    if text == "GeneratorExit":
        raise GeneratorExit


@reward(name="abort_thread")
def abort_thread(final_response: str) -> float:
    """Raises the exception named by the response (in a reward thread)."""
    _abort(final_response)
    return 1.0


@reward(name="abort_process", execution="process")
def abort_process(final_response: str) -> float:
    """Raises the exception named by the response (in a worker process)."""
    _abort(final_response)
    return 1.0


@reward(name="abort_async")
async def abort_async(final_response: str) -> float:
    """Raises the exception named by the response (on the server's event loop)."""
    _abort(final_response)
    return 1.0


@reward(name="abort_async_inline", execution="inline")
async def abort_async_inline(final_response: str) -> float:
    """Raises the exception named by the response (inline on the event loop)."""
    _abort(final_response)
    return 1.0


@reward(name="inline_sync", execution="inline")
def inline_sync(final_response: str) -> float:
    """A sync reward that asks to run inline: a server cannot time it, so it refuses to serve it."""
    return 1.0


@reward(name="abort_async_process", execution="process")
async def abort_async_process(final_response: str) -> float:
    """Raises the exception named by the response (on the event loop of a worker process)."""
    _abort(final_response)
    return 1.0


@group_reward(over="batch")
def batch_rank(final_response: list[str], answer: list[str]) -> list[float]:
    """A group reward: scored over a batch at once, which a server scoring samples one by one refuses."""
    return [1.0 if response == gold else 0.0 for response, gold in zip(final_response, answer)]
