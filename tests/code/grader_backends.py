"""One warm sandbox per backend for the grader's test modules (``backend`` fixture: bwrap, wasm).

A backend not usable here fails under ``CI=true`` and skips elsewhere, naming why."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from rewardkit.code.sandbox import Sandbox, available_backends, get_sandbox

BACKENDS = ("bwrap", "wasm")


def require_backend(name: str) -> None:
    """Fail under ``CI=true`` (skip elsewhere) when backend ``name`` cannot run here, naming why."""
    reason = available_backends()[name]
    if reason is not None:
        message = f"the {name} sandbox is not usable here: {reason}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """A sandbox of each backend with two warm workers, shared by the module's tests."""
    name = request.param
    require_backend(name)
    sandbox = get_sandbox(name, workers=2)
    yield sandbox
    sandbox.close()
