"""``rewardkit check --fix`` / ``--diff`` / ``--unsafe-fixes``: the fixes of the checked files,
applied and written back, or shown as a unified diff.

Each file goes through :func:`rewardkit.checks.fixer.fix_module` (the same function the
language server's fix-all runs, so both give the same bytes); the text is written back in the
encoding it was read in, with its line endings untouched. :mod:`rewardkit.checks.command`
reports what is left.
"""

from __future__ import annotations

import difflib
import errno
import io
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from rewardkit.checks.fixer import (
    LibcstMissing,
    ModuleFixes,
    fix_module,
    fixable,
    load_transforms,
    resolve_fixes,
)
from rewardkit.checks.output import FileResult
from rewardkit.checks.workers import map_in_workers

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


FIX_PARALLEL_MIN_CHARACTERS = 50_000
"""Below this much source to fix, one process is faster than starting workers (fixing costs
far more per character than checking: a libcst parse and a re-check per fix)."""


def _fix(job: tuple[FixTarget, bool]) -> ModuleFixes | str | LibcstMissing:
    """Fix one target (in a worker): its outcome, or the error (never raised: the other files'
    fixes are kept)."""
    target, unsafe = job
    try:
        return fix_module(
            target.source or "",
            target.display,
            target.config,
            unsafe=unsafe,
            analysis=target.analysis,
        )
    except LibcstMissing as missing:
        return missing
    except Exception as error:
        return f"internal error while fixing {target.display}: {type(error).__name__}: {error}"


def fix_targets(
    targets: Sequence[FixTarget], mode: FixMode
) -> tuple[list[tuple[FixTarget, ModuleFixes]], list[str]]:
    """Fix every analysed target that has a fix to apply, in forked workers when there is enough
    to fix, and with ``--fix`` write each fixed file back: (the outcomes, error messages). A
    file that cannot be written keeps its text and its outcome applies nothing (each fix is
    reported as not fixed), so no summary counts it as fixed. Raises
    :class:`~rewardkit.checks.fixer.LibcstMissing` when libcst is not installed."""
    fixing = [
        target
        for target in targets
        if target.source is not None
        and target.analysis is not None
        and any(fixable(d, unsafe=True) is not None for d in target.analysis.diagnostics)
    ]
    if not fixing:
        return [], []
    load_transforms()  # in this process: forked workers inherit libcst instead of importing it
    results = map_in_workers(
        _fix,
        [(target, mode.unsafe) for target in fixing],
        [len(target.source or "") for target in fixing],
        minimum_total=FIX_PARALLEL_MIN_CHARACTERS,
    )
    outcomes, errors = [], []
    for target, result in zip(fixing, results):
        if isinstance(result, LibcstMissing):
            raise result
        if isinstance(result, str):
            errors.append(result)
            continue
        if not mode.diff and result.changed and target.path is not None:
            result = _written(target, result, errors)
        outcomes.append((target, result))
    return outcomes, errors


def _written(target: FixTarget, outcome: ModuleFixes, errors: list[str]) -> ModuleFixes:
    """``outcome`` once its text is written to the target's file; when it cannot be, an outcome
    that applied nothing (its fixes refused as not written) and the error in ``errors``."""
    try:
        write_fixed(target, outcome.source)
    except OSError as error:
        reason = error.strerror or str(error)
        errors.append(f"cannot write {target.display}: {reason}")
        assert target.analysis is not None
        refused = [(d, f"cannot write the file ({reason})") for d in outcome.applied]
        return ModuleFixes(
            target.source or "", target.analysis, refused=[*outcome.refused, *refused]
        )
    return outcome


def write_fixed(target: FixTarget, source: str) -> None:
    """Write ``source`` to the target's file in the encoding it was read in, in place (the file
    keeps its inode, links, owner and mode). A write that fails puts the old bytes back, so the
    file is either fixed or unchanged (never truncated); a file that already holds these bytes
    is left alone."""
    assert target.path is not None
    data = source.encode(target.encoding)
    with open(target.path, "r+b", buffering=0) as stream:
        old = stream.readall()
        if old == data:
            return
        try:
            _overwrite(stream, data)
        except OSError as error:
            try:
                _overwrite(stream, old)
            except OSError:
                error.strerror = f"{error.strerror or error}; the file may be damaged"
            raise error from None


def _overwrite(stream: io.FileIO, data: bytes) -> None:
    """Replace the whole content of ``stream`` by ``data`` (unbuffered: every failure raises)."""
    stream.seek(0)
    view = memoryview(data)
    while view:
        written = stream.write(view)
        if not written:
            raise OSError(errno.EIO, "the write made no progress")
        view = view[written:]
    stream.truncate()


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


def _resolved(job: tuple[str, FileResult]) -> FileResult | BaseException:
    """One file's result with its fixes resolved against its source (in a worker): the result,
    or the exception to raise in the main process (a worker must not raise)."""
    source, result = job
    try:
        return replace(result, diagnostics=tuple(resolve_fixes(source, result.diagnostics)))
    except Exception as error:
        return error


def with_resolved_fixes(
    results: Sequence[FileResult], targets: Sequence[FixTarget]
) -> list[FileResult]:
    """``results`` whose fixes carry their text edits (for ``--format json``), resolved in
    forked workers when there is enough to resolve (each fix is a libcst transformation).
    Without libcst the fixes keep their titles and no edits."""
    sources = {target.display: target.source for target in targets}
    jobs = {
        index: (source, result)
        for index, result in enumerate(results)
        if (source := sources.get(result.path)) is not None
        and any(d.fixes for d in result.diagnostics)
    }
    if not jobs:
        return list(results)
    try:
        load_transforms()  # in this process: forked workers inherit libcst instead of importing it
    except LibcstMissing:
        return list(results)
    outcomes = map_in_workers(
        _resolved,
        list(jobs.values()),
        [len(source) for source, _ in jobs.values()],
        minimum_total=FIX_PARALLEL_MIN_CHARACTERS,
    )
    resolved = list(results)
    for index, outcome in zip(jobs, outcomes):
        if isinstance(outcome, LibcstMissing):
            return list(results)
        if isinstance(outcome, BaseException):
            raise outcome
        resolved[index] = outcome
    return resolved
