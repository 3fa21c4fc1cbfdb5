"""The HTML report in a real headless Chromium (Debian's): cases shown, filter by tag, highlight,
no network. Saves a screenshot to test-artifacts/."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from rewardkit.evaluation import run_math_eval

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI") == "true":
            pytest.fail("Debian's chromium is required in CI (apt-get install chromium)")
        pytest.skip("chromium is not installed")
    playwright_api = pytest.importorskip("playwright.sync_api") if os.environ.get("CI") != "true" else __import__("playwright.sync_api").sync_api
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def visible_outcomes(page) -> list[str]:
    return page.eval_on_selector_all("#cases tbody tr:not([hidden])", "rows => rows.map(r => r.dataset.outcome)")


def test_html_report_table_filters_and_highlights(browser, tmp_path: Path, artifacts_dir: Path) -> None:
    report = tmp_path / "report.html"
    run = run_math_eval(None, workers=0, html=report)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(report.as_uri())

    assert page.locator("#cases tbody tr").count() == run.summary.n
    assert len(visible_outcomes(page)) == run.summary.n
    assert page.locator("#shown").inner_text() == f"{run.summary.n} of {run.summary.n} cases shown"
    assert f"{run.summary.score:.4f}" in page.locator(".cards").inner_text()

    page.click('#filters button[data-filter="NO_ANSWER"]')
    shown = visible_outcomes(page)
    assert shown == ["NO_ANSWER"] * run.summary.failure_counts["NO_ANSWER"]
    page.click('#chart .bar[data-filter="HARNESS_ERROR"]')  # the chart filters too
    assert visible_outcomes(page) == ["HARNESS_ERROR"] * run.summary.failure_counts["HARNESS_ERROR"]
    page.click('#filters button[data-filter="ALL"]')
    page.fill("#search", "hedge")
    assert set(visible_outcomes(page)) == {"WRONG_ANSWER"}
    page.fill("#search", "")

    nested = page.locator('tr:has(td.id:text-is("nested-box")) mark.answer')
    assert nested.inner_text() == next(r.detail["parsed_answer"] for r in run.results if r.id == "nested-box")
    last_box = page.locator('tr:has(td.id:has-text("last-box-wins")) pre.response')
    assert last_box.locator("mark.answer").inner_text() == "6"  # the last box, not the first (8)

    page.click('#filters button[data-filter="WRONG_ANSWER"]')
    page.screenshot(path=str(artifacts_dir / "eval-report.png"), full_page=False)
    assert all(url.startswith("file://") for url in requested), requested
    page.close()
