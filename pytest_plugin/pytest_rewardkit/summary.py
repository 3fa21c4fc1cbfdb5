"""The terminal summary of golden cases: passed/failed per file, failures grouped by reason."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import PurePath
from typing import Any

import pytest

# A failing golden case records why in ``user_properties`` (which survive xdist and show in
# JUnit XML); the summary groups failures by it.
FAILURE_REASON_PROPERTY = "rewardkit_failure_reason"

MAX_LOCATIONS_PER_REASON = 10
MALFORMED = "not collected: malformed (see ERRORS above)"
XPASS_REASON = "a known failure (xfail) now passes: remove its 'xfail'"


def _golden_file(config: pytest.Config, report: pytest.CollectReport | pytest.TestReport) -> str:
    """The golden file a report belongs to (its node id's path), or '' for any other test."""
    path = report.nodeid.split("::", 1)[0]
    patterns = config.getini("rewardkit_golden_files")
    return path if path and any(PurePath(path).match(p) for p in patterns) else ""


def write_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Write the ``rewardkit golden cases`` section when any golden case or file was seen."""
    per_file: dict[str, Counter[str]] = defaultdict(Counter)
    by_reason: dict[str, list[str]] = defaultdict(list)
    for status in ("passed", "failed", "error", "xfailed"):
        for report in terminalreporter.stats.get(status, []):
            golden_file = _golden_file(config, report)
            if not golden_file:
                continue
            if isinstance(report, pytest.CollectReport):
                if status == "error":
                    per_file[golden_file][MALFORMED] += 1
                continue
            outcome = status if status in ("passed", "xfailed") else "failed"
            per_file[golden_file][outcome] += 1
            if outcome == "failed":
                reason = dict(report.user_properties).get(FAILURE_REASON_PROPERTY, "error")
                if str(report.longrepr).startswith("[XPASS(strict)]"):
                    reason = XPASS_REASON
                line = report.location[1]
                where = golden_file if line is None else f"{golden_file}:{line + 1}"
                by_reason[reason].append(f"{where} {report.nodeid.rsplit('::', 1)[-1]}")
    if not per_file:
        return
    terminalreporter.section("rewardkit golden cases")
    for golden_file in sorted(per_file):
        counts = per_file[golden_file]
        parts = [f"{counts[key]} {key}" for key in ("passed", "failed", "xfailed") if counts[key]]
        if counts[MALFORMED]:
            parts.append(MALFORMED)
        terminalreporter.write_line(f"{golden_file}: {', '.join(parts)}")
    if by_reason:
        terminalreporter.write_line("failures by reason:")
        for reason, locations in sorted(
            by_reason.items(), key=lambda item: (-len(item[1]), item[0])
        ):
            terminalreporter.write_line(f"  {len(locations)} x {reason}")
            for location in locations[:MAX_LOCATIONS_PER_REASON]:
                terminalreporter.write_line(f"      {location}")
            if len(locations) > MAX_LOCATIONS_PER_REASON:
                terminalreporter.write_line(
                    f"      ... and {len(locations) - MAX_LOCATIONS_PER_REASON} more"
                )
