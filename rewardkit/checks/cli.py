"""``rewardkit check [PATHS...]``: check reward modules from pre-commit, CI or a terminal.

Exit status: 0 clean (warnings allowed), 1 when an error-severity diagnostic is reported,
2 for usage errors, unreadable configuration or internal errors.
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import io
import os
import sys
import tokenize
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from rewardkit.checks.config import CheckConfig, ConfigError, load_config, load_config_file
from rewardkit.checks.engine import (
    ModuleAnalyzer,
    duplicate_reward_diagnostics,
    filter_diagnostics,
)
from rewardkit.checks.model import Diagnostic, ModuleAnalysis, Severity, Span
from rewardkit.checks.output import FORMATS, FileResult, render
from rewardkit.checks.rules import RULES, SyntaxErrorRule, unknown_code_prefixes

SKIPPED_DIRECTORIES = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        "__pycache__",
        "node_modules",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "build",
        "dist",
        "site-packages",
    }
)
"""Directories never walked into when a directory is given (explicit files are still checked)."""


class UsageError(Exception):
    """Bad command-line input (a missing path, an unknown code list): exit status 2."""


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rewardkit check",
        description="Check reward modules statically: misspelled fields, bad return shapes, "
        "missing awaits, duplicate names (see docs/checks.md for the rules).",
    )
    parser.add_argument(
        "paths", nargs="*", default=["."], help="files or directories (default: .); - reads stdin"
    )
    parser.add_argument(
        "--format", choices=FORMATS, default="text", help="output format (default: text)"
    )
    parser.add_argument("--select", help="comma-separated code prefixes to report (e.g. RK1,RK201)")
    parser.add_argument("--ignore", help="comma-separated code prefixes not to report")
    parser.add_argument(
        "--config", help="configuration file (a pyproject.toml or a TOML file of the same keys)"
    )
    parser.add_argument(
        "--stdin-filename", help="the path of the code read from stdin (for messages and config)"
    )
    return parser


def _codes(value: str | None, option: str) -> list[str] | None:
    if value is None:
        return None
    codes = [code.strip().upper() for code in value.split(",") if code.strip()]
    unknown = unknown_code_prefixes(codes)
    if unknown:
        raise UsageError(
            f"{option}: no rule code starts with {', '.join(map(repr, unknown))} "
            f"(codes: {', '.join(rule.code for rule in RULES)})"
        )
    return codes


@dataclass
class _Target:
    display: str
    path: Path | None  # None: stdin


def _is_excluded(path: Path, config: CheckConfig) -> bool:
    if not config.exclude:
        return False
    root = config.root
    candidates = [path.as_posix()]
    if root is not None:
        with contextlib.suppress(ValueError):
            candidates.append(path.resolve().relative_to(root.resolve()).as_posix())
    for pattern in config.exclude:
        for candidate in candidates:
            if fnmatch.fnmatch(candidate, pattern) or fnmatch.fnmatch(
                candidate, pattern.rstrip("/") + "/*"
            ):
                return True
            if any(fnmatch.fnmatch(part, pattern.rstrip("/")) for part in Path(candidate).parts):
                return True
    return False


def _walk(directory: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(
            d for d in dirs if d not in SKIPPED_DIRECTORIES and not d.endswith(".egg-info")
        )
        for name in sorted(files):
            path = Path(root) / name
            if name.endswith((".py", ".pyi")) and path.is_file():  # not a dangling symlink
                yield path


def _display(path: Path) -> str:
    text = path.as_posix()
    return text[2:] if text.startswith("./") else text


def decode_source(data: bytes) -> str:
    """Decode a Python file as Python does (BOM, PEP 263 cookie, default UTF-8).

    Raises ``UnicodeDecodeError`` or ``SyntaxError`` (unknown encoding) with the details.
    """
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding)
    return text[1:] if text.startswith("\ufeff") else text


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


class _ConfigCache:
    """One configuration per directory (the nearest pyproject), or the ``--config`` file for all."""

    def __init__(
        self, config_file: str | None, select: list[str] | None, ignore: list[str] | None
    ) -> None:
        self._fixed = load_config_file(config_file) if config_file else None
        self._select = select
        self._ignore = ignore
        self._by_directory: dict[Path, CheckConfig] = {}

    def for_path(self, path: Path) -> CheckConfig:
        if self._fixed is not None:
            base = self._fixed
        else:
            directory = path.resolve().parent
            cached = self._by_directory.get(directory)
            if cached is None:
                cached = load_config(directory)
                self._by_directory[directory] = cached
            base = cached
        return base.with_overrides(select=self._select, ignore=self._ignore)


def _targets(
    paths: Sequence[str], stdin_filename: str | None, configs: _ConfigCache
) -> list[_Target]:
    targets: list[_Target] = []
    for raw in paths:
        if raw == "-":
            targets.append(_Target(stdin_filename or "-", None))
            continue
        path = Path(raw)
        if path.is_dir():
            for found in _walk(path):
                if not _is_excluded(found, configs.for_path(found)):
                    targets.append(_Target(_display(found), found))
        elif path.is_file():
            if not _is_excluded(path, configs.for_path(path)):
                targets.append(_Target(_display(path), path))
        else:
            raise UsageError(f"path does not exist: {raw}")
    unique: dict[str, _Target] = {}
    for target in targets:
        unique.setdefault(target.display, target)
    return sorted(unique.values(), key=lambda t: t.display)


def check_targets(
    targets: Sequence[_Target], configs: _ConfigCache, stdin_filename: str | None
) -> tuple[list[FileResult], list[str]]:
    """Check every target; cross-file RK401 added. Returns the results and internal-error messages."""
    analyses: list[tuple[str, ModuleAnalysis, str, CheckConfig]] = []
    undecodable: list[FileResult] = []
    errors: list[str] = []
    for target in targets:
        config_path = target.path if target.path is not None else Path(stdin_filename or "stdin.py")
        config = configs.for_path(config_path)
        try:
            data = sys.stdin.buffer.read() if target.path is None else target.path.read_bytes()
        except OSError as error:  # never lose the other files' results
            errors.append(f"cannot read {target.display}: {error.strerror or error}")
            continue
        try:
            source = decode_source(data)
        except (UnicodeDecodeError, SyntaxError, LookupError) as error:
            kept = filter_diagnostics([_undecodable(data, error)], "", config)
            undecodable.append(FileResult(target.display, tuple(kept)))
            continue
        try:
            analysis = ModuleAnalyzer().analyze(source, target.display, config)
        except Exception as error:  # never lose the other files' results
            errors.append(
                f"internal error while checking {target.display}: {type(error).__name__}: {error}"
            )
            continue
        analyses.append((target.display, analysis, source, config))
    spanning = duplicate_reward_diagnostics([(path, analysis) for path, analysis, _, _ in analyses])
    results = list(undecodable)
    for path, analysis, source, config in analyses:
        diagnostics = list(analysis.diagnostics)
        extra = spanning.get(path)
        if extra:
            diagnostics.extend(filter_diagnostics(extra, source, config))
            diagnostics.sort(key=Diagnostic.sort_key)
        results.append(FileResult(path, tuple(diagnostics)))
    results.sort(key=lambda r: r.path)
    return results, errors


def main(argv: list[str]) -> int:
    """Run ``rewardkit check`` with ``argv`` (without the subcommand); return the exit status."""
    parser = _build_parser()
    try:
        arguments = parser.parse_args(argv)
    except SystemExit as exit_request:  # argparse exits 2 on usage errors, 0 on --help
        return int(exit_request.code or 0)
    try:
        configs = _ConfigCache(
            arguments.config,
            _codes(arguments.select, "--select"),
            _codes(arguments.ignore, "--ignore"),
        )
        targets = _targets(arguments.paths, arguments.stdin_filename, configs)
        results, errors = check_targets(targets, configs, arguments.stdin_filename)
    except (UsageError, ConfigError) as error:
        print(f"rewardkit check: error: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"rewardkit check: error: {error}", file=sys.stderr)
        return 2
    sys.stdout.write(render(results, arguments.format))
    for message in errors:
        print(f"rewardkit check: {message}", file=sys.stderr)
    if errors:
        return 2
    has_error = any(d.severity is Severity.ERROR for r in results for d in r.diagnostics)
    return 1 if has_error else 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main(sys.argv[1:]))
