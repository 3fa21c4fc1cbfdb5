"""Fixtures of the adapter tests."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from adapter_testing import require_module
from ray_child import RayChild

HERE = Path(__file__).resolve().parent

# The frameworks' tests build their models and tokenizers; nothing may come from the hub. Set
# before transformers/huggingface_hub are first imported (they read it at import).
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def pytest_configure(config: pytest.Config) -> None:
    """Tests using ``ray_session`` run in a child pytest per module (``ray_child``), so a Ray
    killed from outside fails those tests, not the whole run."""
    RayChild.register(config)


@pytest.fixture(scope="module")
def ray_session() -> Iterator[Any]:
    """A local Ray instance for one module's tests that need one (in that module's child run,
    see ``pytest_configure``); its workers import this directory's modules and inherit the
    import path."""
    ray = require_module(
        "ray", "the test extra installs ray; verl's remote reward manager runs on it"
    )
    temp_dir = tempfile.mkdtemp(prefix="rk-ray-")  # short: Ray's socket paths must fit in 107 bytes
    ray.init(
        num_cpus=1,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join([str(HERE), *sys.path])}},
        _temp_dir=temp_dir,
    )
    try:
        yield ray
    finally:
        ray.shutdown()
        shutil.rmtree(temp_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def verl() -> Any:
    """The ``verl`` package (the ``frameworks`` extra), whose reward managers and loop are tested here."""
    return require_module(
        "verl", "the frameworks extra installs verl, whose reward managers are tested here"
    )


@pytest.fixture
def event_loop_of_a_worker() -> Iterator[asyncio.AbstractEventLoop]:
    """The current event loop, as in a fresh verl worker: the reward loop's managers take it at init."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    yield loop
    asyncio.set_event_loop(None)
    loop.close()
