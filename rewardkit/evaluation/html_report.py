"""The `--html` report: one self-contained file (inline CSS, JS and SVG, no network).

It shows the score, a bar chart of outcomes, and a per-case table filterable by outcome (buttons
or a click on a bar) and by text, with each response's extracted answer highlighted.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

from rewardkit.evaluation.output_files import encode_text, write_atomically
from rewardkit.evaluation.report import format_score
from rewardkit.evaluation.scoring import PASS, CaseResult, Summary
from rewardkit.failures import FailureTag

OUTCOME_COLOURS = {
    PASS: "#2e7d32",
    FailureTag.NO_ANSWER.value: "#8d6e63",
    FailureTag.WRONG_ANSWER.value: "#c62828",
    FailureTag.ADAPTER_ERROR.value: "#6a1b9a",
    FailureTag.HARNESS_ERROR.value: "#ef6c00",
}
OUTCOMES = tuple(OUTCOME_COLOURS)


def highlight_answer(response: str, answer: str | None) -> str:
    """Escape `response` for HTML and wrap the last occurrence of `answer` in `<mark>`.

    The grader extracts the last box (or last stated answer), so the last occurrence is the one
    it read. If the answer is not found verbatim, the response is shown unmarked.
    """
    if answer:
        index = response.rfind(answer)
        if index >= 0:
            end = index + len(answer)
            return (
                html.escape(response[:index])
                + '<mark class="answer">'
                + html.escape(response[index:end])
                + "</mark>"
                + html.escape(response[end:])
            )
    return html.escape(response)


def _cell(value: object) -> str:
    return '<span class="muted">-</span>' if value in (None, "") else html.escape(str(value))


def _row(result: CaseResult) -> str:
    detail = result.detail
    answer = detail.get("parsed_answer")
    response = result.response or ""
    error = detail.get("error")
    search = " ".join(
        str(part)
        for part in (
            result.id,
            result.outcome,
            result.reason,
            answer,
            detail.get("expected"),
            error,
            response,
        )
        if part
    ).lower()
    line = f'<div class="muted">line {result.line}</div>' if result.line is not None else ""
    body = (
        f'<pre class="response">{highlight_answer(response, answer)}</pre>'
        if response
        else '<span class="muted">(no response)</span>'
    )
    if error:
        body += f'<div class="error">{html.escape(str(error))}</div>'
    return (
        f'<tr data-outcome="{result.outcome}" data-reason="{html.escape(result.reason)}" data-search="{html.escape(search)}">'
        f'<td class="id">{html.escape(result.id)}{line}</td>'
        f'<td><span class="badge {result.outcome}">{result.outcome}</span></td>'
        f"<td>{_cell(result.reason)}</td>"
        f'<td class="ans">{_cell(answer)}</td>'
        f'<td class="exp">{_cell(detail.get("expected"))}</td>'
        f"<td>{body}</td></tr>"
    )


def _chart(summary: Summary) -> str:
    """A horizontal SVG bar per outcome; clicking a bar filters the table."""
    counts = {PASS: summary.passed, **summary.failure_counts}
    top = max(counts.values(), default=0) or 1
    bar_height, gap, label_width, width = 26, 8, 130, 640
    parts = [
        f'<svg viewBox="0 0 {width} {len(OUTCOMES) * (bar_height + gap)}" role="img" aria-label="cases by outcome">'
    ]
    for position, outcome in enumerate(OUTCOMES):
        y = position * (bar_height + gap)
        count = counts.get(outcome, 0)
        length = (width - label_width - 60) * count / top
        parts.append(
            f'<g class="bar" data-filter="{outcome}"><title>{outcome}: {count}</title>'
            f'<text x="0" y="{y + 18}" font-size="13">{outcome}</text>'
            f'<rect x="{label_width}" y="{y}" width="{length:.1f}" height="{bar_height}" rx="3" fill="{OUTCOME_COLOURS[outcome]}"></rect>'
            f'<text x="{label_width + length + 6:.1f}" y="{y + 18}" font-size="13">{count}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)


def render_html(
    results: Iterable[CaseResult],
    summary: Summary,
    *,
    title: str,
    config: Mapping[str, Any],
    timings: Mapping[str, Any],
) -> str:
    """The whole report as one HTML string."""
    template = Template(
        resources.files("rewardkit.evaluation")
        .joinpath("data/report_template.html")
        .read_text("utf-8")
    )
    counts = {PASS: summary.passed, **summary.failure_counts}
    cards = [
        ("score", format_score(summary.score)),
        ("passed / scored", f"{summary.passed} / {summary.scored}"),
        ("cases", str(summary.n)),
        ("excluded (our side)", str(summary.excluded)),
    ]
    rate = timings.get("cases_per_second")
    if rate:
        cards.append(("cases / s", f"{rate:,.0f}"))
    buttons = [f'<button type="button" data-filter="ALL">all ({summary.n})</button>']
    buttons += [
        f'<button type="button" data-filter="{outcome}">{outcome} ({counts.get(outcome, 0)})</button>'
        for outcome in OUTCOMES
    ]
    meta = ", ".join(
        f"{key}: {value}" for key, value in config.items() if value not in (None, "", False)
    )
    return template.substitute(
        title=html.escape(title),
        meta=html.escape(meta),
        cards="".join(
            f'<div class="card"><div class="v">{html.escape(v)}</div><div class="k">{html.escape(k)}</div></div>'
            for k, v in cards
        ),
        chart=_chart(summary),
        filter_buttons="\n  ".join(buttons),
        rows="\n".join(_row(result) for result in results),
    )


def write_html_report(text: str, path: str | Path) -> None:
    """Write the report file (UTF-8) whole or not at all (`EvalOutputError`)."""
    write_atomically(path, encode_text(text), what="HTML report")
