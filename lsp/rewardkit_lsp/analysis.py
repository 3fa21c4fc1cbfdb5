"""The analysis side of the server: documents, the engine, configuration and the workspace's rewards.

It runs on the server's event loop (:mod:`rewardkit_lsp.engine_host`) and answers the server's
requests with LSP JSON: diagnostics to publish, hovers, completions, code actions. Each open
document keeps one ``ModuleAnalyzer`` (the engine caches work per top-level definition), so an
edit re-analyses only what it touched.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from rewardkit.checks import (
    CheckConfig,
    ConfigError,
    Diagnostic,
    Fix,
    FixUnavailable,
    LibcstMissing,
    ModuleAnalysis,
    ModuleAnalyzer,
    filter_diagnostics,
    fix_module,
    fixable,
    inserts_placeholder,
    resolve_fix,
    suppression_fix,
    text_edits,
)
from rewardkit_lsp.commands import FIX_ALL
from rewardkit_lsp.convert import (
    overlaps,
    span_range,
    to_code_action,
    to_lsp_diagnostic,
    workspace_edit,
)
from rewardkit_lsp.field_help import (
    PLAINTEXT,
    field_completions,
    hover_text,
    parameter_at,
    reward_with_parameter_list_at,
)
from rewardkit_lsp.positions import LineIndex
from rewardkit_lsp.project_config import ProjectConfigs, with_editor_task_fields
from rewardkit_lsp.settings import SECTION, ServerSettings
from rewardkit_lsp.workspace_index import WorkspaceRewards, WorkspaceScan, included, normal_path

PYTHON_SUFFIXES = (".py", ".pyi")
SYNTAX_ERROR_CODE = "RK900"
FIX_ALL_TITLE = "rewardkit: fix all safe fixes"


Related = list[tuple[str, int | None, int, list[dict[str, Any]]]]
"""Other open documents whose diagnostics changed: (uri, version, generation, diagnostics)."""


@dataclass(frozen=True)
class Session:
    """What the client declared, as the server negotiated it."""

    encoding: str = "utf-16"
    hover_markup: str = PLAINTEXT
    completion_markup: str = PLAINTEXT
    show_document: bool = False
    disabled_actions: bool = False
    """The client shows disabled code actions (greyed out, with the reason)."""
    roots: tuple[str, ...] = ()
    """Workspace folders (filesystem paths)."""


@dataclass(frozen=True)
class CheckedVersion:
    """The engine's results for one version of a document, with its LSP diagnostics."""

    version: int | None
    text: str
    generation: int
    """The server's configuration generation it was checked under."""
    settings: ServerSettings
    config: CheckConfig
    analysis: ModuleAnalysis
    index: LineIndex
    diagnostics: tuple[Diagnostic, ...]
    """The document's findings: the engine's, plus RK401 across the workspace's files."""
    across_files: tuple[Diagnostic, ...]
    lsp: list[dict[str, Any]]


@dataclass
class DocumentState:
    """Analysis-side state of one open document."""

    uri: str
    path: str | None
    language_id: str
    analyzer: ModuleAnalyzer = field(default_factory=ModuleAnalyzer)
    checked: CheckedVersion | None = None
    last_parsed: CheckedVersion | None = None
    """The latest version without a syntax error: hover and completion fall back to it for a
    definition that does not parse right now (the engine still has the others' rewards)."""
    skipped_reported: bool = False
    workspace_path: str | None = None
    """Its normalised path when it takes part in RK401 across files (a checked workspace file)."""
    names: frozenset[str] = frozenset()
    """Its reward names at the latest analysis (casefolded)."""

    @property
    def is_python(self) -> bool:
        """Python by the client's language id, or by the file name when the id is missing."""
        if self.language_id:
            return self.language_id == "python"
        return (self.path or self.uri).endswith(PYTHON_SUFFIXES)


class AnalysisService:
    """Answers the server's requests; one instance per server, used from one thread."""

    def __init__(self, notify: Callable[[str, Any], None]) -> None:
        self.notify = notify
        """Sends an unsolicited message to the event loop (``publish``, ``log``)."""
        self.session = Session()
        self.documents: dict[str, DocumentState] = {}
        self.configs = ProjectConfigs()
        self.workspace = WorkspaceRewards()
        self.scan = WorkspaceScan(self.workspace, self.configs)
        self._warned: set[str] = set()
        self._stale: set[str] = set()
        """Open documents whose RK401 across files may have changed: re-derived and published
        together when the client pauses (:meth:`publish_stale`), not once per change. 800
        unsaved documents sharing a name, opened at once, otherwise re-published each other
        640,000 times (a gigabyte of queued messages)."""

    # -- dispatch ---------------------------------------------------------------------------

    def handle(self, kind: str, payload: dict[str, Any]) -> Any:
        """Answer one request of the event loop."""
        return getattr(self, f"on_{kind}")(**payload)

    @property
    def has_background_work(self) -> bool:
        return self.scan.busy

    @property
    def has_stale(self) -> bool:
        return bool(self._stale)

    def publish_stale(self) -> None:
        """Re-derive RK401 of the open documents marked stale; publish those that changed."""
        stale, self._stale = self._stale, set()
        related: Related = []
        for uri in sorted(stale):
            document = self.documents.get(uri)
            checked = document.checked if document is not None else None
            if document is None or checked is None:
                continue
            updated = self._with_findings(checked, document)
            if updated.across_files == checked.across_files:
                continue
            document.checked = updated
            related.append((uri, updated.version, updated.generation, updated.lsp))
        if related:
            self.notify("publish", related)

    def background_step(self) -> None:
        """One file of the workspace scan; publishes the documents whose RK401 changed when done."""
        self.scan.step()
        if not self.scan.busy or len(self.scan.changed_names) > 200:
            self.flush_workspace_changes()

    def flush_workspace_changes(self) -> None:
        names = frozenset(self.scan.changed_names)
        self.scan.changed_names.clear()
        if names:
            self._mark_stale(None, names)

    # -- requests ---------------------------------------------------------------------------

    def on_session(
        self,
        encoding: str,
        hover_markup: str,
        completion_markup: str,
        show_document: bool,
        roots: list[str],
        disabled_actions: bool = False,
    ) -> None:
        self.session = Session(
            encoding, hover_markup, completion_markup, show_document, disabled_actions, tuple(roots)
        )
        self.workspace.set_roots(roots)
        for document in self.documents.values():  # folders came or went: display paths change
            if document.workspace_path is not None:
                self.workspace.set_live(document.workspace_path, None)
            document.workspace_path = self._workspace_path(document)
            document.checked = None  # re-derived at the next check (the server re-checks all)
        self.scan.start(fresh=True)

    def on_config_check(self) -> dict[str, Any]:
        """Re-read the configuration if a file it came from changed (clients without watchers)."""
        changed = self.configs.refresh()
        return {"changed": changed}

    def on_files_changed(self, paths: list[str]) -> dict[str, Any]:
        """Watched files changed: configuration files drop the cache, Python files are re-read."""
        config = self.configs.invalidate(paths)
        python = [path for path in paths if path.endswith(PYTHON_SUFFIXES)]
        if python:
            self.scan.update(python)
            self.flush_workspace_changes()
        return {"config": config}

    def on_rescan(self) -> None:
        """Walk the workspace again in idle time (files may have changed outside the editor)."""
        self.scan.start()

    def on_analyze(
        self,
        uri: str,
        path: str | None,
        language_id: str,
        version: int | None,
        settings: ServerSettings,
        generation: int,
        text: str,
    ) -> dict[str, Any]:
        """Check one version of a document (the engine re-analyses only the definitions that
        changed since its previous version)."""
        document = self.documents.get(uri)
        if document is None:
            document = self.documents[uri] = DocumentState(uri, path, language_id)
            document.workspace_path = self._workspace_path(document)
        logs: list[str] = []
        changed = self.configs.refresh()
        if changed:
            logs.append(f"configuration changed ({', '.join(sorted(changed))}): re-checking")
        checked = document.checked
        if (
            changed
            or checked is None
            or (checked.version, checked.generation, checked.settings)
            != (version, generation, settings)
            or checked.text != text
        ):
            checked = self._check(document, version, text, settings, generation, logs)
        self._update_workspace(document)
        return {
            "version": version,
            "generation": generation,
            "diagnostics": checked.lsp,
            "logs": logs,
            "config_changed": bool(changed),
        }

    def on_close(self, uri: str) -> None:
        document = self.documents.pop(uri, None)
        self._stale.discard(uri)
        if document is None or document.workspace_path is None:
            return
        path = document.workspace_path
        before = self._names(path)
        self.workspace.set_live(path, None)
        self.scan.update([path])  # the file on disk counts again
        self._mark_stale(None, before | self._names(path))

    def on_hover(self, uri: str, version: int | None, line: int, character: int) -> Any:
        for checked in self._lookup(uri, version):
            position = checked.index.from_client(line, character)
            found = parameter_at(checked.analysis.rewards, position.line + 1, position.column)
            if found is None:
                continue
            reward, parameter = found
            return {
                "contents": {
                    "kind": self.session.hover_markup,
                    "value": hover_text(
                        reward,
                        parameter,
                        checked.config,
                        checked.diagnostics,
                        self.session.hover_markup,
                    ),
                },
                "range": span_range(parameter.span, checked.index),
            }
        return None

    def on_completion(self, uri: str, version: int | None, line: int, character: int) -> Any:
        for checked in self._lookup(uri, version):
            position = checked.index.from_client(line, character)
            engine_line, column = position.line + 1, position.column
            reward = reward_with_parameter_list_at(checked.analysis.rewards, engine_line, column)
            if reward is None:
                continue
            items = field_completions(
                reward, checked.config, engine_line, column, self.session.completion_markup
            )
            return {"isIncomplete": False, "items": items}
        return None

    def on_code_action(
        self,
        uri: str,
        version: int | None,
        start: tuple[int, int],
        end: tuple[int, int],
        quick_fixes: bool = True,
        fix_all: bool = False,
        lazy: bool = False,
    ) -> list[dict[str, Any]] | None:
        """Quick fixes of the diagnostics in the range (the engine's fixes, then a suppression
        comment) and the fix-all action. With ``lazy`` (the client resolves code actions), a
        fix's edits are computed by ``codeAction/resolve``: listing actions never runs libcst."""
        document = self.documents.get(uri)
        checked = document.checked if document is not None else None
        if checked is None or checked.version != version:
            return None
        actions = []
        if quick_fixes:
            first = checked.index.from_client(*start)
            last = checked.index.from_client(*end)
            span = ((first.line + 1, first.column), (last.line + 1, last.column))
            actions += self._quick_fixes(uri, checked, span, lazy)
        if fix_all and any(fixable(d, unsafe=False) for d in checked.diagnostics):
            action = {
                "title": FIX_ALL_TITLE,
                "kind": FIX_ALL,
                "data": {"uri": uri, "version": version},
            }
            actions.append(action if lazy else self._resolved_fix_all(checked, document, action))
        return [action for action in actions if action is not None]

    def _quick_fixes(
        self,
        uri: str,
        checked: CheckedVersion,
        span: tuple[tuple[int, int], tuple[int, int]],
        lazy: bool,
    ) -> list[dict[str, Any]]:
        select_in = checked.text if self.session.show_document else None
        actions = []
        for number, (diagnostic, lsp_diagnostic) in enumerate(
            zip(checked.diagnostics, checked.lsp)
        ):
            if not overlaps(diagnostic.span, *span):
                continue
            fixes = [*diagnostic.fixes]
            if diagnostic.code != SYNTAX_ERROR_CODE:
                fixes.append(suppression_fix(diagnostic, checked.text))
            for fix_number, fix in enumerate(fixes):
                if fix.applicability == "display" and not self.session.disabled_actions:
                    continue
                unresolved = fix.applicability != "display" and fix.transform is not None
                if unresolved and (not lazy or inserts_placeholder(fix)):
                    fix = self._resolved(checked.text, fix)
                    if fix is None:
                        continue
                data = {"uri": uri, "version": checked.version, "fix": [number, fix_number]}
                actions.append(
                    to_code_action(
                        fix,
                        lsp_diagnostic,
                        uri,
                        checked.version,
                        checked.index,
                        select_in=select_in,
                        data=data,
                    )
                )
        return actions

    def on_code_action_resolve(self, action: dict[str, Any]) -> dict[str, Any]:
        """The edit of an action listed without one (a quick fix, or fix-all), for the version
        it was listed for; an action of an older version comes back unchanged (no edit)."""
        data = action.get("data")
        if not isinstance(data, dict):
            return action
        document = self.documents.get(str(data.get("uri")))
        checked = document.checked if document is not None else None
        if document is None or checked is None or checked.version != data.get("version"):
            return action
        if action.get("kind") == FIX_ALL:
            return self._resolved_fix_all(checked, document, action) or action
        diagnostic_number, fix_number = data["fix"]
        diagnostic = checked.diagnostics[diagnostic_number]
        fix = self._resolved(checked.text, diagnostic.fixes[fix_number])
        if fix is None:
            return action
        edit = workspace_edit(document.uri, checked.version, fix.edits, checked.index)
        return {**action, "edit": edit}

    def _resolved(self, text: str, fix: Fix) -> Fix | None:
        """``fix`` with its edits (libcst runs here); ``None`` when it does not apply."""
        try:
            return resolve_fix(text, fix)
        except LibcstMissing as error:
            self._warn(f"quick fixes are not available: {error}")
        except FixUnavailable as error:
            self.notify("log", f"fix not offered: {error}")
        return None

    def _resolved_fix_all(
        self, checked: CheckedVersion, document: DocumentState, action: dict[str, Any]
    ) -> dict[str, Any] | None:
        """``action`` with the edit applying every safe fix, as ``rewardkit check --fix`` does."""
        try:
            fixed = fix_module(
                checked.text, document.path, checked.config, analysis=checked.analysis
            )
        except LibcstMissing as error:
            self._warn(f"fix-all is not available: {error}")
            return None
        edits = text_edits(checked.text, fixed.source)
        return {
            **action,
            "edit": workspace_edit(document.uri, checked.version, edits, checked.index),
        }

    # -- checking ---------------------------------------------------------------------------

    def _workspace_path(self, document: DocumentState) -> str | None:
        if not document.path or not document.is_python:
            return None
        path = normal_path(document.path)
        if not self.workspace.roots:
            return path  # a single file: RK401 across the open documents only
        root = self.workspace.root_of(path)
        if root is None or not included(path, root, self.configs):
            return None
        return path

    def _config_for(self, document: DocumentState, settings: ServerSettings) -> CheckConfig:
        directory = os.path.dirname(document.path) if document.path else self._root()
        result = self.configs.for_directory(directory) if directory else CheckConfig()
        if isinstance(result, ConfigError):
            self._warn(f"{result}; checking with the default configuration")
            result = CheckConfig()
        return with_editor_task_fields(result, settings.task_fields)

    def _root(self) -> str | None:
        for root in self.session.roots:
            if os.path.isdir(root):
                return root
        return None

    def _warn(self, message: str) -> None:
        if message not in self._warned:
            self._warned.add(message)
            self.notify("warn", message)

    def _check(
        self,
        document: DocumentState,
        version: int | None,
        text: str,
        settings: ServerSettings,
        generation: int,
        logs: list[str],
    ) -> CheckedVersion:
        """Run the engine on one version; skipped documents get no diagnostics, nor do any with
        ``enable`` off (their rewards still serve hover, completion and RK401 of other files)."""
        config = self._config_for(document, settings)
        index = LineIndex(text, self.session.encoding)
        too_big = len(text) > settings.max_file_size
        if not document.is_python or too_big:
            if too_big and not document.skipped_reported:
                document.skipped_reported = True
                logs.append(
                    f"{document.uri} not checked: {len(text)} characters exceed "
                    f"{SECTION}.maxFileSize = {settings.max_file_size}"
                )
            analysis = ModuleAnalysis(skipped=True)
        else:
            analysis = document.analyzer.analyze(text, document.path, config)
        if document.workspace_path is not None:
            self.workspace.set_live(document.workspace_path, analysis)
        checked = self._with_findings(
            CheckedVersion(
                version, text, generation, settings, config, analysis, index, (), (), []
            ),
            document,
        )
        document.checked = checked
        if analysis.syntax_error is None:
            document.last_parsed = checked
        return checked

    def _with_findings(self, checked: CheckedVersion, document: DocumentState) -> CheckedVersion:
        """``checked`` with its diagnostics: the engine's plus RK401 across files, as the CLI
        merges them (filtered by the document's suppressions and configuration, then sorted)."""
        if not checked.settings.enable:
            return replace(checked, diagnostics=(), across_files=(), lsp=[])
        across: list[Diagnostic] = []
        if document.workspace_path is not None and checked.analysis.syntax_error is None:
            across = self.workspace.cross_file(document.workspace_path)
        diagnostics = list(checked.analysis.diagnostics)
        if across:
            diagnostics.extend(filter_diagnostics(across, checked.text, checked.config))
            diagnostics.sort(key=Diagnostic.sort_key)
        lsp = [to_lsp_diagnostic(d, checked.index) for d in diagnostics]
        return replace(checked, diagnostics=tuple(diagnostics), across_files=tuple(across), lsp=lsp)

    # -- the workspace's rewards ------------------------------------------------------------

    def _names(self, path: str) -> frozenset[str]:
        entry = self.workspace.entry(path)
        return entry.names if entry is not None else frozenset()

    def _update_workspace(self, document: DocumentState) -> None:
        """After ``document`` was analysed: mark the other open documents whose RK401 changed."""
        path = document.workspace_path
        if path is None:
            return
        names, previous = self._names(path), document.names
        document.names = names
        if not self.workspace.sharing(path, previous):
            return  # no other file defines any of its names, before or after
        changed = (names | previous) & self.workspace.take_changed()
        if changed:
            self._mark_stale(document.uri, changed)

    def _mark_stale(self, changed_uri: str | None, names: frozenset[str]) -> None:
        """The open documents (other than ``changed_uri``) defining ``names`` need their RK401
        re-derived (:meth:`publish_stale`)."""
        for uri, document in self.documents.items():
            if uri == changed_uri or uri in self._stale or document.checked is None:
                continue
            if document.workspace_path is not None and self._names(document.workspace_path) & names:
                self._stale.add(uri)

    def _lookup(self, uri: str, version: int | None) -> list[CheckedVersion]:
        """Where hover and completion look, in order: the results of ``version``, then, while it
        has a syntax error, the latest version that parsed (for the definition being typed)."""
        document = self.documents.get(uri)
        if document is None or document.checked is None or document.checked.version != version:
            return []
        checked = document.checked
        fallback = document.last_parsed
        if checked.analysis.syntax_error is None or fallback is None:
            return [checked]
        return [checked, fallback]


__all__ = ["AnalysisService", "CheckedVersion", "DocumentState", "Session"]
