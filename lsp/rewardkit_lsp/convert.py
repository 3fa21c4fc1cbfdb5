"""Engine results as LSP JSON: diagnostics, quick fixes, ranges in the client's units.

Plain dictionaries in the shapes of the LSP specification, built by the engine's side of the
server (which never imports lsprotocol: no structuring on the edit path) and sent to the client
as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rewardkit.checks import Diagnostic, Fix, Severity, Span, TextEdit, apply_edits
from rewardkit_lsp.commands import QUICK_FIX, SELECT_RANGE_COMMAND
from rewardkit_lsp.positions import LineIndex, Range

SOURCE = "rewardkit"
"""The ``source`` of every diagnostic, as ``rewardkit check`` names itself."""

_SEVERITIES = {Severity.ERROR: 1, Severity.WARNING: 2, Severity.INFO: 3}
"""LSP ``DiagnosticSeverity``: Error, Warning, Information."""


def span_range(span: Span, index: LineIndex) -> Range:
    """Client range of an engine span."""
    return index.engine_range(span.line, span.column, span.end_line, span.end_column)


def to_lsp_diagnostic(diagnostic: Diagnostic, index: LineIndex) -> dict[str, Any]:
    """The LSP diagnostic of an engine diagnostic: same code, severity and message."""
    lsp: dict[str, Any] = {
        "range": index.engine_range(
            diagnostic.line, diagnostic.column, diagnostic.end_line, diagnostic.end_column
        ),
        "severity": _SEVERITIES[diagnostic.severity],
        "code": diagnostic.code,
        "source": SOURCE,
        "message": diagnostic.message,
    }
    if diagnostic.data:
        lsp["data"] = dict(diagnostic.data)
    return lsp


def fix_title(fix: Fix) -> str:
    """A fix's title in the editor: an unsafe fix says so, and why."""
    if fix.applicability != "unsafe":
        return fix.title
    if fix.unsafe_reason:
        return f"{fix.title} (unsafe: {fix.unsafe_reason})"
    return f"{fix.title} (unsafe)"


def workspace_edit(
    uri: str, version: int | None, edits: Sequence[TextEdit], index: LineIndex
) -> dict[str, Any]:
    """A ``WorkspaceEdit`` applying engine ``edits`` to the document at ``version``."""
    changes = [
        {
            "range": index.engine_range(edit.line, edit.column, edit.end_line, edit.end_column),
            "newText": edit.new_text,
        }
        for edit in edits
    ]
    return {
        "documentChanges": [{"textDocument": {"uri": uri, "version": version}, "edits": changes}]
    }


def to_code_action(
    fix: Fix,
    diagnostic: dict[str, Any],
    uri: str,
    version: int | None,
    index: LineIndex,
    *,
    select_in: str | None = None,
    data: Any = None,
) -> dict[str, Any]:
    """A quick-fix code action applying ``fix`` to the document at ``version``.

    A fix whose edits are not computed yet (its libcst transform runs on
    ``codeAction/resolve``) gets ``data`` instead of an edit; a ``display`` fix is disabled, with
    the reason. Given ``select_in`` (the document's
    text; pass it when the client can show documents), a fix with a ``selection`` (a
    placeholder to type over) also runs a command that selects it.
    """
    action: dict[str, Any] = {
        "title": fix_title(fix),
        "kind": QUICK_FIX,
        "diagnostics": [diagnostic],
    }
    if fix.applicability == "display":  # shown, never applied: the editor greys it out
        action["disabled"] = {"reason": fix.unsafe_reason or "this fix cannot be applied"}
    elif fix.transform is not None and not fix.edits:
        action["data"] = data
    else:
        action["edit"] = workspace_edit(uri, version, fix.edits, index)
    if fix.is_preferred and fix.safe:
        action["isPreferred"] = True
    if fix.selection is not None and select_in is not None:
        # The selection is a range of the fixed text: convert it with that text's lines.
        after = LineIndex(apply_edits(select_in, fix.edits), index.encoding)
        action["command"] = {
            "title": "Select the placeholder",
            "command": SELECT_RANGE_COMMAND,
            "arguments": [uri, span_range(fix.selection, after)],
        }
    return action


def overlaps(span: Span, start: tuple[int, int], end: tuple[int, int]) -> bool:
    """Whether ``span`` touches the range from ``start`` to ``end`` (1-based line, column pairs)."""
    return (span.line, span.column) <= end and start <= (span.end_line, span.end_column)
