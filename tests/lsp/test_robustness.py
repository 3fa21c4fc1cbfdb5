"""Position encodings, non-Python and huge documents, and handler errors that must not kill the server."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_engine_view import expected_shapes, published_shapes
from lsp_harness import (
    change_document,
    initialize,
    open_document,
    publishes,
    push_capabilities,
    wait_for_version,
    wait_until,
)
from lsprotocol import types
from pytest_lsp import LanguageClient

from rewardkit.checks import check_source, load_config

EMOJI_MODULE = """from rewardkit import reward


@reward
def tagged(final_response: str) -> float:
    if "🎯🎯" in final_response: return "hit"
    return 1.0
"""
"""Two emoji (two UTF-16 units each) on the line before the error's column."""

GOOD_MODULE = """from rewardkit import reward


@reward
def fine(final_response: str) -> float:
    return 1.0
"""


def _error_line(text: str) -> tuple[int, str]:
    line = 5
    return line, text.splitlines()[line]


async def test_columns_are_utf16_units_after_an_emoji(client: LanguageClient, project: Path):
    path = project / "emoji.py"
    await initialize(client, project)
    uri = open_document(client, path, EMOJI_MODULE)
    diagnostics = await wait_for_version(client, uri, 1)

    line, text = _error_line(EMOJI_MODULE)
    on_line = [d for d in diagnostics if d.range.start.line == line]
    assert on_line, diagnostics
    engine_column = next(
        d.column
        for d in check_source(EMOJI_MODULE, str(path), load_config(project))
        if d.line == line + 1
    )
    assert engine_column > text.index("🎯🎯")  # the error starts after both emoji
    assert on_line[0].range.start.character == engine_column + 2  # each emoji is two UTF-16 units
    assert published_shapes(diagnostics) == expected_shapes(EMOJI_MODULE, path)


async def test_client_may_choose_utf32_positions(client: LanguageClient, project: Path):
    capabilities = push_capabilities()
    capabilities.general = types.GeneralClientCapabilities(
        position_encodings=[types.PositionEncodingKind.Utf32]
    )
    result = await initialize(client, project, capabilities=capabilities)
    assert result.capabilities.position_encoding == types.PositionEncodingKind.Utf32
    uri = open_document(client, project / "emoji.py", EMOJI_MODULE)
    diagnostics = await wait_for_version(client, uri, 1)
    line, _ = _error_line(EMOJI_MODULE)
    engine_columns = [
        d.column
        for d in check_source(EMOJI_MODULE, None, load_config(project))
        if d.line == line + 1
    ]
    assert [
        d.range.start.character for d in diagnostics if d.range.start.line == line
    ] == engine_columns


async def test_non_python_and_huge_documents_answer_quickly_and_the_server_stays_up(
    client: LanguageClient, project: Path
):
    await initialize(client, project)
    text_uri = open_document(client, project / "notes.md", EMOJI_MODULE, language="markdown")
    assert await wait_for_version(client, text_uri, 1) == []
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=text_uri),
            position=types.Position(line=4, character=12),
        )
    )
    assert hover is None

    huge = (
        EMOJI_MODULE
        + "\n"
        + "x = 1  # filler line to make the module several megabytes long\n" * 40_000
    )
    huge_uri = open_document(client, project / "huge.py", huge)
    assert await wait_for_version(client, huge_uri, 1) == []
    await wait_until(
        lambda: any(
            "not checked" in m.message and "huge.py" in m.message for m in client.log_messages
        ),
        "the log line saying the huge file is not checked",
    )
    for method_result in (
        await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=huge_uri),
                position=types.Position(line=4, character=14),
            )
        ),
        await client.text_document_completion_async(
            types.CompletionParams(
                text_document=types.TextDocumentIdentifier(uri=huge_uri),
                position=types.Position(line=4, character=14),
            )
        ),
    ):
        assert method_result is None

    uri = open_document(client, project / "emoji.py", EMOJI_MODULE)
    assert await wait_for_version(client, uri, 1)  # still serving Python files


async def test_handler_errors_are_logged_and_the_server_keeps_serving(
    faulty_client: LanguageClient, project: Path
):
    client = faulty_client
    await initialize(client, project)
    boom_uri = open_document(client, project / "boom.py", GOOD_MODULE + "# BOOM\n")
    await wait_until(
        lambda: any(
            m.type == types.MessageType.Error and "injected engine failure" in m.message
            for m in client.log_messages
        ),
        "the background check's error in window/logMessage",
    )
    errors_before = sum(m.type == types.MessageType.Error for m in client.log_messages)
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=boom_uri),
            position=types.Position(line=4, character=12),
        )
    )
    assert hover is None
    await wait_until(
        lambda: sum(m.type == types.MessageType.Error for m in client.log_messages) > errors_before,
        "the hover handler's error in window/logMessage",
    )
    assert any("hover" in m.message and "Traceback" in m.message for m in client.log_messages)

    uri = open_document(client, project / "fine.py", EMOJI_MODULE)
    assert await wait_for_version(client, uri, 1)  # the server is alive and checking


@pytest.mark.parametrize(("marker", "error"), [("RECURSE", "RecursionError"), ("HOG", "MemoryError")])
async def test_an_analysis_that_exhausts_the_stack_or_memory_is_survived(
    faulty_client: LanguageClient, project: Path, marker: str, error: str
):
    client = faulty_client
    await initialize(client, project, options={"rewardkit": {"debounceMs": 0}})
    bad_uri = open_document(client, project / "bad.py", GOOD_MODULE + f"# {marker}\n")
    await wait_until(
        lambda: any(
            m.type == types.MessageType.Error and error in m.message and "bad.py" in m.message
            for m in client.log_messages
        ),
        f"the {error} in window/logMessage",
    )
    uri = open_document(client, project / "fine.py", EMOJI_MODULE)
    assert await wait_for_version(client, uri, 1)  # the server serves the other documents

    change_document(client, bad_uri, 2, GOOD_MODULE)  # the failing text is gone
    assert await wait_for_version(client, bad_uri, 2) == []
    assert publishes(client, bad_uri)[-1].version == 2
