"""Helpers of the end-to-end tests: a recording pytest-lsp client, capabilities, waiting, applying edits."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Union

from lsprotocol import types
from pytest_lsp import LanguageClient, make_test_lsp_client

HERE = Path(__file__).parent
SERVER_COMMAND = [sys.executable, "-m", "rewardkit_lsp"]
FAULTY_SERVER_COMMAND = [sys.executable, str(HERE / "faulty_server.py")]
WAIT_LIMIT = 30.0
"""Seconds a test waits for the server before failing (a hang guard, not a timing assertion)."""


def recording_client() -> LanguageClient:
    """pytest-lsp's client that also keeps every publishDiagnostics and capability registration."""
    client = make_test_lsp_client()
    client.published = []  # type: ignore[attr-defined]
    client.registrations = []  # type: ignore[attr-defined]
    features = client.protocol.fm.features
    default_publish = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def publish(params: types.PublishDiagnosticsParams) -> None:
        client.published.append(params)  # type: ignore[attr-defined]
        default_publish(params)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish

    # lsprotocol 2025.0.0 reads any code action that has a ``command`` as a Command; the spec (and
    # VS Code, Neovim) tell them apart by the type of ``command``: a string only for a Command.
    converter = client.protocol._converter

    def structure_action(value: Any, _: Any) -> types.Command | types.CodeAction:
        kind = types.Command if isinstance(value.get("command"), str) else types.CodeAction
        return converter.structure(value, kind)

    converter.register_structure_hook(Union[types.Command, types.CodeAction], structure_action)  # noqa: UP007

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        client.registrations.extend(params.registrations)  # type: ignore[attr-defined]

    return client


def push_capabilities(
    *, configuration: bool = True, watch_files: bool = True, hover_formats: list[str] | None = None
) -> types.ClientCapabilities:
    """A client that is sent diagnostics (no pull), answers workspace/configuration, watches files
    (unless ``watch_files`` is False, as Neovim 0.7-0.9) and reads Markdown hovers (or ``hover_formats``)."""
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            configuration=configuration,
            workspace_folders=True,
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
                dynamic_registration=True
            )
            if watch_files
            else None,
        ),
        text_document=types.TextDocumentClientCapabilities(
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True),
            hover=types.HoverClientCapabilities(
                content_format=[types.MarkupKind(kind) for kind in hover_formats or ["markdown"]]
            ),
            code_action=types.CodeActionClientCapabilities(
                code_action_literal_support=types.ClientCodeActionLiteralOptions(
                    code_action_kind=types.ClientCodeActionKindOptions(
                        value_set=[types.CodeActionKind.QuickFix]
                    )
                ),
                is_preferred_support=True,
            ),
            completion=types.CompletionClientCapabilities(
                completion_item=types.ClientCompletionItemOptions(
                    documentation_format=[types.MarkupKind.Markdown]
                )
            ),
        ),
        window=types.WindowClientCapabilities(
            show_document=types.ShowDocumentClientCapabilities(support=True)
        ),
    )


def pull_capabilities() -> types.ClientCapabilities:
    """A client that pulls diagnostics (textDocument/diagnostic), as VS Code does."""
    capabilities = push_capabilities()
    assert capabilities.text_document is not None
    assert capabilities.workspace is not None
    capabilities.text_document.diagnostic = types.DiagnosticClientCapabilities()
    capabilities.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(
        refresh_support=True
    )
    return capabilities


async def initialize(
    client: LanguageClient,
    root: Path,
    *,
    options: Any = None,
    capabilities: types.ClientCapabilities | None = None,
    folders: list[Path] | None = None,
) -> types.InitializeResult:
    """Initialise the session rooted at ``root`` and wait for the server's settings round-trip."""
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities or push_capabilities(),
            root_uri=root.as_uri(),
            workspace_folders=[
                types.WorkspaceFolder(uri=folder.as_uri(), name=folder.name)
                for folder in folders or [root]
            ],
            initialization_options=options,
        )
    )
    return result


async def wait_until(condition: Callable[[], Any], what: str) -> Any:
    """Poll ``condition`` until it is truthy; fail naming ``what`` if the server never gets there."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_LIMIT
    while True:
        value = condition()
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


def publishes(client: LanguageClient, uri: str) -> list[types.PublishDiagnosticsParams]:
    """Every publishDiagnostics the client received for ``uri``, in order."""
    return [p for p in client.published if p.uri == uri]  # type: ignore[attr-defined]


async def wait_for_version(
    client: LanguageClient, uri: str, version: int
) -> list[types.Diagnostic]:
    """Diagnostics published for ``uri`` at ``version``."""
    params = await wait_until(
        lambda: next((p for p in reversed(publishes(client, uri)) if p.version == version), None),
        f"diagnostics of {uri} version {version}",
    )
    return list(params.diagnostics)


def open_document(
    client: LanguageClient, path: Path, text: str, version: int = 1, language: str = "python"
) -> str:
    """Send didOpen for ``path`` with ``text``; return its URI."""
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id=language, version=version, text=text
            )
        )
    )
    return uri


def change_document(client: LanguageClient, uri: str, version: int, text: str) -> None:
    """Send a full-text didChange (the server syncs full documents)."""
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def _offset(text: str, position: types.Position) -> int:
    """Index into ``text`` of a UTF-16 LSP position, computed independently of the server."""
    lines = re.split(r"(?<=\r\n)|(?<=\r)(?!\n)|(?<=\n)", text)
    start = sum(len(line) for line in lines[: position.line])
    line = lines[position.line] if position.line < len(lines) else ""
    units = 0
    for index, char in enumerate(line):
        if units >= position.character:
            return start + index
        units += 2 if ord(char) > 0xFFFF else 1
    return start + len(line.rstrip("\r\n"))


def apply_lsp_edits(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP text edits (UTF-16 ranges) as an editor does: last edit first."""
    spans = sorted(
        ((_offset(text, e.range.start), _offset(text, e.range.end), e.new_text) for e in edits),
        reverse=True,
    )
    for start, end, new_text in spans:
        text = text[:start] + new_text + text[end:]
    return text


def edits_of(action: types.CodeAction, uri: str) -> list[types.TextEdit]:
    """The text edits a code action makes to ``uri``."""
    assert action.edit is not None, action
    assert action.edit.document_changes, action
    edits: list[types.TextEdit] = []
    for change in action.edit.document_changes:
        assert isinstance(change, types.TextDocumentEdit)
        assert change.text_document.uri == uri
        edits += [e for e in change.edits if isinstance(e, types.TextEdit)]
    return edits
