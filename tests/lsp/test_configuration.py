"""Configuration: pyproject reload on watched-file changes, client settings, multi-root workspaces."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_harness import (
    change_document,
    initialize,
    open_document,
    publishes,
    pull_capabilities,
    push_capabilities,
    wait_for_version,
    wait_until,
)
from lsprotocol import types
from pytest_lsp import LanguageClient

MODULE = """from rewardkit import reward


@reward
def qa(final_response: str, answers: str) -> float:
    return float(final_response == answers)
"""


def _codes(diagnostics) -> set[str]:
    return {str(d.code) for d in diagnostics}


async def _next_publish(client: LanguageClient, uri: str, seen: int) -> list[types.Diagnostic]:
    params = await wait_until(
        lambda: publishes(client, uri)[seen] if len(publishes(client, uri)) > seen else None,
        f"a new publish for {uri}",
    )
    return list(params.diagnostics)


async def test_pyproject_change_reloads_task_fields(client: LanguageClient, tmp_path: Path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "demo"\n', encoding="utf-8")
    await initialize(client, tmp_path)
    await wait_until(lambda: client.registrations, "the file watcher registration")  # type: ignore[attr-defined]
    registration = client.registrations[0]  # type: ignore[attr-defined]
    assert registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
    globs = [w["globPattern"] for w in registration.register_options["watchers"]]
    assert "**/pyproject.toml" in globs

    uri = open_document(client, tmp_path / "qa.py", MODULE)
    assert "RK101" not in _codes(
        await wait_for_version(client, uri, 1)
    )  # no task fields: RK101 off

    seen = len(publishes(client, uri))
    pyproject.write_text('[tool.rewardkit]\ntask_fields = ["answer"]\n', encoding="utf-8")
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=pyproject.as_uri(), type=types.FileChangeType.Changed)]
        )
    )
    diagnostics = await _next_publish(client, uri, seen)
    unknown = [d for d in diagnostics if d.code == "RK101"]
    assert len(unknown) == 1
    assert "answer" in unknown[0].message


async def test_task_schema_change_reloads_fields(client: LanguageClient, tmp_path: Path):
    schema = tmp_path / "train.jsonl"
    schema.write_text('{"question": "q", "answers": "a"}\n', encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.rewardkit]\ntask_schema = "train.jsonl"\n', encoding="utf-8"
    )
    await initialize(client, tmp_path)
    uri = open_document(client, tmp_path / "qa.py", MODULE)
    assert "RK101" not in _codes(await wait_for_version(client, uri, 1))  # answers is a dataset field

    seen = len(publishes(client, uri))
    schema.write_text('{"question": "q", "answer": "a"}\n', encoding="utf-8")
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=schema.as_uri(), type=types.FileChangeType.Changed)]
        )
    )
    assert "RK101" in _codes(await _next_publish(client, uri, seen))


async def test_did_change_configuration_with_null_settings_asks_the_client(
    client: LanguageClient, tmp_path: Path
):
    await initialize(client, tmp_path, options={"rewardkit": {"debounceMs": 0}})
    uri = open_document(client, tmp_path / "qa.py", MODULE)
    assert "RK101" not in _codes(await wait_for_version(client, uri, 1))

    seen = len(publishes(client, uri))
    client.set_configuration({"taskFields": ["answer"]}, section="rewardkit")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    diagnostics = await _next_publish(client, uri, seen)
    assert "RK101" in _codes(diagnostics)

    seen = len(publishes(client, uri))
    client.set_configuration({"enable": False}, section="rewardkit")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    assert await _next_publish(client, uri, seen) == []


async def test_initialization_options_apply_and_bad_values_are_reported(
    client: LanguageClient, tmp_path: Path
):
    await initialize(
        client,
        tmp_path,
        options={"rewardkit": {"taskFields": ["answer"], "debounceMs": "soon"}},
        capabilities=push_capabilities(configuration=False),
    )
    uri = open_document(client, tmp_path / "qa.py", MODULE)
    assert "RK101" in _codes(await wait_for_version(client, uri, 1))
    await wait_until(
        lambda: any("debounceMs" in m.message for m in client.log_messages),
        "the bad-setting report",
    )
    assert any("debounceMs" in m.message for m in client.messages)

    change_document(client, uri, 2, MODULE + "\n")
    assert "RK101" in _codes(
        await wait_for_version(client, uri, 2)
    )  # the default debounce still works

    seen = len(publishes(client, uri))
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"rewardkit": {"enable": False}})
    )
    assert await _next_publish(client, uri, seen) == []


async def test_multi_root_folders_have_their_own_config_and_settings(
    client: LanguageClient, tmp_path: Path
):
    first, second, third = tmp_path / "first", tmp_path / "second", tmp_path / "third"
    for folder, fields in ((first, '["answer"]'), (second, '["answers"]'), (third, '["answer"]')):
        folder.mkdir()
        (folder / "pyproject.toml").write_text(
            f"[tool.rewardkit]\ntask_fields = {fields}\n", encoding="utf-8"
        )
    client.set_configuration({"enable": False}, section="rewardkit", scope_uri=third.as_uri())
    await initialize(client, tmp_path, folders=[first, second, third])

    uris = [open_document(client, folder / "qa.py", MODULE) for folder in (first, second, third)]
    first_diagnostics, second_diagnostics, third_diagnostics = [
        await wait_for_version(client, uri, 1) for uri in uris
    ]
    assert "RK101" in _codes(first_diagnostics)
    assert "RK101" not in _codes(second_diagnostics)
    assert third_diagnostics == []  # checking disabled in that folder's settings


async def test_a_pulling_client_is_asked_to_refresh_when_the_config_changes(
    client: LanguageClient, tmp_path: Path
):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.rewardkit]\ntask_fields = ["answers"]\n', encoding="utf-8")
    await initialize(client, tmp_path, capabilities=pull_capabilities())
    uri = open_document(client, tmp_path / "qa.py", MODULE)
    identifier = types.TextDocumentIdentifier(uri=uri)
    before = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=identifier)
    )
    assert "RK101" not in _codes(before.items)

    pyproject.write_text('[tool.rewardkit]\ntask_fields = ["answer"]\n', encoding="utf-8")
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=pyproject.as_uri(), type=types.FileChangeType.Changed)]
        )
    )
    await wait_until(lambda: client.diagnostic_refresh_count > 0, "workspace/diagnostic/refresh")
    after = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(
            text_document=identifier, previous_result_id=before.result_id
        )
    )
    assert isinstance(after, types.RelatedFullDocumentDiagnosticReport)
    assert "RK101" in _codes(after.items)


async def test_a_broken_pyproject_is_reported_and_defaults_are_used(
    client: LanguageClient, tmp_path: Path
):
    (tmp_path / "pyproject.toml").write_text(
        "[tool.rewardkit]\ntask_fields = 3\n", encoding="utf-8"
    )
    await initialize(client, tmp_path)
    uri = open_document(
        client, tmp_path / "qa.py", MODULE.replace("final_response", "final_respone")
    )
    assert "RK102" in _codes(await wait_for_version(client, uri, 1))  # still checked, with defaults
    await wait_until(lambda: client.messages, "the configuration error shown to the user")
    assert "pyproject.toml" in client.messages[0].message
    assert "task_fields" in client.messages[0].message


async def test_an_added_workspace_folder_gets_its_own_settings(
    client: LanguageClient, tmp_path: Path
):
    first, added = tmp_path / "first", tmp_path / "added"
    for folder in (first, added):
        folder.mkdir()
        (folder / "pyproject.toml").write_text(
            '[tool.rewardkit]\ntask_fields = ["answer"]\n', encoding="utf-8"
        )
    await initialize(client, tmp_path, folders=[first])
    client.set_configuration({"enable": False}, section="rewardkit", scope_uri=added.as_uri())
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri=added.as_uri(), name="added")], removed=[]
            )
        )
    )
    kept, disabled = (
        open_document(client, first / "qa.py", MODULE),
        open_document(client, added / "qa.py", MODULE),
    )
    assert "RK101" in _codes(await wait_for_version(client, kept, 1))
    await wait_until(
        lambda: (
            publishes(client, disabled) and list(publishes(client, disabled)[-1].diagnostics) == []
        ),
        "no diagnostics in the folder whose settings disable them",
    )


async def test_a_client_without_file_watching_sees_a_changed_pyproject(
    client: LanguageClient, tmp_path: Path
):
    """Neovim 0.7-0.9 declare no file watching: the server notices by modification time."""
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "demo"\n', encoding="utf-8")
    await initialize(
        client,
        tmp_path,
        options={"rewardkit": {"debounceMs": 0}},
        capabilities=push_capabilities(watch_files=False),
    )
    uri = open_document(client, tmp_path / "qa.py", MODULE)
    assert "RK101" not in _codes(await wait_for_version(client, uri, 1))
    assert not client.registrations  # type: ignore[attr-defined]

    pyproject.write_text('[tool.rewardkit]\ntask_fields = ["answer"]\n', encoding="utf-8")
    seen = len(publishes(client, uri))
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    await wait_until(
        lambda: any("RK101" in _codes(p.diagnostics) for p in publishes(client, uri)[seen:]),
        "RK101 after the pyproject changed and the document was saved",
    )

    pyproject.write_text('[tool.rewardkit]\ntask_fields = ["answers"]\n', encoding="utf-8")
    change_document(client, uri, 2, MODULE + "\n")  # an edit notices it too
    assert "RK101" not in _codes(await wait_for_version(client, uri, 2))


@pytest.mark.parametrize("watch_files", [True, False], ids=["watch-event", "no-watching"])
async def test_a_changed_dataset_counts_even_when_task_fields_are_also_declared(
    client: LanguageClient, tmp_path: Path, watch_files: bool
):
    """With both ``task_fields`` and ``task_schema`` (every dataset key also declared), the
    dataset file is still watched and re-read: on a watch event, or, for a client that declares
    no file watching, at the next edit."""
    schema = tmp_path / "train.jsonl"
    schema.write_text('{"question": "q", "answers": "a"}\n', encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.rewardkit]\ntask_fields = ["question", "answers"]\ntask_schema = "train.jsonl"\n',
        encoding="utf-8",
    )
    await initialize(
        client,
        tmp_path,
        options={"rewardkit": {"debounceMs": 0}},
        capabilities=push_capabilities(watch_files=watch_files),
    )
    text = MODULE.replace("answers", "question, extra")
    uri = open_document(client, tmp_path / "qa.py", text)
    assert "RK101" in _codes(await wait_for_version(client, uri, 1))  # `extra` is no field yet

    schema.write_text('{"question": "q", "answers": "a", "extra": 1}\n', encoding="utf-8")
    if watch_files:
        seen = len(publishes(client, uri))
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=schema.as_uri(), type=types.FileChangeType.Changed)]
            )
        )
        assert "RK101" not in _codes(await _next_publish(client, uri, seen))
    else:
        change_document(client, uri, 2, text + "\n")
        assert "RK101" not in _codes(await wait_for_version(client, uri, 2))
