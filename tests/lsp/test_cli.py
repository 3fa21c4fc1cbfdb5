"""The command line: ``rewardkit lsp`` through the dispatcher, ``--tcp``, and usage errors."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

CHECKOUT = Path(__file__).resolve().parents[2]
"""The checkout the test venv installs rewardkit from (editable): what the install hint names."""


def test_rewardkit_lsp_help_goes_through_the_dispatcher():
    completed = subprocess.run(
        [sys.executable, "-m", "rewardkit", "lsp", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "--tcp HOST:PORT" in completed.stdout


def test_a_bad_tcp_address_is_a_usage_error_naming_it():
    completed = subprocess.run(
        [sys.executable, "-m", "rewardkit_lsp", "--tcp", "localhost:http"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 2
    assert "--tcp 'localhost:http'" in completed.stderr


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def test_tcp_mode_serves_a_client(tmp_path: Path):
    port = _free_port()
    server = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "rewardkit_lsp",
        "--tcp",
        f"127.0.0.1:{port}",
        stderr=asyncio.subprocess.PIPE,
    )
    client = LanguageClient("tcp-test", "1")
    published: asyncio.Future[types.PublishDiagnosticsParams] = (
        asyncio.get_running_loop().create_future()
    )

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_publish(params: types.PublishDiagnosticsParams) -> None:
        if not published.done():
            published.set_result(params)

    try:
        for _ in range(
            300
        ):  # the server needs a moment to listen (a hang guard, not a timing check)
            try:
                await client.start_tcp("127.0.0.1", port)
                break
            except OSError:
                await asyncio.sleep(0.05)
        else:
            raise AssertionError(f"the server never listened on port {port}")
        await client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(), root_uri=tmp_path.as_uri()
            )
        )
        client.initialized(types.InitializedParams())
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=(tmp_path / "r.py").as_uri(),
                    language_id="python",
                    version=1,
                    text="from rewardkit import reward\n\n@reward\ndef r(final_respone):\n    return 1.0\n",
                )
            )
        )
        params = await asyncio.wait_for(published, 30)
        assert [d.code for d in params.diagnostics] == ["RK102"]
        await client.shutdown_async(None)
        client.exit(None)
    finally:
        await client.stop()
        if server.returncode is None:
            server.terminate()
        await server.wait()


BLOCK_LSP_EXTRA = '''
import sys


class _NotInstalled:
    """Behave as an install without the lsp extra: pygls and lsprotocol cannot be imported."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"pygls", "lsprotocol"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _NotInstalled())
'''


def test_without_the_lsp_extra_one_line_says_what_to_install(tmp_path: Path):
    (tmp_path / "sitecustomize.py").write_text(BLOCK_LSP_EXTRA, encoding="utf-8")
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])]
        ),
    }
    probe = subprocess.run(
        [sys.executable, "-c", "import lsprotocol"], capture_output=True, text=True, env=environment
    )
    assert probe.returncode == 1
    assert "ModuleNotFoundError" in probe.stderr
    for command in (["-m", "rewardkit", "lsp"], ["-m", "rewardkit_lsp"]):
        completed = subprocess.run(
            [sys.executable, *command],
            capture_output=True,
            text=True,
            env=environment,
            stdin=subprocess.DEVNULL,
            timeout=60,
        )
        assert completed.returncode == 2, completed.stderr
        assert completed.stdout == ""
        assert completed.stderr == (
            f'rewardkit lsp: the language server needs the lsp extra: pip install "{CHECKOUT}[lsp]"\n'
        )
