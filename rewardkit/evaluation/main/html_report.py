"""The `--html` report: one self-contained file (inline CSS, JS and SVG, no network).

It shows the score, a bar chart of outcomes, and a per-case table filterable by outcome (buttons
or a click on a bar) and by text. Each row shows the extracted answer and the expected value
typeset by KaTeX (carried in the page: `katex_assets`), and, until clicked, only the lines of the
response around the extracted answer (highlighted), or its last lines when there is none.

The cases travel as data, not as HTML: one JSON document of columns (outcomes and reasons as
small integers, texts in a table of distinct strings), gzip-compressed and base64-encoded in a
`<script type="application/gzip+base64">` element. The page decodes it with the browser's own
`DecompressionStream` and renders one page of rows at a time, so 16,000 cases make a file of a
few MB that opens at once, where one `<tr>` per case made 43 MB and a page that took seconds.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

import orjson

from rewardkit.evaluation.main.katex_assets import KATEX_ELEMENT_ID, katex_bundle
from rewardkit.evaluation.main.output_files import encode_text, write_atomically
from rewardkit.evaluation.main.report import format_score
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
DATA_FORMAT = 2
"""Version of the embedded data's layout (its `format` field). 2: an empty text is a string
(`""`), told apart from a missing one (-1)."""
COMPRESSION_LEVEL = 6
"""zlib's default. On 16,000 responses: level 3 is 2.7x as fast (0.16 vs 0.43 s) but 35% larger,
level 9 2x as slow for 4% less; 6 keeps unrelated responses (a ratio of ~4) under 8 MB."""
DATA_ELEMENT_ID = "report-data"
PAGE_SIZE = 100
"""Rows rendered at a time: the table's DOM stays the same size whatever the number of cases."""


def report_data(results: Iterable[CaseResult]) -> dict[str, Any]:
    """The cases as columns, in input order.

    `outcome` and `reason` index the `outcomes` and `reasons` tables; `answer`, `expected`,
    `error` and `response` index `strings` (-1: none; an empty text is `""`). Texts are stored once however many
    cases share them (a gold, a repeated response). The string table is ordered by expected
    answer, so that the responses to one problem sit side by side, within reach of gzip's 32 KB
    window: sampling k responses per problem then costs little more than one."""
    outcome_index = {outcome: i for i, outcome in enumerate(OUTCOMES)}
    reasons: dict[str, int] = {}
    strings: dict[str, int] = {}
    order_key: list[tuple[str, int]] = []

    def intern(text: object, group: str) -> int:
        if text is None:
            return -1
        value = str(text)
        index = strings.get(value)
        if index is None:
            index = strings[value] = len(strings)
            order_key.append((group, index))
        return index

    columns: dict[str, list[Any]] = {
        name: []
        for name in ("id", "line", "outcome", "reason", "answer", "expected", "error", "response")
    }
    for result in results:
        detail = result.detail
        expected = detail.get("expected")
        group = "" if expected is None else str(expected)
        columns["id"].append(result.id)
        columns["line"].append(result.line)
        columns["outcome"].append(outcome_index[result.outcome])
        columns["reason"].append(reasons.setdefault(result.reason, len(reasons)))
        columns["answer"].append(intern(detail.get("parsed_answer"), group))
        columns["expected"].append(intern(expected, group))
        columns["error"].append(intern(detail.get("error"), group))
        columns["response"].append(intern(result.response, group))
    texts = list(strings)
    order = [index for _group, index in sorted(order_key)]
    renumbered = [0] * len(order)
    for new, old in enumerate(order):
        renumbered[old] = new
    for name in ("answer", "expected", "error", "response"):
        columns[name] = [renumbered[i] if i >= 0 else -1 for i in columns[name]]
    return {
        "format": DATA_FORMAT,
        "n": len(columns["id"]),
        "outcomes": list(OUTCOMES),
        "colours": list(OUTCOME_COLOURS.values()),
        "reasons": list(reasons),
        "columns": columns,
        "strings": [texts[i] for i in order],
    }


def encode_data(data: Mapping[str, Any]) -> str:
    """JSON, gzip, base64: the text of the page's data element (only `A-Za-z0-9+/=`, so it
    cannot end the element early)."""
    try:
        raw = orjson.dumps(data)  # a sixth of json.dumps's time on 16,000 responses
    except TypeError:  # a lone surrogate: json escapes it
        raw = encode_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")))
    return base64.b64encode(gzip.compress(raw, COMPRESSION_LEVEL, mtime=0)).decode("ascii")


def decode_data(page: str) -> dict[str, Any]:
    """The data embedded in a report page (for tests and tools)."""
    start = page.index(f'id="{DATA_ELEMENT_ID}"')
    text = page[page.index(">", start) + 1 : page.index("</script>", start)]
    return json.loads(gzip.decompress(base64.b64decode(text.strip())))


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
            # (the whole row answers a click, not only a bar that may be a few pixels long)
            f'<rect x="0" y="{y}" width="{width}" height="{bar_height}" fill="transparent"></rect>'
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
        page_size=str(PAGE_SIZE),
        data_id=DATA_ELEMENT_ID,
        data=encode_data(report_data(results)),
        katex_id=KATEX_ELEMENT_ID,
        katex=katex_bundle(),
    )


def write_html_report(text: str, path: str | Path) -> None:
    """Write the report file (UTF-8) whole or not at all (`EvalOutputError`)."""
    write_atomically(path, encode_text(text), what="HTML report")
