"""Applying fixes: one quick fix resolved to text edits, or every fix of a module, verified.

``rewardkit check --fix``/``--diff`` and the language server (a quick fix, or
``source.fixAll.rewardkit``) all go through here, so their results are the same bytes. A fix is
applied by its libcst transformation (:mod:`rewardkit.checks.transforms`, imported on the first
fix: a plain check never loads libcst); its text edits are the difference between the text
before and after.

:func:`fix_module` applies a module's fixes one at a time and keeps one only when the fixed
module parses, re-checking it finds none of the findings' codes more often than before and the
fixed one less often, and the fix is safe (or unsafe fixes were asked for). It repeats until no
fix is left, so fixing a fixed module changes nothing.
"""

from __future__ import annotations

import ast
import difflib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import TYPE_CHECKING

from rewardkit.checks.engine import ModuleAnalyzer
from rewardkit.checks.fixes import apply_edits
from rewardkit.checks.model import Diagnostic, Fix, ModuleAnalysis, Span, TextEdit
from rewardkit.checks.positions import LINE_BREAK, NodePositions

if TYPE_CHECKING:
    from rewardkit.checks.config import CheckConfig

FIX_EXTRA = "fix"
"""The extra that installs libcst for ``rewardkit check --fix`` (the ``lsp`` extra has it too)."""


class FixUnavailable(Exception):
    """A fix that cannot be applied to this text (its node moved, or the result would not
    compile)."""


class LibcstMissing(FixUnavailable):
    """No fix can be applied: libcst is not installed (the message names the extra to install)."""


def load_transforms() -> ModuleType:
    """:mod:`rewardkit.checks.transforms` (and libcst), or :class:`LibcstMissing` naming the extra."""
    try:
        import rewardkit.checks.transforms as transforms
    except ImportError as error:
        if (error.name or "").split(".")[0] != "libcst":
            raise
        from rewardkit.install import install_command

        raise LibcstMissing(
            f"applying fixes needs libcst, which is not installed: {install_command(FIX_EXTRA)}"
        ) from None
    return transforms


def fixed_text(source: str, fix: Fix) -> tuple[str, Span | None]:
    """``source`` with ``fix`` applied, and the range of the result to select (a placeholder)."""
    if fix.transform is None:
        return apply_edits(source, fix.edits), fix.selection
    transforms = load_transforms()
    try:
        result, placeholder = transforms.apply_transform(source, fix.transform)
    except transforms.TransformError as error:
        raise FixUnavailable(f"{fix.title}: {error}") from None
    if not _compiles(result) and (_compiles(source) or not _parses(result)):
        raise FixUnavailable(f"{fix.title}: the fixed module would not compile")
    if placeholder is None:
        return result, None
    positions = NodePositions(result)
    start, end = placeholder
    return result, Span(*positions.position(start), *positions.position(end))


def _compiles(source: str) -> bool:
    """Whether ``source`` compiles, not only parses: a ``nonlocal`` left without its binding,
    or a name both ``global`` and a parameter, fails only when compiled."""
    try:
        compile(source, "<fixed>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _parses(source: str) -> bool:
    try:
        ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def apply_fix(source: str, fix: Fix) -> str:
    """``source`` with one fix applied (its libcst transform, or its text edits)."""
    return fixed_text(source, fix)[0]


def resolve_fix(source: str, fix: Fix) -> Fix:
    """``fix`` with the text edits (and selection) that apply it to ``source``."""
    if fix.transform is None:
        return fix
    result, selection = fixed_text(source, fix)
    return replace(fix, edits=text_edits(source, result), selection=selection)


def resolve_fixes(source: str, diagnostics: Sequence[Diagnostic]) -> list[Diagnostic]:
    """``diagnostics`` with every fix resolved against ``source`` (a ``display`` fix keeps no
    edits); a fix that does not apply is left out (its diagnostic stays)."""
    resolved = []
    for diagnostic in diagnostics:
        if not any(fix.transform is not None for fix in diagnostic.fixes):
            resolved.append(diagnostic)
            continue
        fixes = []
        for fix in diagnostic.fixes:
            if fix.applicability == "display":
                fixes.append(fix)
                continue
            try:
                fixes.append(resolve_fix(source, fix))
            except LibcstMissing:
                raise
            except FixUnavailable:
                pass
        resolved.append(replace(diagnostic, fixes=tuple(fixes)))
    return resolved


# -- text edits between two versions ----------------------------------------------------------


def _lines(text: str) -> list[str]:
    """The lines of ``text`` with their line breaks (where Python breaks lines)."""
    lines = []
    start = 0
    for match in LINE_BREAK.finditer(text):
        lines.append(text[start : match.end()])
        start = match.end()
    if start < len(text):
        lines.append(text[start:])
    return lines


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


def text_edits(before: str, after: str) -> tuple[TextEdit, ...]:
    """Non-overlapping edits that turn ``before`` into ``after`` (engine coordinates), one per
    changed run of lines, each trimmed to what changed."""
    if before == after:
        return ()
    old_lines, new_lines = _lines(before), _lines(after)
    offsets = [0]
    for line in old_lines:
        offsets.append(offsets[-1] + len(line))
    positions = NodePositions(before)
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
            start, end, text = _narrowed(before, offsets[old_start], offsets[old_end], replacement)
            if (start, end, text) != (start, start, ""):
                edits.append(TextEdit(*positions.position(start), *positions.position(end), text))
    return tuple(edits)


# -- every fix of a module --------------------------------------------------------------------


@dataclass
class ModuleFixes:
    """What fixing one module did."""

    source: str
    """The fixed text (the original when nothing was applied)."""
    analysis: ModuleAnalysis
    """The analysis of :attr:`source`: the findings left."""
    applied: list[Diagnostic] = field(default_factory=list)
    """The findings fixed, as reported before their fix (in the order applied)."""
    refused: list[tuple[Diagnostic, str]] = field(default_factory=list)
    """Fixes tried and not kept, with why (a new finding, a result that does not parse...)."""
    unsafe: list[Diagnostic] = field(default_factory=list)
    """Findings left with an unsafe fix, not applied because unsafe fixes were not asked for."""

    @property
    def changed(self) -> bool:
        return bool(self.applied)


def fixable(diagnostic: Diagnostic, *, unsafe: bool) -> Fix | None:
    """The fix of ``diagnostic`` that fixing applies: the first with a transform, when it is
    safe, or unsafe and ``unsafe`` fixes are allowed (a ``display`` fix never is)."""
    for fix in diagnostic.fixes:
        if fix.transform is not None:
            allowed = ("safe", "unsafe") if unsafe else ("safe",)
            return fix if fix.applicability in allowed else None
    return None


def _verdict(before: ModuleAnalysis, after: ModuleAnalysis, code: str) -> str | None:
    """Why a fix that turned ``before`` into ``after`` is not kept (``None``: keep it)."""
    if after.syntax_error is not None:
        return f"the fixed module would not parse ({after.syntax_error.message})"
    old = Counter(d.code for d in before.diagnostics)
    new = Counter(d.code for d in after.diagnostics)
    added = sorted(c for c in new if new[c] > old[c])
    if added:
        return f"re-checking the fixed module finds new problems ({', '.join(added)})"
    if new[code] >= old[code]:
        return f"re-checking the fixed module still finds the {code} it fixes"
    return None


MAX_FIXES_PER_MODULE = 1000
"""A bound on the loop (every kept fix removes a finding, so it ends long before)."""


def fix_module(
    source: str,
    path: str | None,
    config: CheckConfig,
    *,
    unsafe: bool = False,
    analysis: ModuleAnalysis | None = None,
) -> ModuleFixes:
    """Apply every fix of a module that is safe (and the unsafe ones if ``unsafe``), one at a
    time, each kept only when the module still parses and re-checks without a new finding.

    ``analysis`` is the analysis of ``source`` when the caller has it. Raises
    :class:`LibcstMissing` when libcst is not installed and there is a fix to apply."""
    analyzer = ModuleAnalyzer()
    current = analyzer.analyze(source, path, config) if analysis is None else analysis
    outcome = ModuleFixes(source, current)
    refused: set[tuple[str, str, str, int]] = set()
    for _ in range(MAX_FIXES_PER_MODULE):
        if _next_fix(outcome, analyzer, path, config, unsafe, refused) is None:
            break
    outcome.unsafe = [
        d
        for d in outcome.analysis.diagnostics
        if not unsafe and fixable(d, unsafe=True) is not None and fixable(d, unsafe=False) is None
    ]
    return outcome


def _next_fix(
    outcome: ModuleFixes,
    analyzer: ModuleAnalyzer,
    path: str | None,
    config: CheckConfig,
    unsafe: bool,
    refused: set[tuple[str, str, str, int]],
) -> Diagnostic | None:
    """Apply the first fix that is kept (updating ``outcome``); ``None`` when none is left.

    A refused fix is not tried again: it is known by its code, message, title and how many
    findings with the same three come before it (positions move as other fixes apply)."""
    seen: Counter[tuple[str, str, str]] = Counter()
    for diagnostic in outcome.analysis.diagnostics:
        fix = fixable(diagnostic, unsafe=unsafe)
        if fix is None:
            continue
        same = (diagnostic.code, diagnostic.message, fix.title)
        key = (*same, seen[same])
        seen[same] += 1
        if key in refused:
            continue
        try:
            result, _ = fixed_text(outcome.source, fix)
        except LibcstMissing:
            raise
        except FixUnavailable as error:
            reason = str(error)
        else:
            after = analyzer.analyze(result, path, config)
            reason = _verdict(outcome.analysis, after, diagnostic.code)
            if reason is None:
                outcome.source, outcome.analysis = result, after
                outcome.applied.append(diagnostic)
                return diagnostic
        refused.add(key)
        outcome.refused.append((diagnostic, reason))
    return None
