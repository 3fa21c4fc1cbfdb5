"""RK506 (the model's text run outside a sandbox) in the editor, as ``rewardkit check`` reports it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from checks.cli_helpers import run_check
from lsp_harness import initialize, open_document, wait_for_version
from lsprotocol import types
from pytest_lsp import LanguageClient

CODE_REWARD = """import subprocess
import sys

from rewardkit import reward


@reward
def runs(final_response, answer):
    code = final_response.split("```python")[-1].split("```")[0]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return float(done.stdout.strip() == answer.strip())
"""


async def test_rk506_is_published_as_rewardkit_check_reports_it(
    client: LanguageClient, project: Path
) -> None:
    path = project / "code_reward.py"
    path.write_text(CODE_REWARD, encoding="utf-8")
    await initialize(client, project)
    uri = open_document(client, path, CODE_REWARD)
    diagnostics = await wait_for_version(client, uri, 1)
    published = [(str(d.code), d.range.start.line + 1, d.message) for d in diagnostics]
    assert [(code, line) for code, line, _ in published] == [("RK506", 10)]
    assert "rewardkit.code" in published[0][2]
    cli = await asyncio.to_thread(
        run_check, "--format", "json", "--no-cache", str(path), cwd=project
    )
    assert cli.returncode == 1, cli.stderr
    rows = json.loads(cli.stdout)
    assert [(r["code"], r["line"], r["message"]) for r in rows] == published
    # No fix to offer: the only action is the suppression comment every diagnostic has.
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostics[0].range,
            context=types.CodeActionContext(diagnostics=list(diagnostics)),
        )
    )
    assert [action.title for action in actions or []] == ["Suppress RK506 on this line"]
