"""What the server should publish, computed from the engine directly (the same code path as ``rewardkit check``)."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from rewardkit.checks import check_source, load_config

Shape = tuple[str, str, int, int, int, int]
"""(code, message, start line, start UTF-16 column, end line, end UTF-16 column), lines 0-based."""


def _utf16(lines: list[str], line: int, column: int) -> int:
    text = lines[line] if line < len(lines) else ""
    return len(text[:column].encode("utf-16-le")) // 2


def expected_shapes(text: str, path: Path) -> list[Shape]:
    """The engine's diagnostics for ``text`` at ``path`` in LSP coordinates (UTF-16), sorted."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    shapes = []
    for d in check_source(text, str(path), load_config(path.parent)):
        shapes.append(
            (
                d.code,
                d.message,
                d.line - 1,
                _utf16(lines, d.line - 1, d.column),
                d.end_line - 1,
                _utf16(lines, d.end_line - 1, d.end_column),
            )
        )
    return sorted(shapes)


def published_shapes(
    diagnostics: list[types.Diagnostic] | tuple[types.Diagnostic, ...],
) -> list[Shape]:
    """The same shape for diagnostics the server published."""
    return sorted(
        (
            str(d.code),
            d.message,
            d.range.start.line,
            d.range.start.character,
            d.range.end.line,
            d.range.end.character,
        )
        for d in diagnostics
    )
