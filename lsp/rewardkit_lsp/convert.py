"""Engine results as LSP JSON: diagnostics, quick fixes, ranges in the client's units.

Plain dictionaries in the shapes of the LSP specification, built by the engine's side of the
server (which never imports lsprotocol: no structuring on the edit path) and sent to the client
as they are.
"""

from __future__ import annotations

from typing import Any

from rewardkit.checks import Diagnostic, Fix, Severity, Span, apply_edits
from rewardkit_lsp.commands import SELECT_RANGE_COMMAND
from rewardkit_lsp.positions import LineIndex, Range

SOURCE = "rewardkit"
"""The ``source`` of every diagnostic, as ``rewardkit check`` names itself."""

QUICK_FIX = "quickfix"
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


def to_code_action(
    fix: Fix,
    diagnostic: dict[str, Any],
    uri: str,
    version: int | None,
    index: LineIndex,
    *,
    select_in: str | None = None,
) -> dict[str, Any]:
    """A quick-fix code action applying ``fix`` to the document at ``version``.

    Given ``select_in`` (the document's text; pass it when the client can show documents), a fix
    with a ``selection`` (a placeholder to type over) also runs a command that selects it.
    """
    edits = [
        {
            "range": index.engine_range(edit.line, edit.column, edit.end_line, edit.end_column),
            "newText": edit.new_text,
        }
        for edit in fix.edits
    ]
    action: dict[str, Any] = {
        "title": fix.title,
        "kind": QUICK_FIX,
        "diagnostics": [diagnostic],
        "edit": {
            "documentChanges": [{"textDocument": {"uri": uri, "version": version}, "edits": edits}]
        },
    }
    if fix.is_preferred:
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
