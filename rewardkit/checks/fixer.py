"""Applying fixes: one quick fix resolved to text edits, or every fix of a module, verified.

``rewardkit check --fix``/``--diff`` and the language server (a quick fix, or
``source.fixAll.rewardkit``) all go through here, so their results are the same bytes. A fix is
applied as plain text where that gives the same text as its libcst transformation
(:mod:`rewardkit.checks.text_transforms`: most renames, ``await``, ``float``, ``async``), else by
that transformation (:mod:`rewardkit.checks.transforms`, imported on the first fix: a plain
check never loads libcst); its text edits are the difference between the text before and after.
The fixes of one text share what they compute (:class:`~rewardkit.checks.fix_source.FixSource`).

:func:`fix_module` applies a module's fixes one at a time and keeps one only when the fixed
module parses, re-checking it finds none of the findings' codes more often than before and the
fixed one less often, and the fix is safe (or unsafe fixes were asked for). It repeats until no
fix is left, so fixing a fixed module changes nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import TYPE_CHECKING

from rewardkit.checks.engine import ModuleAnalyzer
from rewardkit.checks.fix_source import FixSource
from rewardkit.checks.fixes import apply_edits
from rewardkit.checks.model import Diagnostic, Fix, ModuleAnalysis, Span, TextEdit
from rewardkit.checks.positions import NodePositions
from rewardkit.checks.text_transforms import text_replacements

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


def fixed_text(source: str, fix: Fix, file: FixSource | None = None) -> tuple[str, Span | None]:
    """``source`` with ``fix`` applied (by plain text where that is exact, else by libcst), and
    the range of the result to select (a placeholder). ``file``: what resolving other fixes of
    ``source`` already computed."""
    if fix.transform is None:
        return apply_edits(source, fix.edits), fix.selection
    file = file if file is not None else FixSource(source)
    transforms = load_transforms()
    replacements = text_replacements(file, fix.transform)
    placeholder = None
    if replacements is not None:
        result = file.replaced(replacements)
    else:
        try:
            result, placeholder = transforms.apply_transform(file.text, fix.transform, file)
        except transforms.TransformError as error:
            raise FixUnavailable(f"{fix.title}: {error}") from None
    changed = file.statement(fix.transform.span.line)
    assert changed is not None  # the transformation found its node there
    if not file.is_fix_kept(result, *changed):
        raise FixUnavailable(f"{fix.title}: the fixed module would not compile")
    if placeholder is None:
        return result, None
    positions = NodePositions(result)
    start, end = placeholder
    return result, Span(*positions.position(start), *positions.position(end))


def apply_fix(source: str, fix: Fix) -> str:
    """``source`` with one fix applied (its libcst transform, or its text edits)."""
    return fixed_text(source, fix)[0]


def resolve_fix(source: str, fix: Fix, file: FixSource | None = None) -> Fix:
    """``fix`` with the text edits (and selection) that apply it to ``source``."""
    if fix.transform is None:
        return fix
    file = file if file is not None else FixSource(source)
    result, selection = fixed_text(source, fix, file)
    changed = file.statement(fix.transform.span.line)
    assert changed is not None  # the transformation found its node there
    edits = file.line_edits(result, *changed)
    if edits is None:
        edits = file.text_edits(result)
    return replace(fix, edits=edits, selection=selection)


def resolve_fixes(source: str, diagnostics: Sequence[Diagnostic]) -> list[Diagnostic]:
    """``diagnostics`` with every fix resolved against ``source`` (a ``display`` fix keeps no
    edits); a fix that does not apply is left out (its diagnostic stays). What the fixes share
    (the module's lines, each statement libcst parsed) is computed once."""
    resolved = []
    file = FixSource(source)
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
                fixes.append(resolve_fix(source, fix, file))
            except LibcstMissing:
                raise
            except FixUnavailable:
                pass
        resolved.append(replace(diagnostic, fixes=tuple(fixes)))
    return resolved


def text_edits(before: str, after: str) -> tuple[TextEdit, ...]:
    """Non-overlapping edits that turn ``before`` into ``after`` (engine coordinates), one per
    changed run of lines, each trimmed to what changed."""
    return FixSource(before).text_edits(after)


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
