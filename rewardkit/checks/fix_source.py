"""One module's text as its fixes are resolved against it: what every fix needs, computed once
per file however many fixes it has.

Resolving a fix costs what its transformation costs plus checks on the whole module: where its
top-level statement is, whether the fixed module compiles, the text edits between the two
versions. :class:`FixSource` keeps the module's line starts, statement starts, ``__future__``
flags, its lines for the diff and each statement libcst parsed, so that a file with many fixes
(``rewardkit check --format json`` resolves them all) pays for them once; and it compiles only
the statement a fix changed, not the module.
"""

from __future__ import annotations
import __future__

import ast
import difflib
from bisect import bisect_left, bisect_right
from collections import Counter
from functools import cached_property
from itertools import pairwise

from rewardkit.checks.model import Span, TextEdit
from rewardkit.checks.positions import LINE_BREAK, NodePositions
from rewardkit.checks.scopes import block_statements
from rewardkit.checks.splitter import statement_starts

_FUTURE = "__future__"

Replacements = tuple[tuple[int, int, str], ...]
"""(start, end, new text) of each change to a text, in order, none across a line break."""


def compiles(source: str, flags: int = 0) -> bool:
    """Whether ``source`` compiles, not only parses: a ``nonlocal`` left without its binding,
    or a name both ``global`` and a parameter, fails only when compiled."""
    try:
        compile(source, "<fixed>", "exec", flags=flags, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def parses(source: str) -> bool:
    """Whether ``source`` parses."""
    try:
        ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` with their line breaks (where Python breaks lines)."""
    lines = []
    start = 0
    for match in LINE_BREAK.finditer(text):
        lines.append(text[start : match.end()])
        start = match.end()
    if start < len(text):
        lines.append(text[start:])
    return lines


class FixSource:
    """A module's text and what resolving its fixes reuses (computed on first use)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.positions = NodePositions(text)
        self.parsed: dict[int, object] = {}
        """Statements parsed by a fix's transformation, by their start offset (each parsed once)."""
        self._trees: dict[int, tuple[ast.Module, NodePositions] | None] = {}
        self._starts: list[int] = []
        self._scanned = False

    def _starts_after(self, offset: int) -> list[int]:
        """The statement starts, scanned (from the last one found) past ``offset`` or to the
        end: a fix near the top of a long module does not scan all of it."""
        starts = self._starts
        while not self._scanned and (not starts or starts[-1] <= offset):
            position = starts[-1] if starts else 0
            found = statement_starts(self.text, position, until=offset)
            if starts and found and found[0] == position:
                found = found[1:]
            if not found or found[-1] <= offset:
                self._scanned = True
            starts.extend(found)
        return starts

    def statement(self, line: int) -> tuple[int, int] | None:
        """(start, end) offsets of the top-level statement holding a 1-based line, up to the next
        statement (its trailing blank lines and comments included); ``None`` past the end."""
        if line < 1 or line > self.positions.position(len(self.text))[0]:
            return None
        offset = self.positions.offset(line, 0)
        starts = self._starts_after(offset)
        index = bisect_right(starts, offset) - 1
        start = starts[index] if index >= 0 else 0
        end = starts[index + 1] if index + 1 < len(starts) else len(self.text)
        return start, end

    def statement_tree(self, start: int, end: int) -> tuple[ast.Module, NodePositions] | None:
        """The :mod:`ast` of the statement text ``text[start:end]`` and its positions (lines
        counted from the statement's first); ``None`` when it does not parse alone."""
        if start not in self._trees:
            text = self.text[start:end]
            try:
                tree: tuple[ast.Module, NodePositions] | None = (
                    ast.parse(text),
                    NodePositions(text),
                )
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                tree = None
            self._trees[start] = tree
        return self._trees[start]

    def simple_statement(
        self, start: int, end: int, span: Span
    ) -> tuple[int, int, Span | None] | None:
        """(start, end) offsets of the whole lines of the indented simple statement (no ``def``,
        ``if``, ``with``...) in the statement ``text[start:end]`` that holds ``span``, when only
        indentation precedes it on its line, and where its value is (a ``return``'s, an
        assignment's, an expression statement's); ``None`` when there is none."""
        found = self.statement_tree(start, end)
        if found is None:
            return None
        tree, positions = found
        shift = self.positions.position(start)[0] - 1
        first, last = span.line - shift, span.end_line - shift
        statements: list[ast.stmt] = list(tree.body)
        while statements:
            statement = statements.pop()
            if not statement.lineno <= first <= last <= (statement.end_lineno or 0):
                continue
            inner = block_statements(statement)
            if inner:  # a compound statement: its blocks (the node may be in its header)
                statements = inner
                continue
            line_start = positions.offset(statement.lineno, 0)
            indentation = positions.text[line_start : positions.start_offset(statement)]
            if not indentation or indentation.strip(" \t"):
                return None
            end_line = statement.end_lineno or statement.lineno
            value = getattr(statement, "value", None)
            value_span = positions.span(value).shifted(shift) if value is not None else None
            return start + line_start, start + positions.offset(end_line + 1, 0), value_span
        return None

    @cached_property
    def future_flags(self) -> int | None:
        """The compiler flags of the module's ``from __future__`` imports (``None``: not known,
        compile the whole module)."""
        if _FUTURE not in self.text:
            return 0
        flags, start, first = 0, 0, True
        while start < len(self.text):
            starts = self._starts_after(start)
            later = bisect_right(starts, start)
            end = starts[later] if later < len(starts) else len(self.text)
            found = self.statement_tree(start, end)
            if found is None:
                return None
            for statement in found[0].body:
                if isinstance(statement, ast.ImportFrom) and statement.module == _FUTURE:
                    for alias in statement.names:
                        feature = getattr(__future__, alias.name, None)
                        flag = getattr(feature, "compiler_flag", None)
                        if not isinstance(flag, int):
                            return None
                        flags |= flag
                elif not (first and _is_docstring(statement)):
                    return flags  # the first statement that is no docstring or future import
                first = False
            start = end
        return flags

    def fixed_compiles(self, fixed: str, start: int, end: int) -> bool:
        """Whether ``fixed`` (this text with only ``text[start:end]``, one top-level statement,
        changed) compiles. Compile errors are those of one statement (a ``nonlocal`` without
        its binding, ``await`` outside ``async def``...), so only the changed statement is
        compiled, with the module's ``__future__`` flags."""
        changed = fixed[start : len(fixed) - (len(self.text) - end)]
        flags = self.future_flags
        if flags is None or _FUTURE in changed:
            return compiles(fixed)
        return compiles(changed, flags)

    def is_fix_kept(self, fixed: str, start: int, end: int) -> bool:
        """Whether a fix that gave ``fixed`` (a change inside ``text[start:end]``) is kept: the
        fixed module compiles, or it parses and the original did not compile either."""
        if self.fixed_compiles(fixed, start, end):
            return True
        return not compiles(self.text) and parses(fixed)

    @cached_property
    def _lines(self) -> tuple[list[str], list[int], Counter[str]]:
        text = self.text
        offsets = list(self.positions.line_starts())
        if offsets[-1] == len(text):  # a text ending with a line break has no line after it
            offsets.pop()
        offsets.append(len(text))
        lines = [text[start:end] for start, end in pairwise(offsets)]
        return lines, offsets, Counter(lines)

    def replaced(self, replacements: Replacements) -> str:
        """This text with ``replacements`` made."""
        pieces, last = [], 0
        for start, end, new in replacements:
            pieces += [self.text[last:start], new]
            last = end
        pieces.append(self.text[last:])
        return "".join(pieces)

    def line_edits(self, after: str, start: int, end: int) -> tuple[TextEdit, ...] | None:
        """What :meth:`text_edits` gives for ``after`` (this text with only the whole lines
        ``text[start:end]`` changed, as many lines as before), without the diff: one edit per
        changed line. ``None`` when the diff could pair lines otherwise: a changed line, before
        or after, that is also a line of the other version (a diff pairs lines by equality);
        else it pairs each changed line with itself, and this is what it gives."""
        lines, offsets, counts = self._lines
        first, last = bisect_left(offsets, start), bisect_left(offsets, end)
        window = after[start : len(after) - (len(self.text) - end)]
        new_lines = split_lines(window)
        if (
            offsets[first] != start
            or last == len(offsets)
            or offsets[last] != end
            or len(new_lines) != last - first
            or (end < len(self.text) and not window.endswith(("\n", "\r")))
            or (window.endswith("\r") and self.text.startswith("\n", end))
            or (start and self.text[start - 1] == "\r" and window.startswith("\n"))
        ):
            return None
        changed = {
            index: new for index, new in zip(range(first, last), new_lines) if new != lines[index]
        }
        replaced_old = Counter(lines[index] for index in changed)
        news = set(changed.values())
        for index, new in changed.items():
            old = lines[index]
            if new in counts or old in news or counts[old] != replaced_old[old]:
                return None
        edits = []
        for index, new in changed.items():
            start, end, text = _narrowed(self.text, offsets[index], offsets[index + 1], new)
            if (start, end, text) != (start, start, ""):
                position = self.positions.position
                edits.append(TextEdit(*position(start), *position(end), text))
        return tuple(edits)

    def text_edits(self, after: str) -> tuple[TextEdit, ...]:
        """Non-overlapping edits that turn this text into ``after`` (engine coordinates), one per
        changed run of lines, each trimmed to what changed."""
        before = self.text
        if before == after:
            return ()
        old_lines, offsets, _ = self._lines
        new_lines = split_lines(after)
        edits = []
        matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            if i2 - i1 == j2 - j1:  # as many lines: one edit per line (a rename's uses)
                hunks = [(i, i + 1, j, j + 1) for i, j in zip(range(i1, i2), range(j1, j2))]
            else:
                hunks = [(i1, i2, j1, j2)]
            for old_start, old_end, new_start, new_end in hunks:
                replacement = "".join(new_lines[new_start:new_end])
                start, end, text = _narrowed(
                    before, offsets[old_start], offsets[old_end], replacement
                )
                if (start, end, text) != (start, start, ""):
                    position = self.positions.position
                    edits.append(TextEdit(*position(start), *position(end), text))
        return tuple(edits)


def _is_word(character: str) -> bool:
    """Whether ``character`` (one character, or "" for none) can be part of a name."""
    return bool(character) and (character.isalnum() or character == "_")


def _narrowed(old: str, start: int, end: int, replacement: str) -> tuple[int, int, str]:
    """The edit replacing ``old[start:end]`` by ``replacement``, trimmed to what differs, then
    widened to whole words (a rename replaces the name, not its last letters), and an insertion
    moved left to where a token starts (``{'reward': 0.0, 'x': 1}`` inserts ``'reward': 0.0, ``
    after the brace, not ``reward': 0.0, '`` after the quote)."""
    middle = old[start:end]
    prefix = len(_common_prefix(middle, replacement))
    start, middle, replacement = start + prefix, middle[prefix:], replacement[prefix:]
    suffix = len(_common_prefix(middle[::-1], replacement[::-1]))
    if suffix:
        end, middle, replacement = end - suffix, middle[:-suffix], replacement[:-suffix]
    word_first = _is_word(middle[:1]) or _is_word(replacement[:1])
    word_last = _is_word(middle[-1:]) or _is_word(replacement[-1:])
    if word_first:
        while start > 0 and _is_word(old[start - 1]):
            start -= 1
            replacement = old[start] + replacement
    if word_last:
        while end < len(old) and _is_word(old[end]):
            replacement += old[end]
            end += 1
    if start == end:
        while (
            start > 0
            and replacement
            and old[start - 1] == replacement[-1]
            and old[start - 1] not in "\r\n"
        ):
            start -= 1
            end -= 1
            replacement = old[start] + replacement[:-1]
    return start, end, replacement


def _common_prefix(first: str, second: str) -> str:
    length = 0
    for a, b in zip(first, second):
        if a != b:
            break
        length += 1
    return first[:length]
