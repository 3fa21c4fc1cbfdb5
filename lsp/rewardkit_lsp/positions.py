"""Positions between the engine (1-based lines, code-point columns) and the client's encoding.

LSP counts columns in the negotiated position encoding (UTF-16 code units unless the client
offers another) and splits lines only at ``\\n``, ``\\r\\n`` and ``\\r``. Python's
``str.splitlines`` also splits at form feeds and U+2028, so lines are split here by the LSP
rule, which is also Python's tokenizer rule: engine lines and client lines stay the same lines.

Positions are plain JSON objects (``{"line": ..., "character": ...}``): this runs in the analysis
process, which never imports lsprotocol. Lines are split only when a position is converted, and
an ASCII line needs no conversion at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LINE_BREAK = re.compile(r"\r\n|\r|\n")

_UNIT_BYTES = {"utf-8": 1, "utf-16": 2, "utf-32": 4}
_CODECS = {"utf-8": "utf-8", "utf-16": "utf-16-le", "utf-32": "utf-32-le"}

Position = dict[str, int]
Range = dict[str, Position]


def split_lines(text: str) -> list[str]:
    """Split ``text`` into lines (without their line breaks) the way LSP clients count them."""
    if "\r" not in text:
        return text.split("\n")
    return LINE_BREAK.split(text)


@dataclass(frozen=True)
class CodePointPosition:
    """A position in code points: ``line`` 0-based, ``column`` 0-based."""

    line: int
    column: int


class LineIndex:
    """One document version's lines, converting columns between code points and client units."""

    def __init__(self, text: str, encoding: str = "utf-16") -> None:
        if encoding not in _UNIT_BYTES:
            raise ValueError(
                f"unsupported position encoding {encoding!r}: use utf-8, utf-16 or utf-32"
            )
        self.text = text
        self.encoding = encoding
        self._codec = _CODECS[encoding]
        self._unit_bytes = _UNIT_BYTES[encoding]
        self._lines: list[str] | None = None

    @property
    def lines(self) -> list[str]:
        """The document's lines (split on first use)."""
        if self._lines is None:
            self._lines = split_lines(self.text)
        return self._lines

    def _units(self, text: str) -> int:
        if self.encoding == "utf-32" or text.isascii():
            return len(text)
        return len(text.encode(self._codec, "surrogatepass")) // self._unit_bytes

    def to_client(self, line: int, column: int) -> Position:
        """Client position of 0-based ``line`` and code-point ``column`` (clamped to the text)."""
        lines = self.lines
        if line >= len(lines):
            return {"line": len(lines) - 1, "character": self._units(lines[-1])}
        line = max(line, 0)
        text = lines[line]
        column = min(max(column, 0), len(text))
        return {"line": line, "character": self._units(text[:column])}

    def engine_range(self, line: int, column: int, end_line: int, end_column: int) -> Range:
        """Client range of an engine span (1-based lines, code-point columns)."""
        return {
            "start": self.to_client(line - 1, column),
            "end": self.to_client(end_line - 1, end_column),
        }

    def from_client(self, line: int, character: int) -> CodePointPosition:
        """Code-point position of a client position (clamped; a split surrogate pair rounds up)."""
        lines = self.lines
        if line >= len(lines):
            return CodePointPosition(len(lines) - 1, len(lines[-1]))
        line = max(line, 0)
        character = max(character, 0)
        text = lines[line]
        if self.encoding == "utf-32" or text.isascii():
            return CodePointPosition(line, min(character, len(text)))
        units = 0
        for index, char in enumerate(text):
            if units >= character:
                return CodePointPosition(line, index)
            units += self._units(char)
        return CodePointPosition(line, len(text))
