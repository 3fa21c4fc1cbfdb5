"""The rewardkit language server's session, in front of the checks engine: transports, what the
client negotiated, settings, open documents, checks and publishing. Its LSP methods are small
functions in :mod:`rewardkit_lsp.handlers` (which makes the server: ``create_server``).

The event loop speaks LSP: it reads the client's frames (:mod:`rewardkit_lsp.transport`, which
survives malformed ones), answers every request (invalid params with -32602, anything after
``shutdown`` with InvalidRequest), keeps settings and document versions, debounces changes and
publishes results. The engine (:mod:`rewardkit_lsp.engine_host`, imported on a thread after
``initialize`` is answered) answers with LSP JSON; a result is published only if the document is
still at the version that was checked.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

from lsprotocol import types
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from rewardkit_lsp.debounce import Debouncer
from rewardkit_lsp.engine_host import AnalysisError, EngineHost
from rewardkit_lsp.protocol import RewardkitProtocol
from rewardkit_lsp.settings import SECTION, ServerSettings, merge_settings
from rewardkit_lsp.transport import read_stdio, read_stream
from rewardkit_lsp.version import rewardkit_version

logger = logging.getLogger(__name__)

WATCHED_FILES = ("**/pyproject.toml", "**/*.jsonl", "**/*.json", "**/*.py")
"""Globs the client is asked to watch: configuration files, task schemas, and Python files
(their reward names count for RK401 across files)."""
CLIENT_MESSAGES = (
    types.TEXT_DOCUMENT_DID_OPEN,
    types.TEXT_DOCUMENT_DID_CHANGE,
    types.TEXT_DOCUMENT_DID_SAVE,
    types.TEXT_DOCUMENT_DID_CLOSE,
    types.TEXT_DOCUMENT_HOVER,
    types.TEXT_DOCUMENT_COMPLETION,
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CODE_ACTION_RESOLVE,
    types.TEXT_DOCUMENT_DIAGNOSTIC,
    types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
    types.WORKSPACE_DID_CHANGE_CONFIGURATION,
    types.WORKSPACE_EXECUTE_COMMAND,
    types.SHUTDOWN,
    types.EXIT,
)
"""What a client sends during a session; their converters are made at start-up
(:meth:`RewardkitLanguageServer.prepare_converters`)."""
SERVER_MESSAGES = (
    types.WINDOW_LOG_MESSAGE,
    types.WINDOW_SHOW_MESSAGE,
    types.WINDOW_SHOW_DOCUMENT,
    types.WORKSPACE_CONFIGURATION,
    types.CLIENT_REGISTER_CAPABILITY,
    types.WORKSPACE_DIAGNOSTIC_REFRESH,
)
"""What the server sends the client (converters made at start-up, with their answers')."""
MARKDOWN, PLAINTEXT = "markdown", "plaintext"


@dataclass(frozen=True)
class CheckResult:
    """The engine's diagnostics of one version of a document."""

    version: int | None
    generation: int
    diagnostics: list[dict[str, Any]]
    result_id: str
    """Changes whenever the diagnostics may have (pull diagnostics answer ``unchanged`` otherwise)."""


@dataclass
class OpenDocument:
    """The event loop's state of one open document (the engine keeps its own)."""

    uri: str
    path: str | None
    language_id: str
    checked: CheckResult | None = None
    analysing: asyncio.Task[CheckResult | None] | None = None
    """The analysis in flight, awaited by everyone who needs a result meanwhile."""
    failed: tuple[int | None, int, str] | None = None
    """(version, generation, traceback) of an analysis that raised (a bug, a stack or memory
    exhausted): that version is not analysed again; every caller gets the same error."""


class RewardkitLanguageServer(LanguageServer):
    """pygls server holding settings and document versions, in front of the engine."""

    def __init__(self, analysis: EngineHost | None = None) -> None:
        super().__init__(
            "rewardkit-lsp",
            rewardkit_version(),
            text_document_sync_kind=types.TextDocumentSyncKind.Full,
            protocol_cls=RewardkitProtocol,
        )
        self.analysis = analysis or EngineHost()
        self.analysis.on_notify = self._on_engine_message
        self.documents: dict[str, OpenDocument] = {}
        self.initial_settings = ServerSettings()
        self.global_settings = ServerSettings()
        self.folder_settings: dict[str, ServerSettings] = {}
        self.debouncer = Debouncer()
        self._reported_errors: set[str] = set()
        self._results = itertools.count(1)
        self._background: set[asyncio.Future[None]] = set()
        self.initialized = False
        self.generation = 0
        """Bumped whenever settings or configuration change: results of older ones are void."""
        self.settings_ready = asyncio.Event()
        """Set once the client's settings are known: no check runs with the wrong ones at startup."""

    @property
    def rk_protocol(self) -> RewardkitProtocol:
        assert isinstance(self.protocol, RewardkitProtocol)
        return self.protocol

    # -- transports -------------------------------------------------------------------------

    def start_io(self, stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> int:  # type: ignore[override]
        """Serve the client on stdio until ``exit`` or the end of stdin; return the exit status."""
        reader = stdin or sys.stdin.buffer
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))

        async def serve() -> None:
            ended = asyncio.Event()
            await read_stdio(reader, self.rk_protocol.receive, ended.set)
            await ended.wait()

        return self._run(serve)

    def start_tcp(self, host: str, port: int) -> int:  # type: ignore[override]
        """Serve one client connection on ``host:port`` (for debugging)."""

        async def serve() -> None:
            done = asyncio.Event()

            async def connection(
                reader: asyncio.StreamReader, writer: asyncio.StreamWriter
            ) -> None:
                self.protocol.set_writer(writer)  # type: ignore[arg-type]
                await read_stream(reader, self.rk_protocol.receive)
                done.set()

            server = await asyncio.start_server(connection, host, port)
            async with server:
                await done.wait()

        return self._run(serve)

    def _run(self, serve: Callable[[], Any]) -> int:
        status = 0 if self.protocol._shutdown else 1
        try:
            asyncio.run(serve())
            status = 0 if self.protocol._shutdown else 1
        except SystemExit as exit_request:  # pygls' ``exit`` handler
            status = int(exit_request.code or 0)
        except BrokenPipeError:
            logger.error("the client closed the connection")
        finally:
            self.analysis.close()
        return status

    def prepare_converters(self) -> None:
        """Generate now, at start-up, the converters of the messages a session exchanges.
        cattrs generates each on first use: the first ``didClose`` or hover comes in the middle
        of a burst of documents, and the generated code and strings (alive for good) would sit
        among the documents' objects and keep their memory from going back to the system once
        they close (docs/lsp.md, "Memory"). About 35 ms, before ``initialize`` is answered."""
        protocol = self.rk_protocol
        converter = protocol._converter
        for method in CLIENT_MESSAGES:
            incoming, answer, *_ = types.METHOD_TO_TYPES[method]
            converter.get_structure_hook(incoming)
            if answer is not None:
                converter.get_unstructure_hook(answer)
            protocol.get_message_type(method)  # pygls caches these by the method's name
        for method in SERVER_MESSAGES:
            outgoing, answer, *_ = types.METHOD_TO_TYPES[method]
            converter.get_unstructure_hook(outgoing)
            if answer is not None:
                converter.get_structure_hook(answer)
                protocol.get_result_type(method)

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
    def resolves_code_actions(self) -> bool:
        """Whether the client keeps a code action's ``data`` and asks for its edit when applied."""
        properties = self.client_capability("text_document.code_action.resolve_support.properties")
        return bool(
            self.client_supports("text_document.code_action.data_support")
            and properties
            and "edit" in properties
        )

    @property
    def pulls_diagnostics(self) -> bool:
        """Whether the client asks for diagnostics (``textDocument/diagnostic``) instead of being sent them."""
        return self.client_supports("text_document.diagnostic")

    def markup_kind(self, formats_capability: str) -> str:
        """The first format the client lists at ``formats_capability`` that we write (its order is
        its preference); plain text when it lists none (the spec's default)."""
        for kind in self.client_capability(formats_capability) or ():
            value = getattr(kind, "value", kind)
            if value in (MARKDOWN, PLAINTEXT):
                return value
        return PLAINTEXT

    @property
    def position_encoding(self) -> str:
        """The negotiated position encoding (``utf-16`` unless the client offered another)."""
        encoding = self.workspace.position_encoding or types.PositionEncodingKind.Utf16
        return getattr(encoding, "value", str(encoding))

    def workspace_roots(self) -> list[str]:
        """Filesystem paths of the workspace folders (or of the root, for clients without folders)."""
        uris = [folder.uri for folder in self.workspace.folders.values()]
        if not uris and self.workspace.root_uri:
            uris = [self.workspace.root_uri]
        return [path for uri in uris if (path := to_fs_path(uri))]

    # -- logging ----------------------------------------------------------------------------

    def log(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        """Send ``message`` to the client's log (``window/logMessage``)."""
        self.rk_protocol.send_json(
            {
                "jsonrpc": "2.0",
                "method": types.WINDOW_LOG_MESSAGE,
                "params": {"type": kind.value, "message": f"rewardkit: {message}"},
            }
        )

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
        """pygls-level errors go to the client's log, not a popup."""
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

    # -- the engine -------------------------------------------------------------------------

    def send_session(self) -> None:
        """Tell the engine what the client negotiated (encoding, markup, folders)."""
        self.background(
            self.analysis.request(
                "session",
                encoding=self.position_encoding,
                hover_markup=self.markup_kind("text_document.hover.content_format"),
                completion_markup=self.markup_kind(
                    "text_document.completion.completion_item.documentation_format"
                ),
                show_document=self.client_supports("window.show_document.support"),
                roots=self.workspace_roots(),
                disabled_actions=self.client_supports("text_document.code_action.disabled_support"),
            ),
            "starting the analysis session",
        )

    def background(self, awaitable: Any, what: str) -> None:
        """Run ``awaitable`` without waiting; its failure goes to the client's log."""

        async def run() -> None:
            try:
                await awaitable
            except Exception:
                self.log(f"{what} failed:\n{traceback.format_exc()}", types.MessageType.Error)

        task = asyncio.ensure_future(run())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _on_engine_message(self, kind: str, payload: Any) -> None:
        if kind == "publish":
            self.publish_related(payload)
        elif kind == "warn":
            self.warn_once(payload)
        elif kind == "log":
            self.log(payload)

    # -- checking ---------------------------------------------------------------------------

    async def check(self, uri: str) -> CheckResult | None:
        """The document's diagnostics at its current version; None once closed."""
        await self.settings_ready.wait()
        while True:
            document = self.documents.get(uri)
            if document is None:
                return None
            text_document = self.workspace.get_text_document(uri)
            version, generation = text_document.version, self.generation
            cached = document.checked
            if cached is not None and (cached.version, cached.generation) == (version, generation):
                return cached
            if document.failed is not None and document.failed[:2] == (version, generation):
                raise AnalysisError(document.failed[2])
            task = document.analysing
            if task is None or task.done():
                task = asyncio.ensure_future(
                    self._analyse(document, version, text_document.source, generation)
                )
                document.analysing = task
            result = await asyncio.shield(task)
            if result is None or (result.version, result.generation) == (version, generation):
                return result
            # an older version (or generation) was being analysed: now analyse the current one

    async def _analyse(
        self, document: OpenDocument, version: int | None, text: str, generation: int
    ) -> CheckResult | None:
        try:
            reply = await self.analysis.request(
                "analyze",
                uri=document.uri,
                path=document.path,
                language_id=document.language_id,
                version=version,
                settings=self.settings_for(document.uri),
                generation=generation,
                text=text,
            )
        except AnalysisError as error:
            document.failed = (version, generation, str(error))
            raise
        for message in reply["logs"]:
            self.log(message)
        if reply["config_changed"]:
            self.background(self.recheck_all(), "re-checking after a configuration change")
        result = CheckResult(version, generation, reply["diagnostics"], str(next(self._results)))
        current = document.checked
        if self.documents.get(document.uri) is document and (
            current is None or _newer(version, current.version)
        ):
            document.checked = result
        return result

    def is_current(self, uri: str, version: int | None, generation: int) -> bool:
        """Whether ``uri`` is open and still at ``version`` under ``generation``."""
        if uri not in self.documents or generation != self.generation:
            return False
        return self.workspace.get_text_document(uri).version == version

    async def publish(self, uri: str) -> None:
        """Check ``uri`` and push its diagnostics, unless the document moved on meanwhile."""
        result = await self.check(uri)
        if result is not None and self.is_current(uri, result.version, result.generation):
            self.send_diagnostics(uri, result.version, result.diagnostics)

    def send_diagnostics(
        self, uri: str, version: int | None, diagnostics: list[dict[str, Any]]
    ) -> None:
        params: dict[str, Any] = {"uri": uri, "diagnostics": diagnostics}
        if version is not None:
            params["version"] = version
        self.rk_protocol.send_json(
            {"jsonrpc": "2.0", "method": types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, "params": params}
        )

    def publish_related(
        self, related: list[tuple[str, int | None, int, list[dict[str, Any]]]]
    ) -> None:
        """Other documents whose RK401 across files changed: new results, pushed or refreshed."""
        changed = False
        for uri, version, generation, diagnostics in related:
            document = self.documents.get(uri)
            if document is None or not self.is_current(uri, version, generation):
                continue
            document.checked = CheckResult(
                version, generation, diagnostics, str(next(self._results))
            )
            changed = True
            if not self.pulls_diagnostics:
                self.send_diagnostics(uri, version, diagnostics)
        if changed and self.pulls_diagnostics:
            self.refresh_pulled_diagnostics()

    def refresh_pulled_diagnostics(self) -> None:
        if self.client_supports("workspace.diagnostics.refresh_support"):
            self.workspace_diagnostic_refresh(None)

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
                self.log(f"checking {uri} failed:\n{error_text()}", types.MessageType.Error)

        return run

    async def recheck_all(self) -> None:
        """Re-check every open document at once (configuration or settings changed)."""
        self.generation += 1
        if self.pulls_diagnostics:
            self.refresh_pulled_diagnostics()
            return
        for uri in list(self.documents):
            self.schedule(uri, 0)

    async def check_configuration(self) -> None:
        """Re-read the configuration if one of its files changed (for clients without watchers)."""
        reply = await self.analysis.request("config_check")
        if reply["changed"]:
            self.log(f"configuration changed ({', '.join(reply['changed'])}): re-checking")
            await self.recheck_all()


def _newer(version: int | None, than: int | None) -> bool:
    return version is None or than is None or version >= than


def error_text() -> str:
    """The current exception's traceback (the engine's own, when it raised there)."""
    error = sys.exc_info()[1]
    if isinstance(error, AnalysisError):
        return str(error)
    return traceback.format_exc()


__all__ = ["CheckResult", "OpenDocument", "RewardkitLanguageServer", "error_text"]
