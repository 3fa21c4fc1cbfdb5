"""The per-file cache of ``rewardkit check``: a module whose bytes, configuration and checker are
unchanged is not parsed again, even when other files of the run changed.

Entries are JSON (safe to read whatever is in the directory) under
``.rewardkit_cache/<version>/files/``, keyed by a hash of the checker
(:func:`~rewardkit.checks.run_cache.engine_fingerprint`), the configuration's fingerprint and the
file's bytes. Each entry starts with a checksum of its JSON; an entry that is not a regular
file, is too large, fails its checksum or does not describe an analysis is a miss, and the
file is analysed again and its entry rewritten.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from rewardkit._version import __version__
from rewardkit.checks.config import CheckConfig
from rewardkit.checks.model import (
    Diagnostic,
    Fix,
    ModuleAnalysis,
    RewardDefinition,
    RewardParameter,
    Severity,
    Span,
    TextEdit,
)
from rewardkit.checks.run_cache import (
    engine_fingerprint,
    ensure_directory,
    hasher,
    prune,
    read_entry,
    seal,
    unseal,
    write_atomically,
)

FILES_KEPT = 20_000
"""File entries kept; the oldest are removed beyond this."""
FILE_ENTRY_LIMIT = 64 * 1024 * 1024
"""A file entry larger than this is damaged or foreign (a miss)."""
DAMAGED_ENTRY_ERRORS = (ValueError, KeyError, TypeError, IndexError, AttributeError, RecursionError)
"""What decoding an entry that does not describe an analysis raises (deep JSON included)."""


class FileCache:
    """Analyses of single files, by (checker, configuration, bytes)."""

    def __init__(self, root: str) -> None:
        self._directory = os.path.join(root, __version__, "files")
        self._root = root
        self._engine = engine_fingerprint()
        self._stored = 0

    def key(self, config: CheckConfig, data_digest: str) -> str:
        """The key of a file's analysis under ``config``."""
        key = hasher(self._engine)
        key.update(repr(config.fingerprint).encode("utf-8", "surrogateescape"))
        key.update(data_digest.encode())
        return key.hexdigest()

    def load(self, key: str) -> ModuleAnalysis | None:
        """The stored analysis, or ``None`` (missing, not a regular file, damaged)."""
        entry = read_entry(os.path.join(self._directory, key), FILE_ENTRY_LIMIT)
        body = unseal(entry) if entry is not None else None
        if body is None:
            return None
        try:
            return analysis_from_json(json.loads(body.decode("utf-8", "surrogatepass")))
        except DAMAGED_ENTRY_ERRORS:
            return None

    def store(self, key: str, analysis: ModuleAnalysis) -> None:
        """Store an analysis (never raises: the cache is an optimisation)."""
        if self._stored == 0 and not ensure_directory(self._root, self._directory):
            return
        self._stored += 1
        payload = json.dumps(analysis_to_json(analysis), ensure_ascii=False, separators=(",", ":"))
        write_atomically(
            os.path.join(self._directory, key), seal(payload.encode("utf-8", "surrogatepass"))
        )

    def close(self) -> None:
        """Bound the directory once a run has added entries."""
        if self._stored:
            prune(self._directory, FILES_KEPT)


def _span(span: Span) -> list[int]:
    return [span.line, span.column, span.end_line, span.end_column]


def _position(values: Any) -> list[int]:
    """A stored range's four integers, checked: an entry that is not ours fails here, not later."""
    if not isinstance(values, list) or len(values) != 4 or not all(type(v) is int for v in values):
        raise ValueError(f"not a range: {values!r}")
    return values


def _span_of(values: Any) -> Span:
    return Span(*_position(values))


def _diagnostic_to_json(diagnostic: Diagnostic) -> dict[str, Any]:
    return {
        "code": diagnostic.code,
        "severity": diagnostic.severity.value,
        "message": diagnostic.message,
        "span": _span(diagnostic.span),
        "fixes": [
            {
                "title": fix.title,
                "edits": [
                    [e.line, e.column, e.end_line, e.end_column, e.new_text] for e in fix.edits
                ],
                "preferred": fix.is_preferred,
                "selection": _span(fix.selection) if fix.selection is not None else None,
            }
            for fix in diagnostic.fixes
        ],
        "data": dict(diagnostic.data) if diagnostic.data is not None else None,
    }


def _diagnostic_from_json(item: Mapping[str, Any]) -> Diagnostic:
    fixes = tuple(
        Fix(
            fix["title"],
            tuple(TextEdit(*_position(edit[:4]), str(edit[4])) for edit in fix["edits"]),
            fix["preferred"],
            _span_of(fix["selection"]) if fix["selection"] is not None else None,
        )
        for fix in item["fixes"]
    )
    return Diagnostic(
        item["code"],
        Severity(item["severity"]),
        item["message"],
        *_position(item["span"]),
        fixes,
        item["data"],
    )


def _reward_to_json(reward: RewardDefinition) -> dict[str, Any]:
    return {
        "name": reward.name,
        "function_name": reward.function_name,
        "is_async": reward.is_async,
        "kind": reward.kind,
        "class_name": reward.class_name,
        "span": _span(reward.span),
        "definition_span": _span(reward.definition_span),
        "parameters": [
            [p.name, p.kind, p.has_default, _span(p.span), p.annotation] for p in reward.parameters
        ],
        "parameters_span": _span(reward.parameters_span),
        "registered": reward.registered,
        "module_level": reward.module_level,
        "own_fields": [list(pair) for pair in reward.own_fields],
    }


def _reward_from_json(item: Mapping[str, Any]) -> RewardDefinition:
    return RewardDefinition(
        name=item["name"],
        function_name=item["function_name"],
        is_async=item["is_async"],
        kind=item["kind"],
        class_name=item["class_name"],
        span=_span_of(item["span"]),
        definition_span=_span_of(item["definition_span"]),
        parameters=tuple(
            RewardParameter(name, kind, has_default, _span_of(span), annotation)
            for name, kind, has_default, span, annotation in item["parameters"]
        ),
        parameters_span=_span_of(item["parameters_span"]),
        registered=item["registered"],
        module_level=item["module_level"],
        own_fields=tuple((name, text) for name, text in item["own_fields"]),
    )


def analysis_to_json(analysis: ModuleAnalysis) -> dict[str, Any]:
    """A JSON-ready form of an analysis (everything ``rewardkit check`` reports from it)."""
    error = analysis.syntax_error
    return {
        "diagnostics": [_diagnostic_to_json(d) for d in analysis.diagnostics],
        "rewards": [_reward_to_json(r) for r in analysis.rewards],
        "skipped": analysis.skipped,
        "syntax_error": _diagnostic_to_json(error) if error is not None else None,
    }


def analysis_from_json(item: Mapping[str, Any]) -> ModuleAnalysis:
    """The analysis :func:`analysis_to_json` wrote."""
    error = item["syntax_error"]
    return ModuleAnalysis(
        diagnostics=tuple(_diagnostic_from_json(d) for d in item["diagnostics"]),
        rewards=tuple(_reward_from_json(r) for r in item["rewards"]),
        skipped=item["skipped"],
        syntax_error=_diagnostic_from_json(error) if error is not None else None,
    )
