"""Positions of :mod:`ast` nodes in the engine's coordinates, and the source text between them.

CPython's parser records 1-based lines and 0-based **UTF-8 byte** columns; diagnostics use
code-point columns. Lines are split where Python splits them (``\\r\\n``, ``\\r``, ``\\n``; not
form feeds or Unicode line separators), and a column is converted only on the lines that are not
ASCII, so the common case costs nothing.
"""

from __future__ import annotations

import ast
import re

from rewardkit.checks.model import Span

LINE_BREAK = re.compile(r"\r\n|\r|\n")
"""Where Python breaks lines (not at form feeds or Unicode line separators)."""


class NodePositions:
    """Converts node positions of one parsed text (a chunk or a module) and slices its source."""

    __slots__ = ("_ascii", "_starts", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._ascii = text.isascii()
        self._starts: list[int] | None = None

    def line_starts(self) -> list[int]:
        """The offset of each line's first character (computed once)."""
        starts = self._starts
        if starts is None:
            starts = [0]
            starts.extend(match.end() for match in LINE_BREAK.finditer(self.text))
            self._starts = starts
        return starts

    def line_text(self, line: int) -> str:
        """The text of a 1-based line, without its line break ("" past the end)."""
        starts = self.line_starts()
        if not 1 <= line <= len(starts):
            return ""
        start = starts[line - 1]
        end = starts[line] if line < len(starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    def column(self, line: int, byte_column: int) -> int:
        """The code-point column of a UTF-8 byte column on ``line``."""
        if self._ascii or byte_column <= 0:
            return byte_column
        text = self.line_text(line)
        if text.isascii():
            return byte_column
        return len(text.encode("utf-8")[:byte_column].decode("utf-8", errors="replace"))

    def offset(self, line: int, column: int) -> int:
        """The offset in :attr:`text` of a (line, code-point column) position."""
        starts = self.line_starts()
        if line > len(starts):
            return len(self.text)
        return min(starts[max(line, 1) - 1] + column, len(self.text))

    def position(self, offset: int) -> tuple[int, int]:
        """The (line, code-point column) of an offset in :attr:`text`."""
        starts = self.line_starts()
        low, high = 0, len(starts) - 1
        while low < high:  # the last line start <= offset
            middle = (low + high + 1) // 2
            if starts[middle] <= offset:
                low = middle
            else:
                high = middle - 1
        return low + 1, offset - starts[low]

    def start(self, node: ast.AST) -> tuple[int, int]:
        """Where the node starts (for a ``def``/``class``: its keyword, after the decorators)."""
        line: int = node.lineno  # type: ignore[attr-defined]
        return line, self.column(line, node.col_offset)  # type: ignore[attr-defined]

    def end(self, node: ast.AST) -> tuple[int, int]:
        """Where the node's text ends (exclusive)."""
        line: int = node.end_lineno  # type: ignore[attr-defined]
        return line, self.column(line, node.end_col_offset)  # type: ignore[attr-defined]

    def span(self, node: ast.AST) -> Span:
        """The node's range (without the parentheses around a parenthesized expression)."""
        return Span(*self.start(node), *self.end(node))

    def start_offset(self, node: ast.AST) -> int:
        """The offset of the node's start in :attr:`text`."""
        return self.offset(*self.start(node))

    def end_offset(self, node: ast.AST) -> int:
        """The offset of the node's end in :attr:`text`."""
        return self.offset(*self.end(node))

    def code(self, node: ast.AST) -> str:
        """The node's source text."""
        return self.text[self.start_offset(node) : self.end_offset(node)]
