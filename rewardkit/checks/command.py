"""The full ``rewardkit check`` command: options, configuration, reading, checking and reporting.

:mod:`rewardkit.checks.cli` answers a run its cache holds without importing this module. Here
every target is read once; a file whose bytes and configuration the per-file cache knows is not
parsed again; the others are checked in parallel worker processes when there is enough work to
pay for them (each parses and analyses its share; the results are the same as in one process).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rewardkit.checks import run_cache
from rewardkit.checks.codes import RULE_CODES, unknown_code_prefixes
from rewardkit.checks.command_line import CommandLine, run_key
from rewardkit.checks.config import CheckConfig, ConfigError, load_config, load_config_file
from rewardkit.checks.engine import analyze_module, duplicate_reward_diagnostics, filter_diagnostics
from rewardkit.checks.file_cache import FileCache
from rewardkit.checks.model import Diagnostic, ModuleAnalysis, Severity, Span
from rewardkit.checks.output import FORMATS, FileResult, Summary, render, render_statistics
from rewardkit.checks.rules import FileTooLarge, SyntaxErrorRule
from rewardkit.checks.source_files import decode_python, is_excluded
from rewardkit.checks.targets import find_targets
from rewardkit.checks.workers import map_in_workers

if TYPE_CHECKING:
    from rewardkit.checks.fix_command import FixMode
    from rewardkit.checks.fixer import ModuleFixes

UTF8_MAX_BYTES = 4
"""The most bytes one character takes in UTF-8: a file of more than ``4 * max_file_size`` bytes
is too large whatever it holds, and is not read."""
PARALLEL_MIN_CHARACTERS = 400_000
"""Below this much source to analyse, one process is faster than starting workers."""


class UsageError(Exception):
    """Bad command-line input (a missing path, an unknown code list): exit status 2."""


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:  # (argparse would say "invalid _positive value")
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive number of characters, not {text}")
    return value


_TEXT_OPTIONS = (
    ("--select", "comma-separated code prefixes to report (e.g. RK1,RK201)"),
    ("--ignore", "comma-separated code prefixes not to report"),
    ("--config", "configuration file (a pyproject.toml or a TOML file of the same keys)"),
    ("--stdin-filename", "the path of the code read from stdin (for messages and config)"),
)
"""Options that take a text: (flag, help)."""
_SWITCHES = (
    ("--quiet", "print the diagnostics only (no summary line)"),
    (
        "--statistics",
        "print how many problems each rule found instead of the problems (as ruff)",
    ),
    ("--exit-zero", "exit 0 even when errors are found (2 still means the check could not run)"),
    ("--no-cache", "neither read nor write the cache (.rewardkit_cache/, safe to delete)"),
)
"""On/off options: (flag, help)."""
_FIX_SWITCHES = (
    (
        "--fix",
        "apply the safe fixes to the files (stdin: print the fixed code), then report what is left",
    ),
    (
        "--diff",
        "print the fixes as a unified diff instead of applying them; exit 1 if there is one",
    ),
    (
        "--unsafe-fixes",
        "with --fix or --diff, also apply the fixes that may change what a reward means",
    ),
)
"""On/off options of fixing: (flag, help)."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``rewardkit check``."""
    parser = argparse.ArgumentParser(
        prog="rewardkit check",
        description="Check reward modules statically: misspelled fields, bad return shapes, "
        "missing awaits, duplicate names (`rewardkit check --explain RK101` describes a rule).",
    )
    parser.add_argument(
        "--explain", metavar="CODE", help="describe a rule, with examples, and exit"
    )
    parser.add_argument(
        "paths", nargs="*", default=["."], help="files or directories (default: .); - reads stdin"
    )
    parser.add_argument(
        "--format",
        "--output-format",
        dest="format",
        choices=FORMATS,
        default="text",
        help="output format (default: text); text, github and sarif columns are 1-based, "
        "JSON's `column`/`end_column` 0-based code points (as its fixes' edits)",
    )
    for flag, text in _TEXT_OPTIONS:
        parser.add_argument(flag, help=text)
    parser.add_argument(
        "--max-file-size",
        type=_positive,
        metavar="CHARACTERS",
        help="skip (with note RK902) files longer than this "
        "(default: max_file_size in [tool.rewardkit], else 1000000)",
    )
    for flag, text in _SWITCHES:
        parser.add_argument(flag, action="store_true", help=text)
    fixing = parser.add_argument_group(
        "fixes (need libcst, the fix extra: --fix says how to install it)"
    )
    for flag, text in _FIX_SWITCHES:
        fixing.add_argument(flag, action="store_true", help=text)
    return parser


def _codes(value: str | None, option: str) -> list[str] | None:
    if value is None:
        return None
    codes = [code.strip().upper() for code in value.split(",") if code.strip()]
    unknown = unknown_code_prefixes(codes)
    if unknown:
        raise UsageError(
            f"{option}: no rule code starts with {', '.join(map(repr, unknown))} "
            f"(codes: {', '.join(RULE_CODES)})"
        )
    return codes


def _undecodable(data: bytes, error: Exception) -> Diagnostic:
    if isinstance(error, UnicodeDecodeError):
        line = data[: error.start].count(b"\n") + 1
        line_start = data.rfind(b"\n", 0, error.start) + 1
        column = len(data[line_start : error.start].decode("utf-8", errors="replace"))
        message = f"cannot decode the file as {error.encoding}: byte {data[error.start]:#04x} is invalid here"
    else:
        line, column = 1, 0
        message = f"cannot decode the file: {error}"
    return SyntaxErrorRule.diagnostic(
        Span(line, column, line, column + 1), message, data={"error": message}
    )


def _too_large(size: str, config: CheckConfig) -> Diagnostic:
    message = (
        f"not checked: {size} exceed max_file_size = {config.max_file_size:,} characters "
        "(raise it with max_file_size in [tool.rewardkit] or --max-file-size)"
    )
    return FileTooLarge.diagnostic(
        Span(1, 0, 1, 0), message, data={"max_file_size": config.max_file_size}
    )


class _ConfigCache:
    """One configuration per directory (the nearest pyproject), or the ``--config`` file for all."""

    def __init__(
        self,
        config_file: str | None,
        select: list[str] | None,
        ignore: list[str] | None,
        max_file_size: int | None,
    ) -> None:
        self._fixed = load_config_file(config_file) if config_file else None
        self._select = select
        self._ignore = ignore
        self._max_file_size = max_file_size
        self._by_directory: dict[str, CheckConfig] = {}

    def for_path(self, path: str) -> CheckConfig:
        if self._fixed is not None:
            base = self._fixed
        else:
            directory = os.path.dirname(os.path.realpath(path))
            cached = self._by_directory.get(directory)
            if cached is None:
                cached = load_config(directory)
                self._by_directory[directory] = cached
            base = cached
        return base.with_overrides(
            select=self._select, ignore=self._ignore, max_file_size=self._max_file_size
        )


@dataclass
class Target:
    """One file (or stdin) of a run, from its bytes to its analysis."""

    display: str
    path: str | None  # None: stdin
    config: CheckConfig
    digest: str | None = None
    """The hash of its bytes, as the run cache computes it (``None`` for stdin)."""
    source: str | None = None
    encoding: str = "utf-8"
    """How its bytes decode (``--fix`` writes the fixed text back the same way)."""
    diagnostics: list[Diagnostic] = field(default_factory=list)
    """Diagnostics found before analysis (undecodable, too large)."""
    analysis: ModuleAnalysis | None = None
    cache_key: str | None = None


def read_bytes(path: str) -> bytes:
    """A file's bytes (a seam for tests: reading is where an I/O error shows)."""
    with open(path, "rb") as stream:
        return stream.read()


def _read(target: Target, stdin: io.BufferedIOBase | None) -> None:
    """Read and decode a target, unless it is certainly too large (then note RK902 instead)."""
    limit = target.config.max_file_size * UTF8_MAX_BYTES
    if target.path is None:
        data = stdin.read(limit + 1) if stdin is not None else b""
        if len(data) > limit:  # the rest is never read
            target.diagnostics.append(_too_large(f"more than {limit:,} bytes", target.config))
            return
    else:
        size = os.stat(target.path).st_size
        if size > limit:
            target.digest = run_cache.file_digest(target.path)
            target.diagnostics.append(_too_large(f"{size:,} bytes", target.config))
            return
        data = read_bytes(target.path)
        target.digest = run_cache.digest(data)
    try:
        source, target.encoding = decode_python(data)
    except (UnicodeDecodeError, SyntaxError, LookupError) as error:
        target.diagnostics.append(_undecodable(data, error))
        return
    if len(source) > target.config.max_file_size:
        target.diagnostics.append(_too_large(f"{len(source):,} characters", target.config))
        return
    target.source = source


# -- analysis, in this process or in forked workers ------------------------------------------


def _analyse(target: Target) -> ModuleAnalysis | str:
    try:
        return analyze_module(target.source or "", target.display, target.config)
    except Exception as error:  # never lose the other files' results
        return f"internal error while checking {target.display}: {type(error).__name__}: {error}"


def analyse_targets(
    pending: list[Target], meanwhile: Callable[[], object] | None = None
) -> list[str]:
    """Fill each target's analysis (in parallel workers when worth it); internal errors
    returned. ``meanwhile`` runs in this process while the workers analyse."""
    outcomes = map_in_workers(
        _analyse,
        pending,
        [len(target.source or "") for target in pending],
        minimum_total=PARALLEL_MIN_CHARACTERS,
        meanwhile=meanwhile,
    )
    errors: list[str] = []
    for target, outcome in zip(pending, outcomes):
        if isinstance(outcome, str):
            errors.append(outcome)
        else:
            target.analysis = outcome
    return errors


def analyse_cached(
    targets: Sequence[Target],
    file_cache: FileCache | None,
    meanwhile: Callable[[], object] | None = None,
) -> list[str]:
    """Analyse every read target whose analysis the per-file cache does not hold (and store
    them); returns internal-error messages. ``meanwhile`` runs in this process while workers
    analyse."""
    pending = []
    for target in targets:
        if target.source is None:
            continue
        if file_cache is not None and target.digest is not None:
            target.cache_key = file_cache.key(target.config, target.digest)
            target.analysis = file_cache.load(target.cache_key)
        if target.analysis is None:
            pending.append(target)
    errors = analyse_targets(pending, meanwhile)
    if file_cache is not None:
        for target in pending:
            if target.analysis is not None and target.cache_key is not None:
                file_cache.store(target.cache_key, target.analysis)
        file_cache.close()
    return errors


def gather_results(targets: Sequence[Target]) -> tuple[list[FileResult], int]:
    """Every target's diagnostics, RK401 across files added, sorted; and how many rewards."""
    analysed = [t for t in targets if t.analysis is not None]
    spanning = duplicate_reward_diagnostics(
        [(t.display, t.analysis) for t in analysed if t.analysis is not None]
    )
    results = []
    for target in targets:
        diagnostics = filter_diagnostics(target.diagnostics, "", target.config)
        if target.analysis is not None:
            diagnostics.extend(target.analysis.diagnostics)
            extra = spanning.get(target.display)
            if extra:
                diagnostics.extend(filter_diagnostics(extra, target.source or "", target.config))
            diagnostics.sort(key=Diagnostic.sort_key)
        results.append(FileResult(target.display, tuple(diagnostics)))
    results.sort(key=lambda r: r.path)
    rewards = sum(len(t.analysis.rewards) for t in analysed if t.analysis is not None)
    return results, rewards


def check_targets(
    targets: Sequence[Target], file_cache: FileCache | None
) -> tuple[list[FileResult], list[str], int]:
    """Check every read target; cross-file RK401 added. Returns the results, internal-error
    messages and how many rewards were found."""
    errors = analyse_cached(targets, file_cache)
    results, rewards = gather_results(targets)
    return results, errors, rewards


def _select_targets(
    arguments: argparse.Namespace, command: CommandLine, configs: _ConfigCache
) -> tuple[list[tuple[str, str]], list[Target], list[str]]:
    """(the files found, the targets to check, problems with paths) of a command line; raises
    :class:`UsageError` for a path that does not exist."""
    found, problems = find_targets(command.paths)
    missing = [raw for raw, problem in problems if problem == "path does not exist"]
    if missing:
        raise UsageError(f"path does not exist: {missing[0]}")
    errors = [f"cannot check {raw}: {problem}" for raw, problem in problems]
    targets = [
        Target(shown, path, config)
        for shown, path in found
        if not is_excluded(path, config := configs.for_path(path))
    ]
    if "-" in command.paths:
        stdin_name = arguments.stdin_filename or "-"
        config = configs.for_path(arguments.stdin_filename or "stdin.py")
        targets = [t for t in targets if t.display != stdin_name]
        targets.append(Target(stdin_name, None, config))
    return found, targets, errors


def read_targets(targets: Sequence[Target], errors: list[str]) -> list[Target]:
    """The targets that could be read (an I/O error is added to ``errors``, the rest go on)."""
    readable = []
    for target in targets:
        try:
            _read(target, sys.stdin.buffer if target.path is None else None)
        except OSError as error:  # never lose the other files' results
            errors.append(f"cannot read {target.display}: {error.strerror or error}")
            continue
        readable.append(target)
    return readable


def _fix_mode(arguments: argparse.Namespace) -> FixMode | None:
    """What ``--fix``/``--diff``/``--unsafe-fixes`` ask for (``None``: only check)."""
    if not (arguments.fix or arguments.diff):
        if arguments.unsafe_fixes:
            raise UsageError("--unsafe-fixes applies with --fix or --diff")
        return None
    from rewardkit.checks.fix_command import FixMode

    return FixMode(diff=arguments.diff, unsafe=arguments.unsafe_fixes)


def run_fixes(
    targets: Sequence[Target], mode: FixMode, command: CommandLine, errors: list[str]
) -> int:
    """``--fix``/``--diff``: fix the analysed targets, then write them back and report what is
    left, or print the diff. Exit status: 2 on errors; with ``--diff``, 1 when there is a
    change; with ``--fix``, 1 when an error-severity finding is left."""
    from rewardkit.checks.fix_command import fix_summary, fix_targets, unified_diff
    from rewardkit.checks.fixer import LibcstMissing

    try:
        outcomes, fix_errors = fix_targets(targets, mode)
    except LibcstMissing as error:
        print(f"rewardkit check: error: {error}", file=sys.stderr)
        return 2
    errors += fix_errors
    fixed = {id(target): outcome for target, outcome in outcomes if outcome.changed}
    lines = [] if command.quiet else fix_summary(outcomes, mode)
    if mode.diff:
        for target in targets:
            if id(target) in fixed:
                after = fixed[id(target)].source
                sys.stdout.write(unified_diff(target.display, target.source or "", after))
        for line in lines:
            print(line, file=sys.stderr)
        _print_errors(errors)
        return 2 if errors else 1 if fixed and not command.exit_zero else 0
    _write_fixed(targets, fixed, errors)
    results, rewards = gather_results(targets)
    if command.output_format == "json":
        from rewardkit.checks.fix_command import with_resolved_fixes

        results = with_resolved_fixes(results, targets)
    summary = None if command.quiet or errors else Summary(len(targets), rewards)
    from_stdin = any(target.path is None for target in targets)
    stream = sys.stderr if from_stdin else sys.stdout  # stdin: stdout holds the code
    for line in lines:  # what fixing did, then what is left
        print(line, file=stream if command.output_format == "text" else sys.stderr)
    stream.write(_report(results, command, summary))
    _print_errors(errors)
    return 2 if errors else exit_status(results, command)


def _write_fixed(
    targets: Sequence[Target], fixed: dict[int, ModuleFixes], errors: list[str]
) -> None:
    """Write each fixed target back (stdin: print its code, fixed or not) and take its fixed
    text and analysis as the target's."""
    from rewardkit.checks.fix_command import write_fixed

    for target in targets:
        outcome = fixed.get(id(target))
        if target.path is None:
            sys.stdout.write(outcome.source if outcome is not None else target.source or "")
        if outcome is None:
            continue
        if target.path is not None:
            try:
                write_fixed(target, outcome.source)
            except OSError as error:
                errors.append(f"cannot write {target.display}: {error.strerror or error}")
                continue
        target.source, target.analysis = outcome.source, outcome.analysis


def _load_libcst_quietly() -> None:
    """Import libcst for the JSON output's fix edits ahead of need (nothing when it is missing:
    the edits are then left out, as without this)."""
    from rewardkit.checks.fixer import LibcstMissing, load_transforms

    with contextlib.suppress(LibcstMissing):
        load_transforms()


def _print_errors(errors: Sequence[str]) -> None:
    for message in errors:
        print(f"rewardkit check: {message}", file=sys.stderr)


def run_command(argv: Sequence[str]) -> int:
    """Run ``rewardkit check`` with ``argv`` (without the subcommand); return the exit status."""
    parser = build_parser()
    try:
        arguments = parser.parse_intermixed_args(argv)
    except SystemExit as exit_request:  # argparse exits 2 on usage errors, 0 on --help
        return int(exit_request.code or 0)
    if arguments.explain is not None:
        from rewardkit.checks.reference import explain_command

        return explain_command(arguments.explain)
    command = CommandLine(
        arguments.paths,
        arguments.format,
        arguments.select,
        arguments.ignore,
        arguments.config,
        arguments.max_file_size,
        arguments.quiet,
        arguments.exit_zero,
        arguments.statistics,
    )
    try:
        mode = _fix_mode(arguments)
        configs = _ConfigCache(
            arguments.config,
            _codes(arguments.select, "--select"),
            _codes(arguments.ignore, "--ignore"),
            arguments.max_file_size,
        )
        found, targets, errors = _select_targets(arguments, command, configs)
    except (UsageError, ConfigError, OSError) as error:
        print(f"rewardkit check: error: {error}", file=sys.stderr)
        return 2
    readable = read_targets(targets, errors)
    use_cache = not arguments.no_cache and "-" not in command.paths
    root = run_cache.cache_root() if use_cache else None
    shows_edits = mode is None and command.output_format == "json"
    errors += analyse_cached(
        readable,
        FileCache(root) if root is not None else None,
        _load_libcst_quietly if shows_edits else None,  # while workers analyse, if any
    )
    if mode is not None:
        return run_fixes(readable, mode, command, errors)
    results, rewards = gather_results(readable)
    if command.output_format == "json":
        from rewardkit.checks.fix_command import with_resolved_fixes

        results = with_resolved_fixes(results, readable)
    summary = None if command.quiet or errors else Summary(len(readable), rewards)
    output = _report(results, command, summary)
    sys.stdout.write(output)
    _print_errors(errors)
    if errors:
        return 2
    status = exit_status(results, command)
    if root is not None:
        checked = [(t.display, t.digest) for t in readable if t.digest is not None]
        if len(checked) == len(readable):
            schemas = {t.config.task_schema_path for t in readable if t.config.task_schema_path}
            run_cache.store_run(root, run_key(command, found), status, output, checked, schemas)
    return status


def exit_status(results: Sequence[FileResult], command: CommandLine | None = None) -> int:
    """1 when an error-severity diagnostic is reported (unless ``--exit-zero``), else 0."""
    if command is not None and command.exit_zero:
        return 0
    return 1 if any(d.severity is Severity.ERROR for r in results for d in r.diagnostics) else 0


def _report(results: Sequence[FileResult], command: CommandLine, summary: Summary | None) -> str:
    """The report the command line asks for: the problems, or with ``--statistics`` how many
    each rule found."""
    if command.statistics:
        return render_statistics(results, command.output_format, summary)
    return render(results, command.output_format, summary)
