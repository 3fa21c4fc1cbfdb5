"""Diagnostics over the real protocol: open, change (debounced), save, close, pull, stale versions."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from lsp_engine_view import expected_shapes, published_shapes
from lsp_harness import (
    change_document,
    initialize,
    open_document,
    publishes,
    pull_capabilities,
    wait_for_version,
    wait_until,
)
from lsprotocol import types
from pytest_lsp import LanguageClient

BAD = """from rewardkit import reward


@reward(name="qa")
def qa_reward(final_respone: str, answr: str) -> float:
    return 1.0
"""

GOOD = BAD.replace("final_respone", "final_response").replace("answr", "answer")


async def test_open_publishes_what_rewardkit_check_reports(client: LanguageClient, project: Path):
    path = project / "rewards.py"
    path.write_text(BAD, encoding="utf-8")
    await initialize(client, project)
    uri = open_document(client, path, BAD)

    diagnostics = await wait_for_version(client, uri, 1)

    assert {str(d.code) for d in diagnostics} == {"RK101", "RK102"}
    assert published_shapes(diagnostics) == expected_shapes(BAD, path)
    assert all(d.source == "rewardkit" for d in diagnostics)
    cli = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "rewardkit", "check", "--format", "json", str(path)],
        capture_output=True,
        text=True,
        cwd=project,
        check=False,
    )
    assert cli.returncode == 1, cli.stderr
    reported = json.loads(cli.stdout)
    rows = reported["diagnostics"] if isinstance(reported, dict) else reported
    assert sorted((r["code"], r["message"], r["line"]) for r in rows) == sorted(
        (str(d.code), d.message, d.range.start.line + 1) for d in diagnostics
    )


async def test_change_save_and_close(client: LanguageClient, project: Path):
    await initialize(client, project, options={"rewardkit": {"debounceMs": 0}})
    uri = open_document(client, project / "rewards.py", BAD)
    assert len(await wait_for_version(client, uri, 1)) == 2

    change_document(client, uri, 2, GOOD)
    assert await wait_for_version(client, uri, 2) == []

    change_document(client, uri, 3, BAD)
    assert len(await wait_for_version(client, uri, 3)) == 2
    before_save = len(publishes(client, uri))

    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    await wait_until(lambda: len(publishes(client, uri)) > before_save, "diagnostics on save")
    assert publishes(client, uri)[-1].version == 3
    assert len(publishes(client, uri)[-1].diagnostics) == 2

    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    await wait_until(
        lambda: len(publishes(client, uri)) > before_save + 1, "diagnostics cleared on close"
    )
    assert list(publishes(client, uri)[-1].diagnostics) == []


async def test_debounce_checks_a_burst_of_changes_once(client: LanguageClient, project: Path):
    await initialize(client, project, options={"rewardkit": {"debounceMs": 1500}})
    uri = open_document(client, project / "rewards.py", GOOD)
    assert await wait_for_version(client, uri, 1) == []  # open is checked at once

    for version in range(2, 7):
        change_document(client, uri, version, BAD if version % 2 == 0 else GOOD + f"# {version}\n")
    change_document(client, uri, 7, BAD)

    assert len(await wait_for_version(client, uri, 7)) == 2
    assert [p.version for p in publishes(client, uri)] == [1, 7]


async def test_results_of_older_versions_are_dropped(client: LanguageClient, project: Path):
    await initialize(client, project, options={"rewardkit": {"debounceMs": 0}})
    path = project / "many.py"
    # Large enough that each check takes a while, so changes arrive while one is running.
    body = "".join(
        BAD.split("\n\n\n", 1)[1].replace("qa_reward", f"qa_{i}").replace('"qa"', f'"qa{i}"')
        + "\n\n"
        for i in range(150)
    )
    text = "from rewardkit import reward\n\n\n" + body
    uri = open_document(client, path, text)
    await wait_for_version(client, uri, 1)

    final = text
    for version in range(2, 32):
        final = text.replace(f"def qa_{version}(final_respone", f"def qa_{version}(final_response")
        change_document(client, uri, version, final)

    diagnostics = await wait_for_version(client, uri, 31)
    versions = [p.version for p in publishes(client, uri)]
    assert versions == sorted(versions), versions  # never an older version after a newer one
    assert versions[-1] == 31
    assert published_shapes(diagnostics) == expected_shapes(final, path)


async def test_a_version_overtaken_while_being_checked_is_never_published(
    faulty_client: LanguageClient, project: Path
):
    client = faulty_client
    await initialize(client, project, options={"rewardkit": {"debounceMs": 0}})
    uri = open_document(
        client, project / "rewards.py", BAD + "# SLOW: this version takes 0.5 s to check\n"
    )
    change_document(client, uri, 2, GOOD)  # arrives while version 1 is being checked

    assert await wait_for_version(client, uri, 2) == []
    change_document(client, uri, 3, BAD)  # and the server is still checking new versions
    assert len(await wait_for_version(client, uri, 3)) == 2
    assert [p.version for p in publishes(client, uri)] == [2, 3]


async def test_pull_diagnostics(client: LanguageClient, project: Path):
    await initialize(client, project, capabilities=pull_capabilities())
    uri = open_document(client, project / "rewards.py", BAD)
    identifier = types.TextDocumentIdentifier(uri=uri)

    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=identifier)
    )
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
    assert {str(d.code) for d in report.items} == {"RK101", "RK102"}
    assert publishes(client, uri) == []  # a pulling client is not also pushed to (no duplicates)

    again = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(
            text_document=identifier, previous_result_id=report.result_id
        )
    )
    assert isinstance(again, types.RelatedUnchangedDocumentDiagnosticReport)

    change_document(client, uri, 2, GOOD)
    fixed = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(
            text_document=identifier, previous_result_id=report.result_id
        )
    )
    assert isinstance(fixed, types.RelatedFullDocumentDiagnosticReport)
    assert list(fixed.items) == []


TRAINING_SCRIPT = """from rewardkit import reward
from rewardkit.adapters import to_trl


def grade(response, gold):
    from math_verify import parse, verify

    if verify(parse(gold), parse(response)):
        return 1.0


@reward
def accuracy(final_response, answer):
    return grade(final_response, answer)


@reward(execution="process")
def brief(final_response):
    return -float(len(final_response))


if __name__ == "__main__":
    print(to_trl(brief)(prompts=["q"], completions=["four"]))
"""


async def test_the_training_checks_are_published_as_rewardkit_check_reports_them(
    client: LanguageClient, project: Path
):
    """Issue 32.9 in the editor: a helper importing math_verify (RK501), a helper that can
    return None (RK206), process mode in a script (RK504), as the CLI reports them."""
    path = project / "train.py"
    path.write_text(TRAINING_SCRIPT, encoding="utf-8")
    await initialize(client, project)
    uri = open_document(client, path, TRAINING_SCRIPT)
    diagnostics = await wait_for_version(client, uri, 1)
    published = sorted((str(d.code), d.range.start.line + 1) for d in diagnostics)
    assert published == [("RK206", 14), ("RK501", 14), ("RK504", 17)]
    cli = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "rewardkit", "check", "--format", "json", "--no-cache", str(path)],
        capture_output=True,
        text=True,
        cwd=project,
        check=False,
    )
    rows = json.loads(cli.stdout)
    assert sorted((r["code"], r["line"]) for r in rows) == published
