"""RK401 across the workspace's files, over stdio, as ``rewardkit check`` at the folder reports it."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from lsp_harness import change_document, initialize, open_document, publishes, wait_until
from lsprotocol import types
from pytest_lsp import LanguageClient

FIRST = """from rewardkit import reward


@reward(name="qa")
def qa(final_response: str) -> float:
    return 1.0


@reward(name="f1")
def f1(final_response: str) -> float:
    return 0.5
"""

SECOND = """from rewardkit import reward


@reward(name="QA")
def qa_again(final_response: str) -> float:
    return 0.0
"""

Row = tuple[str, str, int, int, int, int]


def _workspace(root: Path) -> tuple[Path, Path]:
    first, second = root / "first.py", root / "pkg" / "second.py"
    second.parent.mkdir()
    first.write_text(FIRST, encoding="utf-8")
    second.write_text(SECOND, encoding="utf-8")
    ignored = root / ".venv" / "lib" / "vendored.py"  # the CLI never walks into .venv
    ignored.parent.mkdir(parents=True)
    ignored.write_text(SECOND.replace("QA", "f1"), encoding="utf-8")
    return first, second


async def _cli_rows(root: Path, display: str) -> list[Row]:
    completed = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "rewardkit", "check", "--format", "json", "."],
        capture_output=True,
        text=True,
        cwd=root,
        check=False,
    )
    assert completed.returncode == 1, completed.stderr
    return [
        (r["code"], r["message"], r["line"], r["column"], r["end_line"], r["end_column"])
        for r in json.loads(completed.stdout)
        if r["path"] == display
    ]


def _rows(diagnostics) -> list[Row]:
    return [
        (
            str(d.code),
            d.message,
            d.range.start.line + 1,
            d.range.start.character,
            d.range.end.line + 1,
            d.range.end.character,
        )
        for d in diagnostics
    ]


async def _latest_with(client: LanguageClient, uri: str, want: bool) -> list[types.Diagnostic]:
    """The latest publish for ``uri`` once it has (or has no) RK401."""
    params = await wait_until(
        lambda: (
            (
                (p := publishes(client, uri))
                and any(d.code == "RK401" for d in p[-1].diagnostics) == want
            )
            and p[-1]
        ),
        f"diagnostics of {uri} {'with' if want else 'without'} RK401",
    )
    return list(params.diagnostics)


async def test_duplicate_names_across_files_are_reported_as_the_cli_does(
    client: LanguageClient, tmp_path: Path
):
    first, second = _workspace(tmp_path)
    await initialize(client, tmp_path, options={"rewardkit": {"debounceMs": 0}})

    second_uri = open_document(client, second, SECOND)  # first.py stays closed: read from disk
    diagnostics = await _latest_with(client, second_uri, True)
    assert _rows(diagnostics) == await _cli_rows(tmp_path, "pkg/second.py")
    [duplicate] = [d for d in diagnostics if d.code == "RK401"]
    assert duplicate.message == "reward name 'QA' is also defined at first.py:5 (as 'qa')"

    first_uri = open_document(client, first, FIRST)
    assert _rows(await _latest_with(client, first_uri, True)) == await _cli_rows(
        tmp_path, "first.py"
    )

    # Renaming in the editor (not saved) clears both files at once.
    change_document(client, first_uri, 2, FIRST.replace('name="qa"', 'name="qa_exact"'))
    assert await _latest_with(client, first_uri, False) is not None
    assert await _latest_with(client, second_uri, False) is not None

    # Closed again, the file on disk (still "qa") counts again.
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=first_uri))
    )
    assert _rows(await _latest_with(client, second_uri, True)) == await _cli_rows(
        tmp_path, "pkg/second.py"
    )


async def test_a_file_changed_on_disk_counts_after_the_watch_event(
    client: LanguageClient, tmp_path: Path
):
    first, second = _workspace(tmp_path)
    first.write_text(FIRST.replace('name="qa"', 'name="other"'), encoding="utf-8")
    await initialize(client, tmp_path, options={"rewardkit": {"debounceMs": 0}})
    second_uri = open_document(client, second, SECOND)
    await wait_until(lambda: publishes(client, second_uri), "the first diagnostics")
    assert not any(d.code == "RK401" for d in publishes(client, second_uri)[-1].diagnostics)

    first.write_text(FIRST, encoding="utf-8")  # e.g. a git checkout
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=first.as_uri(), type=types.FileChangeType.Changed)]
        )
    )
    assert _rows(await _latest_with(client, second_uri, True)) == await _cli_rows(
        tmp_path, "pkg/second.py"
    )
