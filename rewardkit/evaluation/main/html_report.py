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
from rewardkit.evaluation.tasks import MATH, Task
from rewardkit.runtime.define.failures import FailureTag

OUTCOME_COLOURS = {
    PASS: "#2e7d32",
    FailureTag.NO_ANSWER.value: "#8d6e63",
    FailureTag.WRONG_ANSWER.value: "#c62828",
    FailureTag.ADAPTER_ERROR.value: "#6a1b9a",
    FailureTag.HARNESS_ERROR.value: "#ef6c00",
}
OUTCOMES = tuple(OUTCOME_COLOURS)
"""The math task's outcomes, in the order the page shows them."""
CODE_COLOURS = {
    "NO_CODE": "#8d6e63",
    "SYNTAX_ERROR": "#ad1457",
    "RUNTIME_ERROR": "#d84315",
    "WRONG_OUTPUT": "#c62828",
    "TIMEOUT": "#1565c0",
    "MEMORY_LIMIT": "#00838f",
    "SANDBOX_ERROR": "#455a64",
}
"""Colours of the code task's own outcomes (the others are math's)."""
HEADERS = {
    "math": ("extracted answer", "expected", "response: the lines around the extracted answer "
             "(highlighted), or its last lines; click for all of it"),
    "code": ("program (extracted)", "first failing test: expected and actual output",
             "response: the lines around the program (highlighted); click for all of it"),
}  # fmt: skip
"""The headers of the answer, expected and response columns, by how a task's rows show."""


def outcome_colours(task: Task = MATH) -> dict[str, str]:
    """Each outcome of `task` (PASS first) with its colour."""
    colours = {**OUTCOME_COLOURS, **CODE_COLOURS}
    return {outcome: colours[outcome] for outcome in (PASS, *task.tags)}


DATA_FORMAT = 2
"""Version of the embedded data's layout (its `format` field). 2: an empty text is a string
(`""`), told apart from a missing one (-1)."""
COMPRESSION_LEVEL = 6
"""zlib's default. On 16,000 responses: level 3 is 2.7x as fast (0.16 vs 0.43 s) but 35% larger,
level 9 2x as slow for 4% less; 6 keeps unrelated responses (a ratio of ~4) under 8 MB."""
DATA_ELEMENT_ID = "report-data"
PAGE_SIZE = 100
"""Rows rendered at a time: the table's DOM stays the same size whatever the number of cases."""


def report_data(results: Iterable[CaseResult], task: Task = MATH) -> dict[str, Any]:
    """The cases of `task` as columns, in input order (`display` says how the page shows them:
    `code` rows show the program as code and the first failing test, `math` rows typeset).

    `outcome` and `reason` index the `outcomes` and `reasons` tables; `answer`, `expected`,
    `error` and `response` index `strings` (-1: none; an empty text is `""`). Texts are stored once however many
    cases share them (a gold, a repeated response). The string table is ordered by expected
    answer, so that the responses to one problem sit side by side, within reach of gzip's 32 KB
    window: sampling k responses per problem then costs little more than one."""
    colours = outcome_colours(task)
    outcome_index = {outcome: i for i, outcome in enumerate(colours)}
    texts_of = _TEXT_COLUMNS + (_CODE_COLUMNS if task.runs_code else ())
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

    columns: dict[str, list[Any]] = {name: [] for name in ("id", "line", "outcome", "reason")}
    columns.update({name: [] for name, _key in texts_of})
    for result in results:
        detail = result.detail
        expected = detail.get("expected")
        group = "" if expected is None else str(expected)
        columns["id"].append(result.id)
        columns["line"].append(result.line)
        columns["outcome"].append(outcome_index[result.outcome])
        columns["reason"].append(reasons.setdefault(result.reason, len(reasons)))
        for name, key in texts_of:
            value = result.response if key is None else detail.get(key)
            columns[name].append(intern(value, group))
    texts = list(strings)
    order = [index for _group, index in sorted(order_key)]
    renumbered = [0] * len(order)
    for new, old in enumerate(order):
        renumbered[old] = new
    for name, _key in texts_of:
        columns[name] = [renumbered[i] if i >= 0 else -1 for i in columns[name]]
    return {
        "format": DATA_FORMAT,
        "display": "code" if task.runs_code else "math",
        "n": len(columns["id"]),
        "outcomes": list(colours),
        "colours": list(colours.values()),
        "reasons": list(reasons),
        "columns": columns,
        "strings": [texts[i] for i in order],
    }


_TEXT_COLUMNS = (
    ("answer", "parsed_answer"),
    ("expected", "expected"),
    ("error", "error"),
    ("response", None),
)
"""The columns of texts, with the `detail` key each comes from (None: the response)."""
_CODE_COLUMNS = (("actual", "actual"), ("test", "failed_test"), ("message", "message"))
"""The code task's more: the first failing test's output, which test it is, the verdict's words."""


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


def _chart(summary: Summary, colours: Mapping[str, str]) -> str:
    """A horizontal SVG bar per outcome; clicking a bar filters the table."""
    counts = {PASS: summary.passed, **summary.failure_counts}
    top = max(counts.values(), default=0) or 1
    bar_height, gap, label_width, width = 26, 8, 130, 640
    parts = [
        f'<svg viewBox="0 0 {width} {len(colours) * (bar_height + gap)}" role="img" aria-label="cases by outcome">'
    ]
    for position, outcome in enumerate(colours):
        y = position * (bar_height + gap)
        count = counts.get(outcome, 0)
        length = (width - label_width - 60) * count / top
        parts.append(
            f'<g class="bar" data-filter="{outcome}"><title>{outcome}: {count}</title>'
            # (the whole row answers a click, not only a bar that may be a few pixels long)
            f'<rect x="0" y="{y}" width="{width}" height="{bar_height}" fill="transparent"></rect>'
            f'<text x="0" y="{y + 18}" font-size="13">{outcome}</text>'
            f'<rect x="{label_width}" y="{y}" width="{length:.1f}" height="{bar_height}" rx="3" fill="{colours[outcome]}"></rect>'
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
    task: Task = MATH,
) -> str:
    """The whole report of a run of `task` as one HTML string."""
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
    colours = outcome_colours(task)
    buttons += [
        f'<button type="button" data-filter="{outcome}">{outcome} ({counts.get(outcome, 0)})</button>'
        for outcome in colours
    ]
    headers = HEADERS["code" if task.runs_code else "math"]
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
        chart=_chart(summary, colours),
        outcome_styles=" ".join(
            f".badge.{outcome} {{ background: {colour}; }}"
            for outcome, colour in colours.items()
            if outcome not in OUTCOME_COLOURS
        ),
        answer_header=html.escape(headers[0]),
        expected_header=html.escape(headers[1]),
        response_header=html.escape(headers[2]),
        filter_buttons="\n  ".join(buttons),
        page_size=str(PAGE_SIZE),
        data_id=DATA_ELEMENT_ID,
        data=encode_data(report_data(results, task)),
        katex_id=KATEX_ELEMENT_ID,
        katex=katex_bundle(),
    )


def write_html_report(text: str, path: str | Path) -> None:
    """Write the report file (UTF-8) whole or not at all (`EvalOutputError`)."""
    write_atomically(path, encode_text(text), what="HTML report")
