"""Split a module into its top-level statements without parsing it, so edits re-parse only what changed.

A regular-expression scan tracks strings, comments, brackets and line continuations (an
unterminated triple-quoted string runs to the end, as in Python, so that an edit never changes
how text before it scans); a new chunk
starts at every line that begins a top-level statement (column 0, outside brackets and strings;
a ``def`` or ``class`` at column 0 even inside a bracket left open), except decorator
continuations and ``else``/``elif``/``except``/``finally`` clauses.
:class:`IncrementalSplitter` rescans only the edited region of a module it saw before.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

_TOKEN = re.compile(
    r"""
    (?P<string>
        [rRbBuUfFtT]{0,2}
        (?: '''(?:[^'\\]|\\.|'(?!''))*(?:'''|\Z)
          | \"\"\"(?:[^"\\]|\\.|"(?!""))*(?:\"\"\"|\Z)
          | '(?:[^'\\\r\n]|\\(?:\r\n|.))*'
          | "(?:[^"\\\r\n]|\\(?:\r\n|.))*"
        )
    )
    | (?P<comment>\#[^\r\n]*)
    | (?P<open>[(\[{])
    | (?P<close>[)\]}])
    | (?P<continuation>\\(?:\r\n|\r|\n))
    | (?P<newline>\r\n|\r|\n)
    """,
    re.VERBOSE | re.DOTALL,
)
_CONTINUES_PREVIOUS = re.compile(r"(?:else|elif|except|finally)\b")
_DEFINITION = re.compile(r"(?:async[ \t]+)?def[ \t]|class[ \t]")
"""A ``def``/``class`` at column 0: always a new statement, even inside a bracket left open
above (keywords cannot continue an expression), so an unclosed bracket while typing breaks
only its own definition."""
_RESCAN_MARGIN = 16
"""Statement starts this close before an edit are rescanned (their first characters may have changed)."""


@dataclass(frozen=True)
class Chunk:
    """One or more consecutive top-level statements with the blank lines and comments that follow."""

    text: str
    start_line: int
    """1-based line of the chunk's first character in the module."""


def statement_starts(
    source: str,
    position: int = 0,
    old_starts: list[int] | None = None,
    delta: int = 0,
    tail_start: int | None = None,
    until: int | None = None,
) -> list[int]:
    """Offsets (from ``position`` on) of lines that begin a top-level statement.

    ``position`` must be a clean point: 0 or a previous statement start. Given the previous
    version's ``old_starts``, the size change ``delta`` and where the unchanged tail begins in
    ``source`` (``tail_start``), the scan stops at the first start inside the tail that was a
    start before, and reuses the old starts from there (shifted by ``delta``). Given ``until``,
    it stops at the first start after that offset (a clean point to scan on from).
    """
    depth = 0
    starts: list[int] = []
    line_start = position
    check_line = True  # the current line begins a logical line (not a continuation)
    pos = position
    reusable: dict[int, int] = {}
    if old_starts is not None and tail_start is not None:
        reusable = {
            offset + delta: index
            for index, offset in enumerate(old_starts)
            if offset + delta >= tail_start
        }
    search = _TOKEN.search
    decorators: list[int] = []  # column-0 `@` lines inside an open bracket, before a `def`
    while True:
        if check_line:
            first = source[line_start : line_start + 1]
            if first == "\f":  # a form feed resets the indentation: what follows may be column 0
                indent = _INDENTATION.match(source, line_start).end()  # type: ignore[union-attr]
                if source[line_start:indent].endswith("\f"):
                    first = source[indent : indent + 1]
            if depth and _DEFINITION.match(source, line_start):
                depth = 0  # the bracket above was never closed: the definition starts anew
                starts.extend(decorators)
            if depth == 0:
                if first and first not in " \t\f\r\n#\\":
                    index = reusable.get(line_start)
                    if index is not None and old_starts is not None:
                        starts.extend(offset + delta for offset in old_starts[index:])
                        return starts
                    starts.append(line_start)
                    decorators.clear()
                    if until is not None and line_start > until:
                        return starts
            elif first == "@":
                decorators.append(line_start)
            elif first.isidentifier():
                decorators.clear()
            check_line = False
        match = search(source, pos)
        if match is None:
            return starts
        kind = match.lastgroup
        pos = match.end()
        if kind == "newline":
            line_start = pos
            check_line = True
        elif kind == "open":
            depth += 1
        elif kind == "close":
            depth = max(0, depth - 1)
        elif kind == "string" and "\n" in match.group():
            check_line = False  # the next line start is inside the string


def common_prefix_length(first: str, second: str) -> int:
    """Length of the longest common prefix (binary search over C-speed slice comparisons)."""
    low, high = 0, min(len(first), len(second))
    while low < high:
        middle = (low + high + 1) // 2
        if first[:middle] == second[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def common_suffix_length(first: str, second: str, limit: int) -> int:
    """Length of the longest common suffix, at most ``limit``."""
    low, high = 0, min(limit, len(first), len(second))
    while low < high:
        middle = (low + high + 1) // 2
        if first[len(first) - middle :] == second[len(second) - middle :]:
            low = middle
        else:
            high = middle - 1
    return low


def _head(source: str, offset: int) -> int:
    """Where the statement starting at ``offset`` has its first token (after form feeds)."""
    if source.startswith("\f", offset):
        return _FORM_FEEDS.match(source, offset).end()  # type: ignore[union-attr]
    return offset


def _is_decorator(source: str, offset: int) -> bool:
    return source.startswith("@", _head(source, offset))


def chunks_from_starts(source: str, starts: list[int]) -> list[Chunk]:
    """Group statement starts into chunks (decorators stay with their definition) and cut the text."""
    boundaries: list[int] = []
    previous_is_decorator = False
    match_clause = _CONTINUES_PREVIOUS.match
    for offset in starts:
        offset_head = _head(source, offset)
        is_decorator = source.startswith("@", offset_head)
        if previous_is_decorator or (boundaries and match_clause(source, offset_head)):
            previous_is_decorator = is_decorator
            continue
        boundaries.append(offset)
        previous_is_decorator = is_decorator
    if not boundaries or boundaries[0] != 0:
        boundaries.insert(0, 0)
    chunks: list[Chunk] = []
    line = 1
    for index, start in enumerate(boundaries):
        end = boundaries[index + 1] if index + 1 < len(boundaries) else len(source)
        text = source[start:end]
        if text or not chunks:
            chunks.append(Chunk(text, line))
        line += count_lines(text)
    return chunks


_LINE_BREAK = re.compile(r"\r\n?|\n")
_INDENTATION = re.compile(r"[ \t\f]*")
_FORM_FEEDS = re.compile(r"\f*")


def count_lines(text: str) -> int:
    """How many line breaks ``text`` holds (``\\r\\n``, ``\\r`` and ``\\n``, as Python reads them)."""
    if "\r" not in text:
        return text.count("\n")
    return len(_LINE_BREAK.findall(text))


def split_module(source: str) -> list[Chunk]:
    """The module's top-level chunks, in order; their texts concatenate back to ``source``."""
    return chunks_from_starts(source, statement_starts(source))


class IncrementalSplitter:
    """Splits successive versions of one document, rescanning only around the edited region."""

    def __init__(self) -> None:
        self._source: str | None = None
        self._starts: list[int] = []

    def split(self, source: str) -> list[Chunk]:
        """The chunks of ``source`` (the same result as :func:`split_module`)."""
        old = self._source
        if old is None or not self._starts:
            starts = statement_starts(source)
        elif old == source:
            starts = self._starts
        else:
            prefix = common_prefix_length(old, source)
            suffix = common_suffix_length(old, source, min(len(old), len(source)) - prefix)
            delta = len(source) - len(old)
            keep = bisect_right(self._starts, prefix - _RESCAN_MARGIN) - 1
            # Never restart at a decorator: inside a bracket left open, whether it starts a
            # statement depends on the `def` below it, which the edit may have changed.
            while keep >= 0 and _is_decorator(old, self._starts[keep]):
                keep -= 1
            if keep < 0:
                starts = statement_starts(
                    source, 0, self._starts, delta, len(source) - suffix + _RESCAN_MARGIN
                )
            else:
                restart = self._starts[keep]
                starts = self._starts[:keep] + statement_starts(
                    source, restart, self._starts, delta, len(source) - suffix + _RESCAN_MARGIN
                )
        self._source = source
        self._starts = starts
        return chunks_from_starts(source, starts)
