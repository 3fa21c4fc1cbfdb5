"""Rewards that raise every kind of exception, sync and async, for the runtime's fault tests.

A module of its own (not a test file) so that worker processes (``execution="process"``) can
import the rewards by name, as they import a user's reward module.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import os
import sys
import threading

from rewardkit import group_reward, reward

RELEASE = threading.Event()
"""Set by the tests when they end: lets a blocked ``__str__`` return."""


class LibraryTimeout(BaseException):
    """A library's own ``BaseException``, as gevent's ``Timeout`` is."""


class UnreadableMessage(Exception):
    """An exception whose ``__str__`` raises."""

    def __str__(self) -> str:
        raise RuntimeError("no message for you")


class BlockingMessage(Exception):
    """An exception whose ``__str__`` blocks (until the tests release it)."""

    def __str__(self) -> str:
        RELEASE.wait(120)
        return "released"


KINDS = (
    "asyncio-cancelled",
    "futures-cancelled",
    "exit",
    "argparse",
    "generator-exit",
    "library",
    "stop-iteration",
)
"""What ``raise_kind`` raises, besides ordinary exceptions: every kind a reward may raise that is
not an ``Exception`` (or cannot travel like one)."""


def raise_kind(kind: str) -> None:
    """Raise the exception named ``kind`` (``"ok"``: nothing)."""
    if kind == "asyncio-cancelled":
        raise asyncio.CancelledError()
    if kind == "futures-cancelled":  # waiting on a helper future that was cancelled
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        future.cancel()
        future.result()
    if kind == "exit":
        sys.exit(7)
    if kind == "argparse":  # argparse's error path exits the process
        argparse.ArgumentParser(prog="grader").parse_args(["--bogus"])
    if kind == "generator-exit":
        raise GeneratorExit()
    if kind == "library":
        raise LibraryTimeout("5 seconds")
    if kind == "stop-iteration":  # next() on an empty generator
        next(iter(()))
    if kind == "keyboard":
        raise KeyboardInterrupt
    if kind == "value":
        raise ValueError("bad sample")
    if kind == "unreadable":
        raise UnreadableMessage()
    if kind == "blocking":
        raise BlockingMessage()
    if kind == "huge":
        raise ValueError("x" * 20_000_000)


@reward(name="raising_sync", auto_register=False)
def raising_sync(kind: str) -> dict:
    raise_kind(kind)
    return {"reward": 1.0, "pid": os.getpid()}


@reward(name="raising_async", auto_register=False)
async def raising_async(kind: str) -> dict:
    await asyncio.sleep(0)
    if kind == "awaited-cancelled":  # awaiting a helper future that was cancelled
        future = asyncio.get_running_loop().create_future()
        future.cancel()
        await future
    raise_kind(kind)
    return {"reward": 1.0, "pid": os.getpid()}


@reward(name="swallows_cancellation", auto_register=False)
async def swallows_cancellation(kind: str) -> float:
    """Retries whatever cancels it: the pattern that kept ``asyncio.run`` from returning."""
    while True:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            continue


STOP_IGNORING = threading.Event()


@reward(name="ignores_everything", auto_register=False)
async def ignores_everything(kind: str) -> float:
    """Ignores its cancellation and the GeneratorExit of closing it, until the test stops it."""
    while not STOP_IGNORING.is_set():
        try:
            await asyncio.sleep(0.05)
        except BaseException:  # the hostile pattern under test
            continue
    return 0.0


@group_reward(name="raising_group_sync", auto_register=False)
def raising_group_sync(kind: list[str]) -> list[float]:
    """A group reward raising the first kind of its group that is not ``"ok"``."""
    for each in kind:
        raise_kind(each)
    return [1.0] * len(kind)


@group_reward(name="raising_group_async", auto_register=False)
async def raising_group_async(kind: list[str]) -> list[float]:
    await asyncio.sleep(0)
    for each in kind:
        raise_kind(each)
    return [1.0] * len(kind)
