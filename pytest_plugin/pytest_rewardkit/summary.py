"""The terminal summary of golden cases: passed/failed per file, failures grouped by reason."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

import pytest

# Golden items record these in ``user_properties``; the summary reads them from the reports.
GOLDEN_FILE_PROPERTY = "rewardkit_golden_file"
CASE_LOCATION_PROPERTY = "rewardkit_case_location"
FAILURE_REASON_PROPERTY = "rewardkit_failure_reason"

MAX_LOCATIONS_PER_REASON = 10
MALFORMED = "not collected: malformed (see ERRORS above)"


def _is_golden_path(config: pytest.Config, nodeid: str) -> bool:
    from pathlib import PurePath

    name = nodeid.split("::", 1)[0]
    return bool(name) and any(
        PurePath(name).match(p) for p in config.getini("rewardkit_golden_files")
    )


def write_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Write the ``rewardkit golden cases`` section when any golden case or file was seen."""
    per_file: dict[str, Counter[str]] = defaultdict(Counter)
    by_reason: dict[str, list[str]] = defaultdict(list)
    for status in ("passed", "failed", "error", "xfailed"):
        for report in terminalreporter.stats.get(status, []):
            if isinstance(report, pytest.CollectReport):
                if status == "error" and _is_golden_path(config, report.nodeid):
                    per_file[report.nodeid][MALFORMED] += 1
                continue
            properties = dict(getattr(report, "user_properties", ()) or ())
            golden_file = properties.get(GOLDEN_FILE_PROPERTY)
            if golden_file is None:
                continue
            outcome = status if status in ("passed", "xfailed") else "failed"
            per_file[golden_file][outcome] += 1
            if outcome == "failed":
                reason = properties.get(FAILURE_REASON_PROPERTY, "error")
                if str(report.longrepr).startswith("[XPASS(strict)]"):
                    reason = "a known failure (xfail) now passes: remove its 'xfail'"
                case_id = report.nodeid.rsplit("::", 1)[-1]
                by_reason[reason].append(
                    f"{properties.get(CASE_LOCATION_PROPERTY, golden_file)} {case_id}"
                )
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
