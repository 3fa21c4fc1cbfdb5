"""End-to-end fixtures: the real ``python -m rewardkit_lsp`` process driven by pytest-lsp over stdio."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from lsp_harness import FAULTY_SERVER_COMMAND, SERVER_COMMAND, recording_client
from pytest_lsp import ClientServerConfig, LanguageClient


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=SERVER_COMMAND, client_factory=recording_client)
)
async def client(lsp_client: LanguageClient):
    """A started, not yet initialised server (each test initialises it with its own settings)."""
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=FAULTY_SERVER_COMMAND, client_factory=recording_client)
)
async def faulty_client(lsp_client: LanguageClient):
    """A server whose engine raises on sources containing ``BOOM`` (fault injection)."""
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder whose pyproject declares the task fields ``question`` and ``answer``."""
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "demo"\n\n[tool.rewardkit]\ntask_fields = ["question", "answer"]\n',
        encoding="utf-8",
    )
    return tmp_path
