"""RK401 in a workspace where hundreds of files share a reward name: each finding names three
others and a count (linear, as the CLI), and the server keeps answering."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import lsp_harness
from lsp_harness import initialize, open_document, publishes, wait_until
from lsprotocol import types
from pytest_lsp import LanguageClient

FILES = 300

MODULE = """from rewardkit import reward


@reward(name="qa")
def qa_{index}(final_response: str) -> float:
    return 1.0
"""


def _rk401(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    found = publishes(client, uri)
    return [d for d in found[-1].diagnostics if d.code == "RK401"] if found else []


async def test_hundreds_of_files_sharing_a_name(
    client: LanguageClient, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(lsp_harness, "WAIT_LIMIT", 600.0)  # hundreds of files on a busy machine
    paths = [tmp_path / f"m{index:03d}.py" for index in range(FILES)]
    for index, path in enumerate(paths):
        path.write_text(MODULE.format(index=index), encoding="utf-8")
    await initialize(client, tmp_path, options={"rewardkit": {"debounceMs": 0}})

    # The scan of the files on disk first (the last file's finding counts every other one).
    last = open_document(client, paths[-1], paths[-1].read_text(encoding="utf-8"))
    await wait_until(
        lambda: any(f"and {FILES - 4} other definitions" in d.message for d in _rk401(client, last)),
        "the workspace scan",
    )

    uris = [
        open_document(client, path, path.read_text(encoding="utf-8")) for path in paths[:-1]
    ] + [last]
    await wait_until(lambda: all(_rk401(client, uri) for uri in uris), "RK401 in every document")
    completed = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "rewardkit", "check", "--format", "json", "--no-cache", "."],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    cli = {(r["path"], r["message"]) for r in json.loads(completed.stdout)}
    assert len(cli) == FILES
    for uri, path in zip(uris[::37], paths[::37]):
        [finding] = _rk401(client, uri)
        assert (path.name, finding.message) in cli
        assert finding.message.count(".py:") == 3  # three others named, the rest counted
        assert len(finding.message) < 200

    hover = await client.text_document_hover_async(  # still answering
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uris[0]),
            position=types.Position(line=4, character=14),
        )
    )
    assert hover is not None
    assert "final_response" in str(hover.contents)


def test_the_servers_index_gives_the_clis_findings_after_any_changes() -> None:
    """WorkspaceRewards (live documents over files on disk, per-name order and counts kept as
    files come, change and go) gives each file exactly what duplicate_reward_diagnostics gives
    the CLI over the same files."""
    import random

    from rewardkit_lsp.workspace_index import WorkspaceRewards

    from rewardkit.checks import (
        ModuleAnalysis,
        RewardDefinition,
        Span,
        duplicate_reward_diagnostics,
    )

    def analysis(names: list[str]) -> ModuleAnalysis:
        rewards = []
        for line, name in enumerate(names, start=3):
            span = Span(line, 4, line, 6)
            rewards.append(RewardDefinition(name, "f", False, "function", None, span, span, (), span))
        return ModuleAnalysis(rewards=tuple(rewards))

    chooser = random.Random(7)
    workspace = WorkspaceRewards()
    workspace.set_roots(["/w"])
    current: dict[str, ModuleAnalysis] = {}
    for step in range(600):
        path = f"/w/m{chooser.randrange(40):02d}.py"
        if chooser.random() < 0.15:
            workspace.set_disk(path, None)
            current.pop(path, None)
        else:
            names = [chooser.choice(["qa", "QA", "f1", "em", "len"]) for _ in range(chooser.randrange(1, 4))]
            current[path] = analysis(names)
            workspace.set_disk(path, current[path])
        if step % 50 == 49:
            expected = duplicate_reward_diagnostics(
                sorted((p.removeprefix("/w/"), a) for p, a in current.items())
            )
            for file in current:
                got = sorted(workspace.cross_file(file), key=lambda d: d.sort_key())
                want = sorted(expected.get(file.removeprefix("/w/"), []), key=lambda d: d.sort_key())
                assert got == want, file
