"""The rewardkit language server: small LSP handlers over the static checks engine.

Each open document keeps one ``ModuleAnalyzer`` (the engine caches work per definition).
Checks run one at a time in a worker thread so the event loop keeps reading messages;
a result is published only if the document is still at the version that was checked.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import os
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import to_fs_path

from rewardkit._version import __version__
from rewardkit.checks import (
    CheckConfig,
    ConfigError,
    ModuleAnalysis,
    ModuleAnalyzer,
    suppression_fix,
)
from rewardkit_lsp.convert import (
    SELECT_RANGE_COMMAND,
    overlaps,
    span_range,
    to_code_action,
    to_lsp_diagnostic,
)
from rewardkit_lsp.debounce import Debouncer
from rewardkit_lsp.field_help import (
    field_completions,
    hover_markdown,
    parameter_at,
    reward_with_parameter_list_at,
)
from rewardkit_lsp.positions import LineIndex
from rewardkit_lsp.project_config import ProjectConfigs, with_editor_task_fields
from rewardkit_lsp.settings import SECTION, ServerSettings, merge_settings

logger = logging.getLogger(__name__)

PYTHON_SUFFIXES = (".py", ".pyi")
SYNTAX_ERROR_CODE = "RK900"
WATCHED_FILES = ("**/pyproject.toml", "**/*.jsonl", "**/*.json")
"""Globs the client is asked to watch: configuration files and task schemas."""

Handler = TypeVar("Handler", bound=Callable[..., Any])


@dataclass(frozen=True)
class CheckedVersion:
    """The engine's results for one version of a document, with its LSP diagnostics."""

    version: int | None
    text: str
    generation: int
    """The server's configuration generation it was checked under (see ``recheck_all``)."""
    settings: ServerSettings
    config: CheckConfig
    analysis: ModuleAnalysis
    index: LineIndex
    diagnostics: list[types.Diagnostic]


@dataclass
class OpenDocument:
    """Server-side state of one open document."""

    uri: str
    path: str | None
    language_id: str
    analyzer: ModuleAnalyzer = field(default_factory=ModuleAnalyzer)
    checked: CheckedVersion | None = None
    last_parsed: CheckedVersion | None = None
    """The latest version without a syntax error: hover and completion fall back to it for a
    definition that does not parse right now (the engine still has the others' rewards)."""
    skipped_reported: bool = False

    @property
    def is_python(self) -> bool:
        """Python by the client's language id, or by the file name when the id is missing."""
        if self.language_id:
            return self.language_id == "python"
        return (self.path or self.uri).endswith(PYTHON_SUFFIXES)


class RewardkitProtocol(LanguageServerProtocol):
    """pygls' protocol, minus a leak: pygls 2.1 files each notification's future under a fresh id
    in ``_request_futures`` and never removes it (about 2 KB per keystroke). Drop it once done."""

    def _check_handler_result(self, future: Any) -> None:
        super()._check_handler_result(future)
        finished = [key for key, pending in self._request_futures.items() if pending is future]
        for key in finished:
            del self._request_futures[key]


class RewardkitLanguageServer(LanguageServer):
    """pygls server holding per-document analyzers, settings and cached configurations."""

    def __init__(self) -> None:
        super().__init__(
            "rewardkit-lsp",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Full,
            protocol_cls=RewardkitProtocol,
        )
        self.documents: dict[str, OpenDocument] = {}
        self.initial_settings = ServerSettings()
        self.global_settings = ServerSettings()
        self.folder_settings: dict[str, ServerSettings] = {}
        self.configs = ProjectConfigs()
        self.debouncer = Debouncer()
        self.checker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rewardkit-check")
        self._reported_errors: set[str] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.generation = 0
        """Bumped whenever settings or configuration change: cached results of older ones are void."""
        self.settings_ready = asyncio.Event()
        """Set once the client's settings are known: no check runs with the wrong ones at startup."""

    # -- client facts ---------------------------------------------------------------------

    def client_capability(self, dotted: str) -> Any:
        """The client's capability at the dotted attribute path (``None`` when absent)."""
        value: Any = self.client_capabilities
        for part in dotted.split("."):
            value = getattr(value, part, None)
            if value is None:
                return None
        return value

    def client_supports(self, dotted: str) -> bool:
        """Whether the client's capability at the dotted attribute path is present and truthy."""
        return bool(self.client_capability(dotted))

    @property
    def pulls_diagnostics(self) -> bool:
        """Whether the client asks for diagnostics (``textDocument/diagnostic``) instead of being sent them."""
        return self.client_supports("text_document.diagnostic")

    def markup_kind(self, formats_capability: str) -> types.MarkupKind:
        """Markdown when the client lists it at ``formats_capability``, else plain text (the spec's default)."""
        formats = self.client_capability(formats_capability) or ()
        return (
            types.MarkupKind.Markdown
            if types.MarkupKind.Markdown in formats
            else types.MarkupKind.PlainText
        )

    @property
    def position_encoding(self) -> str:
        """The negotiated position encoding (``utf-16`` unless the client offered another)."""
        encoding = self.workspace.position_encoding or types.PositionEncodingKind.Utf16
        return getattr(encoding, "value", str(encoding))

    # -- logging ----------------------------------------------------------------------------

    def log(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        """Send ``message`` to the client's log (``window/logMessage``)."""
        self.window_log_message(types.LogMessageParams(type=kind, message=f"rewardkit: {message}"))

    def warn_once(self, message: str) -> None:
        """Log ``message`` and show it once per session (a broken config, a bad setting)."""
        self.log(message, types.MessageType.Warning)
        if message not in self._reported_errors:
            self._reported_errors.add(message)
            self.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Warning, message=f"rewardkit: {message}"
                )
            )

    def report_server_error(self, error: Exception, source: Any) -> None:
        """pygls-level errors (e.g. unparsable messages) go to the client's log, not a popup."""
        self.log(
            f"internal error ({getattr(source, '__name__', source)}): {error}",
            types.MessageType.Error,
        )

    # -- settings ---------------------------------------------------------------------------

    def apply_settings(self, base: ServerSettings, raw: Any, origin: str) -> ServerSettings:
        """``raw`` client settings over ``base``; problems are shown, the rest still applies."""
        settings, problems = merge_settings(base, raw)
        for problem in problems:
            self.warn_once(f"{problem} (from {origin}); ignored")
        return settings

    def settings_for(self, uri: str) -> ServerSettings:
        """Settings of the workspace folder holding ``uri`` (the innermost), else the global ones."""
        best: str | None = None
        for folder_uri in self.folder_settings:
            prefix = folder_uri.rstrip("/") + "/"
            if uri.startswith(prefix) and (best is None or len(folder_uri) > len(best)):
                best = folder_uri
        return self.folder_settings[best] if best is not None else self.global_settings

    async def fetch_settings(self) -> None:
        """Ask the client (``workspace/configuration``) for the global and per-folder settings."""
        folders = list(self.workspace.folders.values())
        items = [types.ConfigurationItem(section=SECTION)] + [
            types.ConfigurationItem(scope_uri=folder.uri, section=SECTION) for folder in folders
        ]
        answers = await self.workspace_configuration_async(types.ConfigurationParams(items=items))
        self.global_settings = self.apply_settings(
            self.initial_settings, answers[0] if answers else None, "workspace/configuration"
        )
        self.folder_settings = {
            folder.uri: self.apply_settings(
                self.global_settings, answer, f"workspace/configuration of {folder.uri}"
            )
            for folder, answer in zip(folders, answers[1:])
        }

    # -- configuration ------------------------------------------------------------------------

    def config_for(self, document: OpenDocument, settings: ServerSettings) -> CheckConfig:
        """The check configuration of ``document`` (runs in the checker thread: reads files)."""
        directory = os.path.dirname(document.path) if document.path else self._workspace_root()
        result = self.configs.for_directory(directory) if directory else CheckConfig()
        if isinstance(result, ConfigError):
            self.loop_call(self.warn_once, f"{result}; checking with the default configuration")
            result = CheckConfig()
        return with_editor_task_fields(result, settings.task_fields)

    def _workspace_root(self) -> str | None:
        root = self.workspace.root_path
        return root if root and os.path.isdir(root) else None

    def loop_call(self, function: Callable[..., Any], *args: Any) -> None:
        """Call ``function`` on the event loop (sending messages is not thread-safe)."""
        loop = self._loop
        if loop is None:
            function(*args)
        else:
            loop.call_soon_threadsafe(function, *args)

    # -- checking ---------------------------------------------------------------------------

    def _analyse(
        self, document: OpenDocument, version: int | None, text: str, generation: int
    ) -> CheckedVersion:
        """Run the engine on one version (checker thread); skipped documents get no diagnostics,
        nor do any with ``enable`` off (their rewards still serve hover and completion)."""
        settings = self.settings_for(document.uri)
        config = self.config_for(document, settings)
        index = LineIndex(text, self.position_encoding)
        too_big = len(text) > settings.max_file_size
        if not document.is_python or too_big:
            if too_big and not document.skipped_reported:
                document.skipped_reported = True
                self.loop_call(
                    self.log,
                    f"{document.uri} not checked: {len(text)} characters exceed "
                    f"{SECTION}.maxFileSize = {settings.max_file_size}",
                )
            analysis = ModuleAnalysis(skipped=True)
        else:
            analysis = document.analyzer.analyze(text, document.path, config)
        if not settings.enable:
            analysis = replace(analysis, diagnostics=())
        diagnostics = [to_lsp_diagnostic(d, index) for d in analysis.diagnostics]
        return CheckedVersion(
            version, text, generation, settings, config, analysis, index, diagnostics
        )

    async def check(self, uri: str) -> CheckedVersion | None:
        """The document's results at its current version (cached per version); None once closed."""
        await self.settings_ready.wait()
        document = self.documents.get(uri)
        if document is None:
            return None
        text_document = self.workspace.get_text_document(uri)
        version, text = text_document.version, text_document.source
        cached = document.checked
        if (
            cached is not None
            and (cached.version, cached.generation) == (version, self.generation)
            and cached.text == text
        ):
            return cached
        loop = asyncio.get_running_loop()
        self._loop = loop
        checked = await loop.run_in_executor(
            self.checker, self._analyse, document, version, text, self.generation
        )
        if self.documents.get(uri) is not document:
            return None
        if checked.generation == self.generation and (
            document.checked is None or _newer(checked.version, document.checked.version)
        ):
            document.checked = checked
            if checked.analysis.syntax_error is None:
                document.last_parsed = checked
        return checked

    def is_current(self, uri: str, version: int | None) -> bool:
        """Whether ``uri`` is open and still at ``version`` (else a result for it is stale)."""
        if uri not in self.documents:
            return False
        return self.workspace.get_text_document(uri).version == version

    async def publish(self, uri: str) -> None:
        """Check ``uri`` and push its diagnostics, unless the document moved on meanwhile."""
        checked = await self.check(uri)
        if checked is None or not self.is_current(uri, checked.version):
            return
        if checked.generation != self.generation:
            return  # settings changed meanwhile: the re-check they scheduled publishes instead
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri, version=checked.version, diagnostics=checked.diagnostics
            )
        )

    def schedule(self, uri: str, delay_ms: int) -> None:
        """Check ``uri`` after ``delay_ms`` (a newer request replaces a pending one)."""
        if self.pulls_diagnostics:
            return
        self.debouncer.schedule(uri, delay_ms / 1000, self.guard_job(uri, self.publish))

    def guard_job(self, uri: str, job: Callable[[str], Any]) -> Callable[[], Any]:
        """A background job whose errors are logged to the client instead of lost."""

        async def run() -> None:
            try:
                await job(uri)
            except asyncio.CancelledError:
                raise
            except Exception:
                self.log(
                    f"checking {uri} failed:\n{traceback.format_exc()}", types.MessageType.Error
                )

        return run

    async def recheck_all(self) -> None:
        """Re-check every open document at once (configuration or settings changed)."""
        self.generation += 1
        if self.pulls_diagnostics:
            if self.client_supports("workspace.diagnostics.refresh_support"):
                self.workspace_diagnostic_refresh(None)
            return
        for uri in list(self.documents):
            self.schedule(uri, 0)

    async def lookup_versions(self, uri: str) -> list[CheckedVersion]:
        """Where hover and completion look, in order: the current results, then, while the current
        text has a syntax error, the latest version that parsed (for the definition being typed)."""
        checked = await self.check(uri)
        if checked is None:
            return []
        document = self.documents.get(uri)
        fallback = document.last_parsed if document is not None else None
        if checked.analysis.syntax_error is None or fallback is None:
            return [checked]
        return [checked, fallback]


def _newer(version: int | None, than: int | None) -> bool:
    return version is None or than is None or version >= than


def guarded(handler: Handler) -> Handler:
    """Log a handler's exception to the client (``window/logMessage``) and answer ``None``.

    One bad request must never take the server down or leave the editor without an answer.
    """

    def report(ls: RewardkitLanguageServer, args: tuple[Any, ...]) -> None:
        about = ", ".join(type(arg).__name__ for arg in args)
        ls.log(
            f"{handler.__name__}({about}) failed:\n{traceback.format_exc()}",
            types.MessageType.Error,
        )

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
    """Take the initial settings from ``initializationOptions``."""
    ls.initial_settings = ls.apply_settings(
        ServerSettings(), params.initialization_options, "initializationOptions"
    )
    ls.global_settings = ls.initial_settings


async def initialized(ls: RewardkitLanguageServer, params: types.InitializedParams) -> None:
    """Ask for settings and for file watching of configuration files, when the client can."""
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
    """Folders came or went: their settings may differ."""
    if ls.client_supports("workspace.configuration"):
        await ls.fetch_settings()
    await ls.recheck_all()


async def did_change_watched_files(
    ls: RewardkitLanguageServer, params: types.DidChangeWatchedFilesParams
) -> None:
    """A ``pyproject.toml`` or task schema changed: re-read configuration and re-check."""
    paths = [path for change in params.changes if (path := to_fs_path(change.uri))]
    if ls.configs.invalidate(paths):
        ls.log(f"configuration changed ({', '.join(paths)}): re-checking open documents")
        await ls.recheck_all()


# -- document synchronisation and diagnostics ---------------------------------------------------


def did_open(ls: RewardkitLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    """Track the document and check it at once."""
    item = params.text_document
    ls.documents[item.uri] = OpenDocument(item.uri, to_fs_path(item.uri), item.language_id or "")
    ls.schedule(item.uri, 0)


def did_change(ls: RewardkitLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    """Check again once the user pauses for ``debounceMs``."""
    uri = params.text_document.uri
    if uri in ls.documents:
        ls.schedule(uri, ls.settings_for(uri).debounce_ms)


def did_save(ls: RewardkitLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
    """Check at once on save (replacing a pending debounced check)."""
    if params.text_document.uri in ls.documents:
        ls.schedule(params.text_document.uri, 0)


def did_close(ls: RewardkitLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
    """Forget the document and clear its diagnostics."""
    uri = params.text_document.uri
    ls.debouncer.cancel(uri)
    if ls.documents.pop(uri, None) is not None:
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
        )


async def pull_diagnostics(
    ls: RewardkitLanguageServer, params: types.DocumentDiagnosticParams
) -> types.DocumentDiagnosticReport:
    """``textDocument/diagnostic``: the current version's diagnostics (unchanged if already sent)."""
    checked = await ls.check(params.text_document.uri)
    if checked is None:
        return types.RelatedFullDocumentDiagnosticReport(items=[])
    result_id = f"{checked.version}:{hash(checked.text)}:{hash(checked.settings)}:{checked.config.fingerprint}"
    if params.previous_result_id == result_id:
        return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
    return types.RelatedFullDocumentDiagnosticReport(items=checked.diagnostics, result_id=result_id)


# -- code actions, hover, completion ---------------------------------------------------------------


async def code_action(
    ls: RewardkitLanguageServer, params: types.CodeActionParams
) -> list[types.CodeAction] | None:
    """Quick fixes of the diagnostics in the range: the engine's fixes, then a suppression comment."""
    only = params.context.only
    if only and not any(types.CodeActionKind.QuickFix.value.startswith(kind) for kind in only):
        return None
    uri = params.text_document.uri
    checked = await ls.check(uri)
    if checked is None or not ls.is_current(uri, checked.version):
        return None
    start = checked.index.from_client(params.range.start)
    end = checked.index.from_client(params.range.end)
    select_in = checked.text if ls.client_supports("window.show_document.support") else None
    actions = []
    for diagnostic, lsp_diagnostic in zip(checked.analysis.diagnostics, checked.diagnostics):
        if not overlaps(
            diagnostic.span, (start.line + 1, start.column), (end.line + 1, end.column)
        ):
            continue
        fixes = [*diagnostic.fixes]
        if diagnostic.code != SYNTAX_ERROR_CODE:
            fixes.append(suppression_fix(diagnostic, checked.text))
        actions += [
            to_code_action(
                fix, lsp_diagnostic, uri, checked.version, checked.index, select_in=select_in
            )
            for fix in fixes
        ]
    return actions


async def select_range(ls: RewardkitLanguageServer, uri: str, selection: types.Range) -> None:
    """Run after a placeholder fix: ask the client to select the placeholder (``window/showDocument``)."""
    if not isinstance(uri, str) or not isinstance(selection, types.Range):
        raise TypeError(
            f"{SELECT_RANGE_COMMAND}: expected (uri, range), got ({uri!r}, {selection!r})"
        )
    await ls.window_show_document_async(
        types.ShowDocumentParams(uri=uri, take_focus=True, selection=selection)
    )


async def hover(ls: RewardkitLanguageServer, params: types.HoverParams) -> types.Hover | None:
    """What a reward parameter receives: a predefined field's documentation or a task field's source."""
    for checked in await ls.lookup_versions(params.text_document.uri):
        position = checked.index.from_client(params.position)
        found = parameter_at(checked.analysis.rewards, position.line + 1, position.column)
        if found is None:
            continue
        reward, parameter = found
        return types.Hover(
            contents=types.MarkupContent(
                kind=ls.markup_kind("text_document.hover.content_format"),
                value=hover_markdown(reward, parameter, checked.config),
            ),
            range=span_range(parameter.span, checked.index),
        )
    return None


async def completion(
    ls: RewardkitLanguageServer, params: types.CompletionParams
) -> types.CompletionList | None:
    """Inside a reward's parameter list: the field names it does not declare yet."""
    for checked in await ls.lookup_versions(params.text_document.uri):
        position = checked.index.from_client(params.position)
        line, column = position.line + 1, position.column
        reward = reward_with_parameter_list_at(checked.analysis.rewards, line, column)
        if reward is None:
            continue
        kind = ls.markup_kind("text_document.completion.completion_item.documentation_format")
        items = field_completions(reward, checked.config, line, column, kind)
        return types.CompletionList(is_incomplete=False, items=items)
    return None


def shutdown(ls: RewardkitLanguageServer, params: None) -> None:
    """Stop background checks."""
    for uri in list(ls.documents):
        ls.debouncer.cancel(uri)
    ls.checker.shutdown(wait=False, cancel_futures=True)


def create_server() -> RewardkitLanguageServer:
    """A new server with every handler registered (one per process; tests start processes)."""
    server = RewardkitLanguageServer()
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
                identifier=SECTION, inter_file_dependencies=False, workspace_diagnostics=False
            ),
        ),
        (
            types.TEXT_DOCUMENT_CODE_ACTION,
            code_action,
            types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
        ),
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


__all__ = ["RewardkitLanguageServer", "create_server"]
