"""``rewardkit check --fix`` / ``--diff`` / ``--unsafe-fixes``: the fixes of the checked files,
applied and written back, or shown as a unified diff.

Each file goes through :func:`rewardkit.checks.fixer.fix_module` (the same function the
language server's fix-all runs, so both give the same bytes); the text is written back in the
encoding it was read in, with its line endings untouched. :mod:`rewardkit.checks.command`
reports what is left.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from rewardkit.checks.fixer import ModuleFixes, fix_module, fixable, resolve_fixes
from rewardkit.checks.output import FileResult

if TYPE_CHECKING:
    from rewardkit.checks.config import CheckConfig
    from rewardkit.checks.model import ModuleAnalysis


@dataclass(frozen=True)
class FixMode:
    """What the command line asks of fixes."""

    diff: bool = False
    """Show the fixes as a diff; write nothing."""
    unsafe: bool = False
    """Apply the unsafe fixes too."""


class FixTarget(Protocol):
    """One checked file, as :class:`rewardkit.checks.command.Target` holds it."""

    display: str
    path: str | None
    source: str | None
    encoding: str
    config: CheckConfig
    analysis: ModuleAnalysis | None


def fix_targets(targets: Sequence[FixTarget], mode: FixMode) -> list[tuple[FixTarget, ModuleFixes]]:
    """Fix every analysed target that has a fix to apply (raises
    :class:`~rewardkit.checks.fixer.LibcstMissing` when one has and libcst is not installed)."""
    outcomes = []
    for target in targets:
        analysis = target.analysis
        if target.source is None or analysis is None:
            continue
        if not any(fixable(d, unsafe=True) is not None for d in analysis.diagnostics):
            continue
        outcome = fix_module(
            target.source, target.display, target.config, unsafe=mode.unsafe, analysis=analysis
        )
        outcomes.append((target, outcome))
    return outcomes


def write_fixed(target: FixTarget, source: str) -> None:
    """Write ``source`` to the target's file in the encoding it was read in."""
    assert target.path is not None
    data = source.encode(target.encoding)
    with open(target.path, "wb") as stream:
        stream.write(data)


def unified_diff(display: str, before: str, after: str) -> str:
    """A unified diff of one file (``--- path`` / ``+++ path``, as ruff and git print them)."""
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=display,
        tofile=display,
    )
    text = ""
    for line in lines:
        text += line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n"
    return text


def _problems(count: int) -> str:
    return f"{count:,} problem{'s' * (count != 1)}"


def fix_summary(outcomes: Sequence[tuple[FixTarget, ModuleFixes]], mode: FixMode) -> list[str]:
    """What fixing did, in lines for the user: fixes applied (or that would be), fixes not kept
    and why, and unsafe fixes left for ``--unsafe-fixes``."""
    changed = [outcome for _, outcome in outcomes if outcome.changed]
    fixed = sum(len(outcome.applied) for outcome in changed)
    files = f"{len(changed):,} file{'s' * (len(changed) != 1)}"
    verb = "Would fix" if mode.diff else "Fixed"
    lines = [f"{verb} {_problems(fixed)} in {files}." if fixed else "No fixes applied."]
    for target, outcome in outcomes:
        for diagnostic, reason in outcome.refused:
            lines.append(
                f"  not fixed: {target.display}:{diagnostic.line}:{diagnostic.column + 1}: "
                f"{diagnostic.code}: {reason}"
            )
    unsafe = sum(len(outcome.unsafe) for _, outcome in outcomes)
    if unsafe:
        lines.append(
            f"{unsafe:,} more {'problems have' if unsafe != 1 else 'problem has'} an unsafe fix, "
            "not applied: it may change what the reward means (see it with "
            "`--diff --unsafe-fixes`)"
        )
    return lines


def with_resolved_fixes(
    results: Sequence[FileResult], targets: Sequence[FixTarget]
) -> list[FileResult]:
    """``results`` whose fixes carry their text edits (for ``--format json``). Without libcst
    the fixes keep their titles and no edits."""
    from rewardkit.checks.fixer import LibcstMissing

    sources = {target.display: target.source for target in targets}
    resolved = []
    for result in results:
        source = sources.get(result.path)
        if source is None or not any(d.fixes for d in result.diagnostics):
            resolved.append(result)
            continue
        try:
            resolved.append(
                replace(result, diagnostics=tuple(resolve_fixes(source, result.diagnostics)))
            )
        except LibcstMissing:
            return list(results)
    return resolved
