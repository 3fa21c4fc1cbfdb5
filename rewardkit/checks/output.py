"""Render check results as text, JSON, GitHub workflow commands or SARIF 2.1.0.

Text, GitHub and SARIF columns are 1-based (the editor convention for ``path:line:col``). JSON
keeps one convention, the engine's, for a diagnostic and its fixes' edits alike: ``column`` and
``end_column`` are 0-based code points (as LSP-style consumers expect; the text output's column
is ``column + 1``); lines are 1-based everywhere and ends exclusive.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rewardkit._version import __version__
from rewardkit.checks.model import Diagnostic, Fix, Severity, Span, TextEdit
from rewardkit.checks.rules import RULES

FORMATS = ("text", "json", "github", "sarif")


@dataclass(frozen=True)
class FileResult:
    """The diagnostics of one checked file (``path`` as given or found, ``/``-separated)."""

    path: str
    diagnostics: tuple[Diagnostic, ...]


@dataclass(frozen=True)
class Summary:
    """What a run covered, for the text format's last line."""

    files: int
    rewards: int


def render(
    results: Sequence[FileResult], output_format: str, summary: Summary | None = None
) -> str:
    """The whole report in ``output_format`` (one of :data:`FORMATS`), ending with a newline if
    non-empty. The text format ends with a summary line unless ``summary`` is ``None`` (``--quiet``)."""
    if output_format == "text":
        return render_text(results, summary)
    if output_format == "json":
        return render_json(results)
    if output_format == "github":
        return render_github(results)
    if output_format == "sarif":
        return render_sarif(results)
    raise ValueError(f"unknown output format {output_format!r} (choose from {', '.join(FORMATS)})")


def _counts(results: Sequence[FileResult]) -> dict[Severity, int]:
    counts = dict.fromkeys(Severity, 0)
    for result in results:
        for diagnostic in result.diagnostics:
            counts[diagnostic.severity] += 1
    return counts


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'s' * (count != 1)}"


def render_text(results: Sequence[FileResult], summary: Summary | None = None) -> str:
    """``path:line:col: CODE message`` per diagnostic, then a one-line summary: the problems
    found, or what was checked when nothing was (no summary line when ``summary`` is ``None``)."""
    lines = [
        f"{result.path}:{d.line}:{d.column + 1}: {d.code} {d.message}"
        for result in results
        for d in result.diagnostics
    ]
    counts = _counts(results)
    total = sum(counts.values())
    if summary is None:
        pass
    elif total:
        parts = [
            _plural(counts[Severity.ERROR], "error"),
            _plural(counts[Severity.WARNING], "warning"),
        ]
        if counts[Severity.INFO]:
            parts.append(_plural(counts[Severity.INFO], "note"))
        lines.append(f"Found {_plural(total, 'problem')} ({', '.join(parts)}).")
    else:
        lines.append(
            f"Checked {_plural(summary.files, 'file')}, {_plural(summary.rewards, 'reward')}: "
            "no problems"
        )
    return "".join(line + "\n" for line in lines)


def _span_to_json(span: Span) -> dict[str, int]:
    return {
        "line": span.line,
        "column": span.column,
        "end_line": span.end_line,
        "end_column": span.end_column,
    }


def diagnostic_to_json(path: str, diagnostic: Diagnostic) -> dict[str, Any]:
    """A JSON-ready dict of one diagnostic, in the engine's coordinates (``column``: 0-based
    code points), as its fixes' edits are."""
    return {
        "path": path,
        "code": diagnostic.code,
        "severity": diagnostic.severity.value,
        "message": diagnostic.message,
        "line": diagnostic.line,
        "column": diagnostic.column,
        "end_line": diagnostic.end_line,
        "end_column": diagnostic.end_column,
        "fixes": [
            {
                "title": fix.title,
                "applicability": fix.applicability,
                "edits": [
                    {
                        "line": edit.line,
                        "column": edit.column,
                        "end_line": edit.end_line,
                        "end_column": edit.end_column,
                        "new_text": edit.new_text,
                    }
                    for edit in fix.edits
                ],
                "selection": _span_to_json(fix.selection) if fix.selection is not None else None,
            }
            for fix in diagnostic.fixes
        ],
        "data": dict(diagnostic.data) if diagnostic.data is not None else None,
    }


def render_json(results: Sequence[FileResult]) -> str:
    """A JSON array of diagnostics, each with its path: the text ``json.dumps`` of
    :func:`diagnostic_to_json`'s dicts gives (``indent=2``), written directly, each string and
    ``data`` by ``json`` (the encoder walks thousands of small dicts slowly in Python)."""
    items = [_diagnostic_text(r.path, d) for r in results for d in r.diagnostics]
    return "[\n" + ",\n".join(items) + "\n]\n" if items else "[]\n"


_STRING = json.JSONEncoder(ensure_ascii=False).encode
"""A string as JSON (``json``'s C encoder of strings)."""


def _members(members: Sequence[tuple[str, str]], level: int) -> str:
    """A JSON object of already-written values, indented as ``json.dumps(indent=2)`` at
    nesting ``level``."""
    inner, outer = "\n" + "  " * (level + 1), "\n" + "  " * level
    return (
        "{"
        + inner
        + ("," + inner).join(f'"{key}": {value}' for key, value in members)
        + outer
        + "}"
    )


def _array(values: Sequence[str], level: int) -> str:
    """A JSON array of already-written values at nesting ``level`` (``[]`` when empty)."""
    if not values:
        return "[]"
    inner, outer = "\n" + "  " * (level + 1), "\n" + "  " * level
    return "[" + inner + ("," + inner).join(values) + outer + "]"


def _range(item: Span | TextEdit) -> list[tuple[str, str]]:
    return [
        ("line", str(item.line)),
        ("column", str(item.column)),
        ("end_line", str(item.end_line)),
        ("end_column", str(item.end_column)),
    ]


def _fix_text(fix: Fix) -> str:
    edits = [
        _members([*_range(edit), ("new_text", _STRING(edit.new_text))], 5) for edit in fix.edits
    ]
    selection = _members(_range(fix.selection), 4) if fix.selection is not None else "null"
    return _members(
        [
            ("title", _STRING(fix.title)),
            ("applicability", _STRING(fix.applicability)),
            ("edits", _array(edits, 4)),
            ("selection", selection),
        ],
        3,
    )


def _diagnostic_text(path: str, diagnostic: Diagnostic) -> str:
    """:func:`diagnostic_to_json` of one diagnostic as ``json.dumps(indent=2)`` writes it in
    the report's array."""
    data = "null"
    if diagnostic.data is not None:
        data = json.dumps(dict(diagnostic.data), indent=2, ensure_ascii=False, default=str)
        data = data.replace("\n", "\n    ")  # its nesting level in the report
    return "  " + _members(
        [
            ("path", _STRING(path)),
            ("code", _STRING(diagnostic.code)),
            ("severity", _STRING(diagnostic.severity.value)),
            ("message", _STRING(diagnostic.message)),
            *_range(diagnostic),  # type: ignore[arg-type]
            ("fixes", _array([_fix_text(fix) for fix in diagnostic.fixes], 2)),
            ("data", data),
        ],
        1,
    )


def _rule_name(code: str) -> str:
    """A rule's kebab-case name, as ruff names its rules (``UnknownField`` -> ``unknown-field``)."""
    rule = next((r for r in RULES if r.code == code), None)
    if rule is None:
        return code
    return re.sub(r"(?<!^)(?=[A-Z])", "-", rule.__name__).lower()


def render_statistics(
    results: Sequence[FileResult], output_format: str, summary: Summary | None = None
) -> str:
    """``--statistics``: how many problems each rule found, most first (then by code), as ruff
    prints them (``count<TAB>code<TAB>[*] name``, ``[*]`` where a safe fix exists); JSON: a
    list of ``{code, name, count, fixable}``. Other formats print the text form."""
    counts: dict[str, int] = {}
    fixable: set[str] = set()
    for result in results:
        for diagnostic in result.diagnostics:
            counts[diagnostic.code] = counts.get(diagnostic.code, 0) + 1
            if any(fix.applicability == "safe" for fix in diagnostic.fixes):
                fixable.add(diagnostic.code)
    order = sorted(counts, key=lambda code: (-counts[code], code))
    if output_format == "json":
        items = [
            {"code": c, "name": _rule_name(c), "count": counts[c], "fixable": c in fixable}
            for c in order
        ]
        return json.dumps(items, indent=2) + "\n"
    width = max((len(str(count)) for count in counts.values()), default=1)
    marks = bool(fixable)
    lines = [
        f"{counts[c]:>{width}}\t{c}\t{('[*] ' if c in fixable else '[ ] ') if marks else ''}"
        f"{_rule_name(c)}"
        for c in order
    ]
    text = "".join(line + "\n" for line in lines)
    summary_line = render_text(results, summary).splitlines()[-1:] if summary is not None else []
    if summary_line and counts:
        text += summary_line[0] + "\n"
    elif summary_line:
        text = summary_line[0] + "\n"
    return text


def _escape_github(value: str, *, property_value: bool = False) -> str:
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if property_value:
        value = value.replace(":", "%3A").replace(",", "%2C")
    return value


_GITHUB_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def render_github(results: Sequence[FileResult]) -> str:
    """GitHub Actions workflow commands (``::error file=...,line=...::message``): inline PR annotations."""
    lines = []
    for result in results:
        for d in result.diagnostics:
            properties = ",".join(
                f"{key}={_escape_github(str(value), property_value=True)}"
                for key, value in (
                    ("file", result.path),
                    ("line", d.line),
                    ("col", d.column + 1),
                    ("endLine", d.end_line),
                    ("endColumn", d.end_column + 1),
                    ("title", f"rewardkit {d.code}"),
                )
            )
            lines.append(
                f"::{_GITHUB_LEVEL[d.severity]} {properties}::{_escape_github(f'{d.code} {d.message}')}"
            )
    return "".join(line + "\n" for line in lines)


_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def render_sarif(results: Sequence[FileResult]) -> str:
    """A SARIF 2.1.0 log (GitHub code scanning, IDE viewers); columns 1-based as SARIF requires."""
    rules = [
        {
            "id": rule.code,
            "name": rule.__name__,
            "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": " ".join((rule.__doc__ or rule.summary).split())},
            "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity]},
            "helpUri": f"https://example.invalid/rewardkit/docs/checks.md#{rule.code.lower()}",
        }
        for rule in RULES
    ]
    index = {rule.code: position for position, rule in enumerate(RULES)}
    sarif_results = []
    for result in results:
        for d in result.diagnostics:
            sarif_results.append(
                {
                    "ruleId": d.code,
                    "ruleIndex": index.get(d.code, 0),
                    "level": _SARIF_LEVEL[d.severity],
                    "message": {"text": d.message},
                    "locations": [
                        {
                            "physicalLocation": {
                                "artifactLocation": {"uri": result.path},
                                "region": {
                                    "startLine": d.line,
                                    "startColumn": d.column + 1,
                                    "endLine": d.end_line,
                                    "endColumn": d.end_column + 1,
                                },
                            }
                        }
                    ],
                }
            )
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "rewardkit",
                        "version": __version__,
                        "informationUri": "https://example.invalid/rewardkit",
                        "rules": rules,
                    }
                },
                "results": sarif_results,
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"
