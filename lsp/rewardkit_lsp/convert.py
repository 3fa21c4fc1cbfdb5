"""Engine results as lsprotocol types: diagnostics, quick fixes, ranges in the client's units."""

from __future__ import annotations

import re

from lsprotocol import types

from rewardkit.checks import Diagnostic, Fix, Severity, Span
from rewardkit.checks.fixes import REWARD_PLACEHOLDER
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


def to_code_action(
    fix: Fix,
    diagnostic: types.Diagnostic,
    uri: str,
    version: int | None,
    index: LineIndex,
    *,
    select_placeholders: bool = False,
) -> types.CodeAction:
    """A quick-fix code action applying ``fix`` to the document at ``version``.

    With ``select_placeholders`` (the client can show documents), a fix that inserts a
    placeholder also runs a command that selects it, ready to be typed over.
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
    selection = placeholder_range(fix, index) if select_placeholders else None
    return types.CodeAction(
        title=fix.title,
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        is_preferred=fix.is_preferred or None,
        edit=types.WorkspaceEdit(document_changes=[document_edit]),
        command=None
        if selection is None
        else types.Command(
            title="Select the placeholder", command=SELECT_RANGE_COMMAND, arguments=[uri, selection]
        ),
    )


SELECT_RANGE_COMMAND = "rewardkit.selectRange"
"""Server command run after a fix that inserts a placeholder: the client selects it for editing."""

_PLACEHOLDER_ENTRY = re.compile(r"""reward["']?\s*[:=]\s*""" + re.escape(REWARD_PLACEHOLDER))


def placeholder_range(fix: Fix, index: LineIndex) -> types.Range | None:
    """Where the placeholder value of ``fix`` lands once it is applied, if it inserts one."""
    for edit in fix.edits:
        match = _PLACEHOLDER_ENTRY.search(edit.new_text)
        if match is None or "\n" in edit.new_text[: match.end()]:
            continue
        start = index.to_client(edit.line - 1, edit.column)
        before = edit.new_text[: match.end() - len(REWARD_PLACEHOLDER)]
        units = LineIndex(before + REWARD_PLACEHOLDER, index.encoding)
        return types.Range(
            start=types.Position(
                line=start.line,
                character=start.character + units.to_client(0, len(before)).character,
            ),
            end=types.Position(
                line=start.line,
                character=start.character
                + units.to_client(0, len(before) + len(REWARD_PLACEHOLDER)).character,
            ),
        )
    return None


def overlaps(span: Span, start: tuple[int, int], end: tuple[int, int]) -> bool:
    """Whether ``span`` touches the range from ``start`` to ``end`` (1-based line, column pairs)."""
    return (span.line, span.column) <= end and start <= (span.end_line, span.end_column)
