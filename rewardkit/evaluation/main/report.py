"""The run's summary: the JSON report (`--report`) and the table printed on stdout."""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from rewardkit.evaluation.main.output_files import encode_text, write_atomically
from rewardkit.evaluation.scoring import PASS, Summary

if TYPE_CHECKING:  # rich is imported when a table is printed (~20 ms of every start-up)
    from rich.table import Table

SCHEMA_VERSION = 1
"""Version of the `--report` JSON layout; bumped on any incompatible change."""


@dataclass(frozen=True)
class Timings:
    """Wall-clock facts of one run (the only part of a report that differs between equal runs)."""

    wall_seconds: float
    grading_seconds: float
    new_cases: int
    resumed_cases: int
    started_at: str
    finished_at: str

    @property
    def cases_per_second(self) -> float | None:
        """Throughput of the cases graded in this run (resumed ones excluded)."""
        return self.new_cases / self.wall_seconds if self.wall_seconds > 0 else None

    def to_json(self) -> dict[str, Any]:
        """JSON form, with the derived throughput."""
        return {
            "wall_seconds": round(self.wall_seconds, 4),
            "grading_seconds": round(self.grading_seconds, 4),
            "cases_per_second": None
            if self.cases_per_second is None
            else float(f"{self.cases_per_second:.3g}")
            if self.cases_per_second < 1
            else round(self.cases_per_second, 2),
            "new_cases": self.new_cases,
            "resumed_cases": self.resumed_cases,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
        }


def build_report(
    summary: Summary, *, config: Mapping[str, Any], timings: Timings
) -> dict[str, Any]:
    """The `--report` document (`schema_version` first); everything but `timings` is reproducible."""
    return {
        "schema_version": SCHEMA_VERSION,
        "score": summary.score,
        "n": summary.n,
        "passed": summary.passed,
        "scored": summary.scored,
        "excluded": summary.excluded,
        "failure_counts": summary.failure_counts,
        "reason_counts": summary.reason_counts,
        "reasons_by_outcome": summary.reasons_by_outcome,
        "config": dict(config),
        "timings": timings.to_json(),
    }


def write_json_report(report: Mapping[str, Any], path: str | Path) -> None:
    """Write the report whole or not at all (temporary file and rename; `EvalOutputError`)."""
    text = json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    write_atomically(path, encode_text(text), what="JSON report")


def format_score(score: float | None) -> str:
    """`0.8125`, or `n/a` when nothing could be scored."""
    return "n/a" if score is None else f"{score:.4f}"


def _reasons_text(reasons: Mapping[str, int], limit: int = 8) -> str:
    items = list(reasons.items())
    text = ", ".join(f"{name} {count}" for name, count in items[:limit])
    if len(items) > limit:
        text += f", +{len(items) - limit} more"
    return text


def format_rate(rate: float) -> str:
    """Cases per second as a reader wants it: `4,719 cases/s`, `2.5 cases/s`, and below one
    case a second the seconds per case (`2.6 s/case`), never `0 cases/s`."""
    if rate >= 10:
        return f"{rate:,.0f} cases/s"
    if rate >= 1:
        return f"{rate:.1f} cases/s"
    return f"{1 / rate:,.1f} s/case"


def _cases(count: int) -> str:
    return f"{count} case{'' if count == 1 else 's'}"


def summary_table(summary: Summary, *, title: str, timings: Timings, workers_text: str) -> Table:
    """Score, counts by outcome with the reasons that decided them, and throughput."""
    rate = timings.cases_per_second
    throughput = (
        f"{_cases(timings.new_cases)} graded in {timings.wall_seconds:.2f} s"
        + (f" = {format_rate(rate)}" if rate else "")
        + f" ({workers_text})"
    )
    if timings.resumed_cases:
        throughput += f"; {_cases(timings.resumed_cases)} resumed from --output"
    from rich.table import Table

    table = Table(title=title, caption=throughput, title_justify="left", caption_justify="left")
    table.add_column("outcome")
    table.add_column("cases", justify="right")
    table.add_column("share", justify="right")
    table.add_column("decided by (reason: cases)")
    outcomes = [PASS, *summary.failure_counts]  # (the task's tags, in its order)
    for outcome in outcomes:
        count = summary.passed if outcome == PASS else summary.failure_counts[outcome]
        share = f"{count / summary.n:.1%}" if summary.n else "-"
        table.add_row(
            outcome, str(count), share, _reasons_text(summary.reasons_by_outcome.get(outcome, {}))
        )
    table.add_section()
    table.add_row(
        "score",
        format_score(summary.score),
        "",
        f"{summary.passed} / {summary.scored} ({_joined(summary.excluded_tags)} excluded)",
    )
    return table


def _joined(names: tuple[str, ...]) -> str:
    """`A and B`, `A, B and C`."""
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


def print_summary(table: Table, stream: TextIO) -> None:
    """Print the table; plain text when `stream` is not a terminal (CI logs, pipes), without
    the spaces rich pads each line with to the table's width."""
    from rich.console import Console

    terminal = Console(file=stream)
    if terminal.is_terminal:
        Console(file=stream, width=max(100, terminal.width), highlight=False).print(table)
        return
    text = io.StringIO()
    Console(file=text, width=100, highlight=False, color_system=None).print(table)
    stream.write("".join(line.rstrip() + "\n" for line in text.getvalue().splitlines()))
