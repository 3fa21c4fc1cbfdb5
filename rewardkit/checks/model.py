"""The engine's output types: diagnostics, fixes and the reward definitions it found.

Coordinates everywhere: lines are 1-based, columns are 0-based **code points**
(the language server converts them to the client's encoding). End positions are
exclusive, like LSP ranges.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

_Frozen = TypeVar("_Frozen")


def _copy_with(instance: _Frozen, **changes: Any) -> _Frozen:
    """``instance`` (a frozen dataclass) with ``changes``, without running ``__init__`` again
    (its values were checked when it was made): ``shifted`` runs for every definition below an
    inserted line at each edit in the editor, where ``dataclasses.replace`` showed in latency."""
    copy = object.__new__(type(instance))
    state = copy.__dict__
    state.update(instance.__dict__)
    state.update(changes)
    return copy


class Severity(str, enum.Enum):
    """How bad a diagnostic is; ``ERROR`` makes ``rewardkit check`` exit 1."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True, order=True)
class Span:
    """A range of source text: ``line``/``end_line`` 1-based, columns 0-based code points, end exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int

    def shifted(self, lines: int) -> Span:
        """The same range ``lines`` further down (used to place a definition's spans in its module)."""
        if not lines:
            return self
        moved = object.__new__(Span)  # as _copy_with, unrolled: the editor's hottest copy
        state = moved.__dict__
        state["line"] = self.line + lines
        state["column"] = self.column
        state["end_line"] = self.end_line + lines
        state["end_column"] = self.end_column
        return moved

    def contains(self, line: int, column: int) -> bool:
        """Whether the position (1-based line, 0-based column) lies inside the range (ends included)."""
        return (self.line, self.column) <= (line, column) <= (self.end_line, self.end_column)


@dataclass(frozen=True)
class TextEdit:
    """Replace the text between two positions by ``new_text`` (an insertion when the range is empty)."""

    line: int
    column: int
    end_line: int
    end_column: int
    new_text: str

    def shifted(self, lines: int) -> TextEdit:
        """The same edit ``lines`` further down."""
        if not lines:
            return self
        return _copy_with(self, line=self.line + lines, end_line=self.end_line + lines)


Applicability = Literal["safe", "unsafe", "display"]
"""Whether a fix is applied by ``--fix`` and fix-all, only on request, or never (see :class:`Fix`)."""


@dataclass(frozen=True)
class Transform:
    """What a rule's fix changes, as plain data: the libcst transformation ``kind`` of
    :mod:`rewardkit.checks.transforms` applied to the node at ``span``, with ``options``.

    Analysis runs on :mod:`ast` and never imports libcst: a fix's edits are computed from its
    transform only when a fix is asked for (:func:`rewardkit.checks.fixer.resolve_fix`). Plain
    data, so analyses that hold it are cached on disk and moved when lines are inserted above."""

    kind: str
    span: Span
    options: tuple[tuple[str, str | bool | None], ...] = ()

    def option(self, name: str) -> str | bool | None:
        """The value of one option (``None`` when absent)."""
        return dict(self.options).get(name)

    def shifted(self, lines: int) -> Transform:
        """The same transform at a node ``lines`` further down."""
        if not lines:
            return self
        return _copy_with(self, span=self.span.shifted(lines))


@dataclass(frozen=True)
class Fix:
    """A quick fix: a title for the user and the edits that apply it (non-overlapping).

    A rule's fix is described by its :attr:`transform` and has no ``edits`` until it is resolved
    against the module's text (:func:`rewardkit.checks.fixer.resolve_fix`, which runs libcst);
    fixes made of text edits alone (the suppression comment) carry their edits directly."""

    title: str
    edits: tuple[TextEdit, ...] = ()
    is_preferred: bool = False
    """The fix an editor may apply with one keystroke (the rename to the suggestion, for instance)."""
    selection: Span | None = None
    """A range of the text *after* the edits are applied that an editor should select (a
    placeholder to type over, such as the ``0.0`` of an added ``reward`` key)."""
    transform: Transform | None = None
    """The libcst transformation the fix applies (``None``: ``edits`` is the whole fix)."""
    applicability: Applicability = "safe"
    """``safe``: keeps what the reward means (``rewardkit check --fix`` and the editor's fix-all
    apply it); ``unsafe``: may change it (applied on request only: ``--unsafe-fixes``, or the
    one quick fix a user picks); ``display``: shown, never applied (a rename to a name the
    function already uses). See :mod:`rewardkit.checks.fix_safety`."""
    unsafe_reason: str | None = None
    """Why a fix that is not safe may change what the reward means (shown with it)."""

    @property
    def safe(self) -> bool:
        """Whether the fix keeps what the reward means."""
        return self.applicability == "safe"

    def shifted(self, lines: int) -> Fix:
        """The same fix with every edit (and the selection) ``lines`` further down."""
        if not lines:
            return self
        return _copy_with(
            self,
            edits=tuple(edit.shifted(lines) for edit in self.edits),
            selection=self.selection.shifted(lines) if self.selection is not None else None,
            transform=self.transform.shifted(lines) if self.transform is not None else None,
        )


@dataclass(frozen=True)
class Diagnostic:
    """One finding of a rule, at a range of the checked source.

    ``data`` carries machine-readable details for editors, e.g.
    ``{"reward": "qa", "parameter": "answr", "suggestion": "answer"}``.
    """

    code: str
    severity: Severity
    message: str
    line: int
    column: int
    end_line: int
    end_column: int
    fixes: tuple[Fix, ...] = ()
    data: Mapping[str, Any] | None = None

    @property
    def span(self) -> Span:
        """The diagnostic's range as a :class:`Span`."""
        return Span(self.line, self.column, self.end_line, self.end_column)

    def shifted(self, lines: int) -> Diagnostic:
        """The same diagnostic (and its fixes) ``lines`` further down."""
        if not lines:
            return self
        return _copy_with(
            self,
            line=self.line + lines,
            end_line=self.end_line + lines,
            fixes=tuple(fix.shifted(lines) for fix in self.fixes) if self.fixes else (),
        )

    def sort_key(self) -> tuple[int, int, str, str]:
        """Deterministic output order: position, then code, then message."""
        return (self.line, self.column, self.code, self.message)


ParameterKind = Literal[
    "positional_only", "positional_or_keyword", "keyword_only", "var_positional", "var_keyword"
]
"""How a parameter is declared (the names of :class:`inspect.Parameter` kinds, lower-cased)."""


@dataclass(frozen=True)
class RewardParameter:
    """One declared parameter of a reward: what hover and completion need."""

    name: str
    kind: ParameterKind
    has_default: bool
    span: Span
    """The parameter's name (without annotation or default)."""
    annotation: str | None = None
    """The annotation's source text, if any."""


@dataclass(frozen=True)
class RewardDefinition:
    """A reward found in a module: a decorated function or a ``BaseReward`` subclass's ``call``."""

    name: str | None
    """The registered reward name: ``@reward(name=...)``, the class's ``name``, else the function name;
    ``None`` when it is not a literal (computed at run time)."""
    function_name: str
    """The function's name (``call`` for a ``BaseReward`` subclass)."""
    is_async: bool
    kind: Literal["function", "class"]
    class_name: str | None
    """The ``BaseReward`` subclass for ``kind == "class"``."""
    span: Span
    """The function's name in its ``def`` (or the class's name)."""
    definition_span: Span
    """The whole definition, decorators included."""
    parameters: tuple[RewardParameter, ...]
    """Declared parameters in order; ``self`` of ``call`` is left out."""
    parameters_span: Span
    """The text between the parentheses of the ``def`` (empty range for ``def f():``)."""
    registered: bool = True
    """False for ``auto_register=False``: kept out of the registry (and of RK401)."""
    module_level: bool = True
    """False when defined inside a function (registered only if and when it runs; not in RK401)."""
    own_fields: tuple[tuple[str, str], ...] = ()
    """(name, description) of parameters the decorator itself fills: AgentFly's ``env`` when
    ``@reward(env_cls=...)`` is given."""

    def shifted(self, lines: int) -> RewardDefinition:
        """The same definition ``lines`` further down."""
        if not lines:
            return self
        return _copy_with(
            self,
            span=self.span.shifted(lines),
            definition_span=self.definition_span.shifted(lines),
            parameters=tuple(
                _copy_with(parameter, span=parameter.span.shifted(lines))
                for parameter in self.parameters
            ),
            parameters_span=self.parameters_span.shifted(lines),
        )


@dataclass(frozen=True)
class ModuleAnalysis:
    """Everything the engine found in one module: its diagnostics (sorted) and reward definitions."""

    diagnostics: tuple[Diagnostic, ...] = ()
    rewards: tuple[RewardDefinition, ...] = ()
    skipped: bool = False
    """True when the module was skipped without parsing (no reward definitions could be in it)."""
    syntax_error: Diagnostic | None = None
    """The module's (first) syntax error. While there is one, ``diagnostics`` hold only it (the
    other checks wait until the module parses) and ``rewards`` are those of the top-level
    statements that did parse. It is set even when ``select``/``ignore`` hide RK900."""
