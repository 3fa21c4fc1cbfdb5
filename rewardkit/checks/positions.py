"""Source positions of libcst nodes from one light code-generation pass, without ``MetadataWrapper``.

libcst's ``PositionProvider`` deep-copies the module and records a ``CodeRange`` for every node
of the whole module; this records plain tuples, only for the subtree asked for.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import libcst as cst
from libcst._nodes.internal import CodegenState

from rewardkit.checks.model import Span

Position = tuple[int, int, int, int]
"""(line, column, end_line, end_column): 1-based lines, 0-based code-point columns."""


class _PositionRecorder(CodegenState):
    """A code generator that tracks line and column instead of collecting text."""

    def __init__(self, module: cst.Module, line: int, column: int) -> None:
        super().__init__(
            default_indent=module.default_indent, default_newline=module.default_newline
        )
        self.line = line
        self.column = column
        self.starts: list[tuple[int, int]] = []
        self.spans: dict[cst.CSTNode, Position] = {}
        self.syntactic_starts: dict[cst.CSTNode, tuple[int, int]] = {}

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.column += len(token)

    def add_token(self, value: str) -> None:
        newlines = value.count("\n")
        if newlines:
            self.line += newlines
            self.column = len(value) - value.rfind("\n") - 1
        else:
            self.column += len(value)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self.starts.append((self.line, self.column))

    def after_codegen(self, node: cst.CSTNode) -> None:
        line, column = self.starts.pop()
        self.spans[node] = (line, column, self.line, self.column)

    def pop_trailing_newline(self) -> None:
        """Nothing to pop: no text is collected."""

    @contextmanager
    def record_syntactic_position(
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> Iterator[None]:
        self.syntactic_starts[node] = (self.line, self.column)
        yield


class NodePositions:
    """Positions of every node of a (small) module, computed in one code-generation pass."""

    def __init__(self, module: cst.Module) -> None:
        recorder = _PositionRecorder(module, 1, 0)
        module._codegen(recorder)
        self._spans = recorder.spans
        self._syntactic_starts = recorder.syntactic_starts

    def span(self, node: cst.CSTNode) -> Span:
        """The node's range (parentheses included for parenthesized expressions)."""
        return Span(*self._spans[node])

    def start(self, node: cst.CSTNode) -> tuple[int, int]:
        """Where the node's own syntax starts: after leading blank lines, comments and decorators."""
        syntactic = self._syntactic_starts.get(node)
        if syntactic is not None:
            return syntactic
        line, column, _, _ = self._spans[node]
        return line, column

    def end(self, node: cst.CSTNode) -> tuple[int, int]:
        """Where the node's text ends."""
        _, _, end_line, end_column = self._spans[node]
        return end_line, end_column

    def __contains__(self, node: cst.CSTNode) -> bool:
        return node in self._spans
