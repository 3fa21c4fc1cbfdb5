"""The LSP methods the rewardkit language server answers: one small function each, registered
by :func:`create_server` on a :class:`~rewardkit_lsp.server.RewardkitLanguageServer` (which
holds the session: settings, documents, checks and publishing).

Every handler is :func:`guarded`: an exception is logged to the client and the request answered
with ``None``, never taking the server down. Lifecycle and settings first, then document
synchronisation and diagnostics, then code actions, hover and completion.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from lsprotocol import types
from pygls.uris import to_fs_path

from rewardkit_lsp import memory
from rewardkit_lsp.capabilities import structure_capabilities
from rewardkit_lsp.commands import FIX_ALL, QUICK_FIX, SELECT_RANGE_COMMAND
from rewardkit_lsp.engine_host import EngineHost
from rewardkit_lsp.server import (
    WATCHED_FILES,
    OpenDocument,
    RewardkitLanguageServer,
    error_text,
)
from rewardkit_lsp.settings import SECTION, ServerSettings

Handler = TypeVar("Handler", bound=Callable[..., Any])


def guarded(handler: Handler) -> Handler:
    """Log a handler's exception to the client (``window/logMessage``) and answer ``None``.

    One bad request must never take the server down or leave the editor without an answer.
    """

    def report(ls: RewardkitLanguageServer, args: tuple[Any, ...]) -> None:
        about = ", ".join(type(arg).__name__ for arg in args)
        ls.log(f"{handler.__name__}({about}) failed:\n{error_text()}", types.MessageType.Error)

    if inspect.iscoroutinefunction(handler):

        @functools.wraps(handler)
        async def async_wrapper(ls: RewardkitLanguageServer, *args: Any) -> Any:
            try:
                return await handler(ls, *args)
            except Exception:
                report(ls, args)
                return None

        return async_wrapper  # type: ignore[return-value]

    @functools.wraps(handler)
    def wrapper(ls: RewardkitLanguageServer, *args: Any) -> Any:
        try:
            return handler(ls, *args)
        except Exception:
            report(ls, args)
            return None

    return wrapper  # type: ignore[return-value]


# -- lifecycle and settings -------------------------------------------------------------------


def initialize(ls: RewardkitLanguageServer, params: types.InitializeParams) -> None:
    """Take the initial settings from ``initializationOptions``; once answered, load the engine
    (on a thread) and tell it the session."""
    ls.initial_settings = ls.apply_settings(
        ServerSettings(), params.initialization_options, "initializationOptions"
    )
    ls.global_settings = ls.initial_settings
    ls.initialized = True
    ls.prepare_converters()
    memory.reserve_await_iterators()
    asyncio.get_running_loop().call_soon(ls.send_session)  # after pygls wrote the answer


async def initialized(ls: RewardkitLanguageServer, params: types.InitializedParams) -> None:
    """Ask for settings and for file watching of configuration files, when the client can."""
    memory.freeze()  # start-up objects (lsprotocol's classes, cattrs' hooks) are never garbage
    try:
        if ls.client_supports("workspace.configuration"):
            await ls.fetch_settings()
    finally:
        ls.settings_ready.set()
    if ls.client_supports("workspace.did_change_watched_files.dynamic_registration"):
        watchers = [types.FileSystemWatcher(glob_pattern=glob) for glob in WATCHED_FILES]
        await ls.client_register_capability_async(
            types.RegistrationParams(
                registrations=[
                    types.Registration(
                        id="rewardkit-watch-config",
                        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                        register_options=types.DidChangeWatchedFilesRegistrationOptions(
                            watchers=watchers
                        ),
                    )
                ]
            )
        )


async def did_change_configuration(
    ls: RewardkitLanguageServer, params: types.DidChangeConfigurationParams
) -> None:
    """Settings changed: ask the client when it can (VS Code sends ``settings: null``)."""
    if ls.client_supports("workspace.configuration"):
        await ls.fetch_settings()
    elif params.settings is not None:
        ls.global_settings = ls.apply_settings(
            ls.initial_settings, params.settings, "didChangeConfiguration"
        )
        ls.folder_settings = {}
    await ls.recheck_all()


async def did_change_workspace_folders(
    ls: RewardkitLanguageServer, params: types.DidChangeWorkspaceFoldersParams
) -> None:
    """Folders came or went: their settings may differ, and so do the files RK401 covers."""
    if ls.client_supports("workspace.configuration"):
        await ls.fetch_settings()
    ls.send_session()
    await ls.recheck_all()


async def did_change_watched_files(
    ls: RewardkitLanguageServer, params: types.DidChangeWatchedFilesParams
) -> None:
    """A ``pyproject.toml``, task schema or Python file changed: re-read what depends on it."""
    paths = [path for change in params.changes if (path := to_fs_path(change.uri))]
    reply = await ls.analysis.request("files_changed", paths=paths)
    if reply["config"]:
        ls.log(f"configuration changed ({', '.join(paths)}): re-checking open documents")
        await ls.recheck_all()


# -- document synchronisation and diagnostics ---------------------------------------------------


def _watches_files(ls: RewardkitLanguageServer) -> bool:
    return ls.client_supports("workspace.did_change_watched_files.dynamic_registration")


def did_open(ls: RewardkitLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    """Track the document and check it at once (the check also looks for a changed configuration)."""
    item = params.text_document
    ls.documents[item.uri] = OpenDocument(item.uri, to_fs_path(item.uri), item.language_id or "")
    ls.schedule(item.uri, 0)
    if not _watches_files(ls):
        ls.background(ls.analysis.request("rescan"), "re-reading the workspace's files")


def did_change(ls: RewardkitLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    """Check again once the user pauses for ``debounceMs``."""
    uri = params.text_document.uri
    if uri in ls.documents:
        ls.schedule(uri, ls.settings_for(uri).debounce_ms)


async def did_save(ls: RewardkitLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
    """Check at once on save; a client without file watching may have changed the configuration."""
    uri = params.text_document.uri
    if uri not in ls.documents:
        return
    ls.schedule(uri, 0)
    if not _watches_files(ls):
        await ls.check_configuration()
        ls.background(ls.analysis.request("rescan"), "re-reading the workspace's files")


async def did_close(ls: RewardkitLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
    """Forget the document and clear its diagnostics; its file on disk counts again for RK401."""
    uri = params.text_document.uri
    ls.debouncer.cancel(uri)
    if ls.documents.pop(uri, None) is not None:
        ls.send_diagnostics(uri, None, [])
        await ls.analysis.request("close", uri=uri)


async def pull_diagnostics(
    ls: RewardkitLanguageServer, params: types.DocumentDiagnosticParams
) -> dict[str, Any]:
    """``textDocument/diagnostic``: the current version's diagnostics (unchanged if already sent)."""
    result = await ls.check(params.text_document.uri)
    if result is None:
        return {"kind": "full", "items": []}
    if params.previous_result_id == result.result_id:
        return {"kind": "unchanged", "resultId": result.result_id}
    return {"kind": "full", "items": result.diagnostics, "resultId": result.result_id}


# -- code actions, hover, completion ---------------------------------------------------------------


async def _ask(ls: RewardkitLanguageServer, kind: str, uri: str, **payload: Any) -> Any:
    """Ask the engine about the current version of ``uri`` (``None`` if it moved on)."""
    result = await ls.check(uri)
    if result is None or not ls.is_current(uri, result.version, result.generation):
        return None
    return await ls.analysis.request(kind, uri=uri, version=result.version, **payload)


def _wants(only: list[str] | None, kind: str) -> bool:
    """Whether a request limited to ``only`` kinds (``None``: any) asks for actions of ``kind``
    (kinds are hierarchical: ``source`` covers ``source.fixAll.rewardkit``)."""
    if not only:
        return True
    return any(kind == wanted or kind.startswith(f"{wanted}.") for wanted in only)


async def code_action(ls: RewardkitLanguageServer, params: types.CodeActionParams) -> Any:
    """Quick fixes of the diagnostics in the range (the engine's fixes, then a suppression
    comment), and ``source.fixAll.rewardkit`` (every safe fix, as ``rewardkit check --fix``).

    Clients that resolve code actions get them without edits: the fixes' libcst transforms run
    on ``codeAction/resolve`` only. Fix-all is left out of automatic requests (the lightbulb)."""
    only = [getattr(kind, "value", kind) for kind in params.context.only or ()]
    quick_fixes = _wants(only, QUICK_FIX)
    automatic = params.context.trigger_kind == types.CodeActionTriggerKind.Automatic
    fix_all = _wants(only, FIX_ALL) and not (automatic and not only)
    if not quick_fixes and not fix_all:
        return None
    start, end = params.range.start, params.range.end
    return await _ask(
        ls,
        "code_action",
        params.text_document.uri,
        start=(start.line, start.character),
        end=(end.line, end.character),
        quick_fixes=quick_fixes,
        fix_all=fix_all,
        lazy=ls.resolves_code_actions,
    )


async def code_action_resolve(ls: RewardkitLanguageServer, params: types.CodeAction) -> Any:
    """The edit of a code action listed without one (the fix's libcst transform runs now)."""
    action = ls.protocol._converter.unstructure(params)
    data = action.get("data")
    uri = data.get("uri") if isinstance(data, dict) else None
    if not isinstance(uri, str) or await ls.check(uri) is None:
        return action
    return await ls.analysis.request("code_action_resolve", action=action)


async def select_range(ls: RewardkitLanguageServer, uri: str, selection: types.Range) -> None:
    """Run after a placeholder fix: ask the client to select the placeholder (``window/showDocument``)."""
    if not isinstance(uri, str) or not isinstance(selection, types.Range):
        raise TypeError(
            f"{SELECT_RANGE_COMMAND}: expected (uri, range), got ({uri!r}, {selection!r})"
        )
    await ls.window_show_document_async(
        types.ShowDocumentParams(uri=uri, take_focus=True, selection=selection)
    )


async def hover(ls: RewardkitLanguageServer, params: types.HoverParams) -> Any:
    """What a reward parameter receives: a predefined field's documentation or a task field's
    source, and what its diagnostics say about it (the same did-you-mean)."""
    position = params.position
    return await _ask(
        ls, "hover", params.text_document.uri, line=position.line, character=position.character
    )


async def completion(ls: RewardkitLanguageServer, params: types.CompletionParams) -> Any:
    """Inside a reward's parameter list: the field names it does not declare yet."""
    position = params.position
    return await _ask(
        ls, "completion", params.text_document.uri, line=position.line, character=position.character
    )


def shutdown(ls: RewardkitLanguageServer, params: None) -> None:
    """Stop background checks."""
    for uri in list(ls.documents):
        ls.debouncer.cancel(uri)


def create_server(analysis: EngineHost | None = None) -> RewardkitLanguageServer:
    """A new server with every handler registered (one per process; tests start processes)."""
    server = RewardkitLanguageServer(analysis)
    server.protocol._converter.register_structure_hook(
        types.ClientCapabilities, structure_capabilities
    )
    features: list[tuple[str, Callable[..., Any], Any]] = [
        (types.INITIALIZE, initialize, None),
        (types.INITIALIZED, initialized, None),
        (types.SHUTDOWN, shutdown, None),
        (types.WORKSPACE_DID_CHANGE_CONFIGURATION, did_change_configuration, None),
        (types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, did_change_workspace_folders, None),
        (types.WORKSPACE_DID_CHANGE_WATCHED_FILES, did_change_watched_files, None),
        (types.TEXT_DOCUMENT_DID_OPEN, did_open, None),
        (types.TEXT_DOCUMENT_DID_CHANGE, did_change, None),
        (types.TEXT_DOCUMENT_DID_SAVE, did_save, types.SaveOptions(include_text=False)),
        (types.TEXT_DOCUMENT_DID_CLOSE, did_close, None),
        (
            types.TEXT_DOCUMENT_DIAGNOSTIC,
            pull_diagnostics,
            types.DiagnosticOptions(
                identifier=SECTION, inter_file_dependencies=True, workspace_diagnostics=False
            ),
        ),
        (
            types.TEXT_DOCUMENT_CODE_ACTION,
            code_action,
            types.CodeActionOptions(
                code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL], resolve_provider=True
            ),
        ),
        (types.CODE_ACTION_RESOLVE, code_action_resolve, None),
        (types.TEXT_DOCUMENT_HOVER, hover, None),
        (
            types.TEXT_DOCUMENT_COMPLETION,
            completion,
            types.CompletionOptions(trigger_characters=["(", ","]),
        ),
    ]
    for method, handler, options in features:
        server.feature(method, options)(guarded(handler))
    server.command(SELECT_RANGE_COMMAND)(guarded(select_range))
    return server


__all__ = ["create_server", "guarded"]
