"""The HTML report in a real headless Chromium (Debian's): cases shown by page, filter by tag,
search, highlight, the answer's context in a collapsed row, LaTeX typeset by the bundled KaTeX,
empty and missing responses told apart, no network, 16,000 cases in a file of a few MB. Saves
screenshots to test-artifacts/. (How fast it opens is measured by benchmarks/eval_html_report.py.)"""

from __future__ import annotations

import json
import os
import subprocess
from importlib import resources
from pathlib import Path

import pytest
from eval_helpers import cli_command, read_jsonl, write_jsonl
from headless_chromium import CHROMIUM, CHROMIUM_ARGS

from rewardkit.evaluation import sample_path
from rewardkit.evaluation.main.html_report import PAGE_SIZE, decode_data
from rewardkit.evaluation.main.katex_assets import KATEX_ELEMENT_ID, KATEX_VERSION


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        if os.environ.get("CI") == "true":
            pytest.fail("Debian's chromium is required in CI (apt-get install chromium)")
        pytest.skip("chromium is not installed")
    playwright_api = (
        pytest.importorskip("playwright.sync_api")
        if os.environ.get("CI") != "true"
        else __import__("playwright.sync_api").sync_api
    )
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def visible_outcomes(page) -> list[str]:
    return page.eval_on_selector_all(
        "#cases tbody tr:not([hidden])", "rows => rows.map(r => r.dataset.outcome)"
    )


def open_report(browser, path: Path):
    """A page showing the report once its data is decoded, and the URLs it requested."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready]")
    assert page.get_attribute("body", "data-ready") == "1", page.inner_text("#status")
    page.wait_for_selector("body[data-math]")  # KaTeX comes after the first rows
    assert page.get_attribute("body", "data-math") == "1", page.inner_text("#status")
    return page, requested


def cli_in(where: Path, *args: str) -> Path:
    """Run `rewardkit eval math ARGS` in `where`, in a child process started before the browser
    (a fork after Playwright's driver started would hold its pipes open)."""
    proc = subprocess.run(
        cli_command(*args), capture_output=True, text=True, timeout=600, cwd=where
    )
    assert proc.returncode == 0, proc.stderr
    return where


@pytest.fixture(scope="module")
def sample_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`rewardkit eval math --html` on the shipped sample."""
    where = tmp_path_factory.mktemp("html")
    return cli_in(
        where, "--workers", "1", "--html", "report.html", "--report", "report.json",
        "--output", "out.jsonl",
    )  # fmt: skip


def test_html_report_table_filters_and_highlights(
    sample_report: Path, browser, artifacts_dir: Path
) -> None:
    summary = json.loads((sample_report / "report.json").read_text())
    answers = {
        r["id"]: r["detail"]["parsed_answer"] for r in read_jsonl(sample_report / "out.jsonl")
    }
    n, counts = summary["n"], summary["failure_counts"]
    page, requested = open_report(browser, sample_report / "report.html")

    assert page.locator("#cases tbody tr").count() == n
    assert len(visible_outcomes(page)) == n
    assert page.locator("#shown").inner_text() == f"{n} of {n} cases shown"
    assert f"{summary['score']:.4f}" in page.locator(".cards").inner_text()

    page.click('#filters button[data-filter="NO_ANSWER"]')
    shown = visible_outcomes(page)
    assert shown == ["NO_ANSWER"] * counts["NO_ANSWER"]
    page.click('#chart .bar[data-filter="HARNESS_ERROR"]')  # the chart filters too
    assert visible_outcomes(page) == ["HARNESS_ERROR"] * counts["HARNESS_ERROR"]
    page.click('#filters button[data-filter="ALL"]')
    page.fill("#search", "hedge")
    page.press("#search", "Enter")
    assert set(visible_outcomes(page)) == {"WRONG_ANSWER"}
    page.fill("#search", "")
    page.press("#search", "Enter")

    nested = page.locator('tr:has(td.id:text-is("nested-box")) mark.answer')
    assert nested.inner_text() == answers["nested-box"]
    last_box = page.locator('tr:has(td.id:has-text("last-box-wins")) pre.response')
    assert last_box.locator("mark.answer").inner_text() == "6"  # the last box, not the first (8)

    page.click('#filters button[data-filter="WRONG_ANSWER"]')
    page.screenshot(path=str(artifacts_dir / "eval-report.png"), full_page=False)
    assert all(url.startswith("file://") for url in requested), requested
    page.close()


BIG = 16_000


@pytest.fixture(scope="module")
def big_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`rewardkit eval math --html` on 16,000 cases (the sample, copied with distinct ids)."""
    where = tmp_path_factory.mktemp("big-html")
    rows = [json.loads(line) for line in sample_path().read_text(encoding="utf-8").splitlines()]
    copies = -(-BIG // len(rows))
    cases = [{**row, "id": f"{row['id']}#{k}"} for k in range(copies) for row in rows][:BIG]
    write_jsonl(where / "in.jsonl", cases)
    return cli_in(
        where, "in.jsonl", "--workers", "2", "--html", "report.html", "--report", "report.json"
    )


def test_a_16000_case_report_is_a_few_mb_and_renders_one_page_at_a_time(
    big_report: Path, browser, artifacts_dir: Path
) -> None:
    """16,000 cases once made a 43 MB file of 16,000 rows. The cases are now compressed data
    (decoded by the browser's DecompressionStream) and the table shows a page at a time."""
    path = big_report / "report.html"
    assert path.stat().st_size <= 8 * 2**20
    report = json.loads((big_report / "report.json").read_text(encoding="utf-8"))
    data = decode_data(path.read_text(encoding="utf-8"))
    assert data["n"] == BIG
    assert data["columns"]["id"][-1] == f"{read_jsonl(big_report / 'in.jsonl')[-1]['id']}"
    page, requested = open_report(browser, path)

    assert page.locator("#cases tbody tr").count() == PAGE_SIZE  # not 16,000 rows in the DOM
    assert page.inner_text("#shown") == f"{BIG} of {BIG} cases shown"
    pages = -(-BIG // PAGE_SIZE)
    assert page.inner_text("#page") == f"page 1 of {pages} (cases 1-{PAGE_SIZE})"
    page.click('#pages button[data-page="last"]')
    assert (
        page.inner_text("#page") == f"page {pages} of {pages} (cases {BIG - PAGE_SIZE + 1}-{BIG})"
    )
    assert (
        page.locator("#cases tbody tr td.id")
        .last.inner_text()
        .startswith(data["columns"]["id"][-1])
    )

    no_answer = report["failure_counts"]["NO_ANSWER"]
    page.click('#chart .bar[data-filter="NO_ANSWER"]')
    assert page.inner_text("#shown") == f"{no_answer} of {BIG} cases shown"
    assert set(visible_outcomes(page)) == {"NO_ANSWER"}
    page.click('#filters button[data-filter="ALL"]')

    page.fill("#search", "last-box-wins#213")
    page.press("#search", "Enter")
    assert page.inner_text("#shown") == f"1 of {BIG} cases shown"
    assert page.locator("mark.answer").inner_text() == "6"  # the last box (of 8, then 6)
    page.screenshot(path=str(artifacts_dir / "eval-report-16000.png"), full_page=False)
    assert all(url.startswith("file://") for url in requested), requested
    page.close()


FILLER = [f"Step {k}: we compute the {k}th partial sum." for k in range(1, 41)]
CONTEXT_CASES = [
    {  # the box on line 41 of 43: the collapsed row shows lines 38-42, not the start
        "id": "long-context",
        "response": "\n".join(
            [*FILLER, r"So the answer is \boxed{\frac{1}{2}}.", "Done.", "Check."]
        ),
        "answer": r"\frac{1}{2}",
    },
    {  # no answer: the last lines, where the grader looked
        "id": "no-answer-tail",
        "response": "\n".join([*(f"Line {k} of reasoning." for k in range(1, 31)), "I give up."]),
        "answer": "3",
    },
    {  # one long paragraph: the context is clipped to characters around the answer
        "id": "long-line",
        "response": "word " * 600 + r"hence \boxed{42} and " + "more " * 300,
        "answer": "42",
    },
    {"id": "sqrt", "response": r"\boxed{\sqrt{2}}", "answer": r"\sqrt{2}"},
    {"id": "power", "response": r"\boxed{x^{2}}", "answer": "x^2"},  # (an italic x: KaTeX_Math)
    {"id": "bad-gold", "response": r"\boxed{1}", "answer": "\\frac{1}{"},
    {"id": "empty", "response": "", "answer": "1"},
    {"id": "blank", "response": " \n\t ", "answer": "1"},
    {"id": "missing", "error": "the endpoint timed out", "answer": "1"},
]


@pytest.fixture(scope="module")
def context_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`rewardkit eval math --html` on responses made to show the collapsed context and LaTeX."""
    where = tmp_path_factory.mktemp("context-html")
    write_jsonl(where / "in.jsonl", CONTEXT_CASES)
    return cli_in(where, "in.jsonl", "--workers", "1", "--html", "report.html")


def row(page, case_id: str):
    return page.locator(f'#cases tbody tr:has(td.id:text-is("{case_id}"))')


def test_a_collapsed_row_shows_the_lines_around_the_extracted_answer(
    context_report: Path, browser, artifacts_dir: Path
) -> None:
    """Issue 26 item 4: a collapsed response shows the answer's context, not its first lines;
    a click shows all of it, another click the context again."""
    page, requested = open_report(browser, context_report / "report.html")
    long = row(page, "long-context").locator("pre.response")
    collapsed = long.inner_text()
    assert collapsed.splitlines() == [
        "⋯ 37 lines above",
        *FILLER[37:],
        r"So the answer is \boxed{\frac{1}{2}}.",
        "Done.",
        "⋯ 1 line below",
    ]
    assert long.locator("mark.answer").inner_text() == r"\frac{1}{2}"
    mark, box = long.locator("mark.answer").bounding_box(), long.bounding_box()
    assert box["y"] <= mark["y"]
    assert mark["y"] + mark["height"] <= box["y"] + box["height"]

    long.click()
    expanded = long.inner_text()
    assert expanded == CONTEXT_CASES[0]["response"]
    assert long.locator("mark.answer").inner_text() == r"\frac{1}{2}"
    long.click()
    assert long.inner_text() == collapsed

    tail = row(page, "no-answer-tail").locator("pre.response").inner_text()
    assert tail.splitlines() == [
        "⋯ 27 lines above",
        *(f"Line {k} of reasoning." for k in range(28, 31)),
        "I give up.",
    ]
    clipped = row(page, "long-line").locator("pre.response")
    assert clipped.locator("mark.answer").inner_text() == "42"
    text = clipped.inner_text()
    assert text.startswith("…word ")  # cut at a space near 400 characters before the answer
    assert text.endswith(" more…")  # and near 200 after it
    assert 540 <= len(text) <= 610
    page.screenshot(path=str(artifacts_dir / "eval-report-context.png"), full_page=True)
    assert all(url.startswith("file://") for url in requested), requested
    page.close()


def test_an_empty_response_is_told_apart_from_a_missing_one(context_report: Path, browser) -> None:
    """Issue 26 item 13: "(no response)" was shown for both."""
    page, _requested = open_report(browser, context_report / "report.html")
    assert row(page, "missing").locator("td").last.inner_text().splitlines() == [
        "(no response)",
        "generation failed upstream: the endpoint timed out",
    ]
    assert row(page, "empty").locator(".empty-response").inner_text() == "(empty response)"
    assert (
        row(page, "blank").locator(".empty-response").inner_text()
        == "(empty response: 4 whitespace characters)"
    )
    assert page.locator(".no-response").count() == 1
    page.close()


def test_a_bad_golds_error_is_shown_as_written(context_report: Path, browser) -> None:
    """Issue 26 item 9: `gold '\\\\frac{1}{'` (a Python repr) in the HTML; now the gold's text."""
    page, _requested = open_report(browser, context_report / "report.html")
    error = row(page, "bad-gold").locator(".error").inner_text()
    assert error.startswith("gold '\\frac{1}{' ")
    assert "\\\\" not in error
    page.close()


def test_answers_and_expected_values_are_typeset_by_the_bundled_katex(
    context_report: Path, browser
) -> None:
    """Issue 26 item 4: LaTeX rendered offline (KaTeX and its fonts inside the page), the
    source under it; what KaTeX cannot parse and plain numbers stay as written."""
    page, requested = open_report(browser, context_report / "report.html")
    answer = row(page, "long-context").locator("td.ans")
    assert answer.locator(".katex .mfrac").count() == 1
    assert answer.locator(".katex annotation").text_content() == r"\frac{1}{2}"
    assert answer.locator("code.source").inner_text() == r"\frac{1}{2}"
    assert row(page, "sqrt").locator("td.exp .katex .sqrt").count() == 1
    assert row(page, "power").locator("td.ans .katex .msupsub").count() == 1

    bad_gold = row(page, "bad-gold").locator("td.exp")
    assert bad_gold.locator(".katex").count() == 0
    assert bad_gold.locator("code.source.unrendered").inner_text() == "\\frac{1}{"
    assert "KaTeX" in bad_gold.locator("code.source").get_attribute("title")

    plain = row(page, "long-line").locator("td.ans")
    assert plain.inner_text() == "42"
    assert plain.locator(".katex").count() == 0

    fonts = page.evaluate(
        """() => document.fonts.ready.then(() => Array.from(document.fonts)
            .filter(face => face.status === "loaded").map(face => face.family))"""
    )
    assert "KaTeX_Main" in fonts
    assert "KaTeX_Math" in fonts
    assert all(url.startswith("file://") for url in requested), requested
    page.close()


def test_the_bundled_katex_adds_under_1_mb_to_a_report(context_report: Path) -> None:
    """Issue 26 item 4: report size +1 MB at most; KATEX_VERSION is the vendored script's."""
    page = (context_report / "report.html").read_text(encoding="utf-8")
    start = page.index(f'id="{KATEX_ELEMENT_ID}"')
    element = page[start : page.index("</script>", start)]
    assert len(element.encode()) < 1_000_000
    script = resources.files("rewardkit.evaluation").joinpath("data/katex/katex.min.js").read_text()
    assert f'version:"{KATEX_VERSION}"' in script
