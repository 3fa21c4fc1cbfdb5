"""Rewards for the execution-mode tests: a real math_verify grader (its default timeouts use
``signal.alarm``), and rewards that hang or crash their process.

A module of its own so that worker processes (``execution="process"``) import them by name.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

from rewardkit import BaseReward, group_reward, reward


def math_verify_score(final_response: str, answer: str) -> float:
    """math_verify as TRL's and open-r1's accuracy rewards call it: default (signal) timeouts."""
    from math_verify import parse, verify

    return float(verify(parse(answer), parse(final_response)))


@reward(name="math_verify_accuracy", auto_register=False)
def math_verify_accuracy(final_response: str, answer: str) -> dict:
    # Deliberately in a thread under a timeout: the test expects the SignalInThreadError.
    return {"reward": math_verify_score(final_response, answer), "pid": os.getpid()}  # rewardkit: ignore[RK501]


@reward(name="math_verify_in_process", auto_register=False, execution="process", timeout=60.0)
def math_verify_in_process(final_response: str, answer: str) -> dict:
    return {"reward": math_verify_score(final_response, answer), "pid": os.getpid()}


class MathVerifyReward(BaseReward, auto_register=False):
    """The same as a stateful reward, declaring its execution mode as a class attribute."""

    name = "math_verify_class"
    execution = "process"
    timeout = 60.0

    def call(self, final_response: str, answer: str) -> float:
        return math_verify_score(final_response, answer)


@reward(name="sleeps_or_dies", auto_register=False)
def sleeps_or_dies(action: str, pid_file: str = "") -> dict:
    """``hang``: write this process's id to ``pid_file`` and sleep; ``die``: SIGKILL itself;
    ``exit``: ``os._exit(3)``; anything else: score 1 with the process id."""
    if action == "hang":
        Path(pid_file).write_text(str(os.getpid()))
        time.sleep(3600)
    if action == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    if action == "exit":
        os._exit(3)
    return {"reward": 1.0, "pid": os.getpid()}


@reward(name="async_in_process", auto_register=False, execution="process")
async def async_in_process(answer: str) -> dict:
    return {"reward": float(answer == "42"), "pid": os.getpid()}


@group_reward(name="math_verify_group", over="batch", auto_register=False)
def math_verify_group(final_response: list[str], answer: list[str]) -> list[dict]:
    """math_verify over a group at once (a group reward whose grader uses signals)."""
    return [
        {"reward": math_verify_score(response, gold), "pid": os.getpid()}
        for response, gold in zip(final_response, answer)
    ]


@reward(name="pid_or_lock", auto_register=False, execution="process")
def pid_or_lock(final_response: str) -> dict:
    """``lock``: a result whose extra cannot be pickled (a lock); anything else: the worker's id."""
    if final_response == "lock":
        return {"reward": 1.0, "lock": threading.Lock()}
    return {"reward": 1.0, "pid": os.getpid()}  # rewardkit: ignore[RK204] (unpicklable on purpose)


@reward(name="ignores_sigterm", auto_register=False, execution="process")
def ignores_sigterm(pid_file: str) -> float:
    """Writes its process id to ``pid_file``, ignores SIGTERM, then sleeps for an hour."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    Path(pid_file).write_text(str(os.getpid()))
    time.sleep(3600)
    return 1.0


@group_reward(name="group_with_a_lock", over="batch", auto_register=False)
def group_with_a_lock(final_response: list[str]) -> list[dict]:
    """A group's results, the one for ``lock`` carrying an extra that cannot be pickled."""
    return [
        {"reward": 1.0, "lock": threading.Lock()}
        if text == "lock"
        else {"reward": 1.0, "pid": os.getpid()}
        for text in final_response
    ]
