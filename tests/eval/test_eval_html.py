"""The HTML report in a real headless Chromium (Debian's): cases shown, filter by tag, highlight,
no network. Saves a screenshot to test-artifacts/."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from eval_helpers import cli_command, read_jsonl
from headless_chromium import CHROMIUM, CHROMIUM_ARGS


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


@pytest.fixture(scope="module")
def sample_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`rewardkit eval math --html` on the shipped sample, run in a child process before the
    browser starts (a fork after Playwright's driver started would hold its pipes open)."""
    where = tmp_path_factory.mktemp("html")
    proc = subprocess.run(
        cli_command(
            "--workers",
            "1",
            "--html",
            "report.html",
            "--report",
            "report.json",
            "--output",
            "out.jsonl",
        ),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=where,
    )
    assert proc.returncode == 0, proc.stderr
    return where


def test_html_report_table_filters_and_highlights(
    sample_report: Path, browser, artifacts_dir: Path
) -> None:
    summary = json.loads((sample_report / "report.json").read_text())
    answers = {
        r["id"]: r["detail"]["parsed_answer"] for r in read_jsonl(sample_report / "out.jsonl")
    }
    n, counts = summary["n"], summary["failure_counts"]
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto((sample_report / "report.html").as_uri())

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
    assert set(visible_outcomes(page)) == {"WRONG_ANSWER"}
    page.fill("#search", "")

    nested = page.locator('tr:has(td.id:text-is("nested-box")) mark.answer')
    assert nested.inner_text() == answers["nested-box"]
    last_box = page.locator('tr:has(td.id:has-text("last-box-wins")) pre.response')
    assert last_box.locator("mark.answer").inner_text() == "6"  # the last box, not the first (8)

    page.click('#filters button[data-filter="WRONG_ANSWER"]')
    page.screenshot(path=str(artifacts_dir / "eval-report.png"), full_page=False)
    assert all(url.startswith("file://") for url in requested), requested
    page.close()
