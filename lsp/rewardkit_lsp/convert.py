"""Engine results as lsprotocol types: diagnostics, quick fixes, ranges in the client's units."""

from __future__ import annotations

from lsprotocol import types

from rewardkit.checks import Diagnostic, Fix, Severity, Span, apply_edits
from rewardkit_lsp.positions import LineIndex

SOURCE = "rewardkit"
"""The ``source`` of every diagnostic, as ``rewardkit check`` names itself."""

_SEVERITIES = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}


def span_range(span: Span, index: LineIndex) -> types.Range:
    """Client range of an engine span."""
    return index.engine_range(span.line, span.column, span.end_line, span.end_column)


def to_lsp_diagnostic(diagnostic: Diagnostic, index: LineIndex) -> types.Diagnostic:
    """The LSP diagnostic of an engine diagnostic: same code, severity and message."""
    return types.Diagnostic(
        range=span_range(diagnostic.span, index),
        severity=_SEVERITIES[diagnostic.severity],
        code=diagnostic.code,
        source=SOURCE,
        message=diagnostic.message,
        data=dict(diagnostic.data) if diagnostic.data else None,
    )


SELECT_RANGE_COMMAND = "rewardkit.selectRange"
"""Server command run after a fix that inserts a placeholder: the client selects it for editing."""


def to_code_action(
    fix: Fix,
    diagnostic: types.Diagnostic,
    uri: str,
    version: int | None,
    index: LineIndex,
    *,
    select_in: str | None = None,
) -> types.CodeAction:
    """A quick-fix code action applying ``fix`` to the document at ``version``.

    Given ``select_in`` (the document's text; pass it when the client can show documents), a fix
    with a ``selection`` (a placeholder to type over) also runs a command that selects it.
    """
    edits: list[types.TextEdit | types.AnnotatedTextEdit | types.SnippetTextEdit] = [
        types.TextEdit(
            range=index.engine_range(edit.line, edit.column, edit.end_line, edit.end_column),
            new_text=edit.new_text,
        )
        for edit in fix.edits
    ]
    document_edit = types.TextDocumentEdit(
        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
        edits=edits,
    )
    command = None
    if fix.selection is not None and select_in is not None:
        # The selection is a range of the fixed text: convert it with that text's lines.
        after = LineIndex(apply_edits(select_in, fix.edits), index.encoding)
        command = types.Command(
            title="Select the placeholder",
            command=SELECT_RANGE_COMMAND,
            arguments=[uri, span_range(fix.selection, after)],
        )
    return types.CodeAction(
        title=fix.title,
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        is_preferred=fix.is_preferred or None,
        edit=types.WorkspaceEdit(document_changes=[document_edit]),
        command=command,
    )


def overlaps(span: Span, start: tuple[int, int], end: tuple[int, int]) -> bool:
    """Whether ``span`` touches the range from ``start`` to ``end`` (1-based line, column pairs)."""
    return (span.line, span.column) <= end and start <= (span.end_line, span.end_column)
