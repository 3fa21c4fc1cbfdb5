"""`rewardkit eval code --html` in a real headless Chromium (Debian's), as test_eval_html.py opens
the math report: each row shows the program that ran (as code, not typeset) and the first
failing test with its expected and actual output; the code outcomes filter the table. Saves a
screenshot to test-artifacts/."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from eval_helpers import cli_env, read_jsonl
from test_eval_html import browser, open_report, visible_outcomes  # noqa: F401 (a fixture)

from rewardkit.evaluation.main.html_report import decode_data


@pytest.fixture(scope="module")
def code_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`rewardkit eval code --html` on the shipped sample, run before the browser starts."""
    where = tmp_path_factory.mktemp("code-html")
    proc = subprocess.run(
        [sys.executable, "-m", "rewardkit", "eval", "code", "--timeout", "2", "--workers", "2",
         "--html", "report.html", "--report", "report.json", "--output", "out.jsonl"],
        capture_output=True, text=True, timeout=600, cwd=where, env=cli_env(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return where


def test_the_report_shows_each_program_and_its_first_failing_test(
    code_report: Path,
    browser,  # noqa: F811
    artifacts_dir: Path,
) -> None:
    rows = {row["id"]: row for row in read_jsonl(code_report / "out.jsonl")}
    report = json.loads((code_report / "report.json").read_text())
    page, requested = open_report(browser, code_report / "report.html")
    assert page.locator("#cases tbody tr").count() == report["n"]
    headers = page.locator("#cases thead th").all_inner_texts()
    assert headers[3:5] == ["program (extracted)", "first failing test: expected and actual output"]

    wrong = page.locator('tr:has(td.id:has-text("stdio-reverse-wrong"))')
    assert wrong.locator("pre.program").inner_text().strip() == (
        rows["stdio-reverse-wrong"]["detail"]["parsed_answer"].strip()
    )
    assert wrong.locator(".katex").count() == 0  # code is shown as written, never typeset
    assert wrong.locator(".failed-test").inner_text().startswith("test 1 of 2: WRONG_OUTPUT")
    assert wrong.locator("pre.output.expected").inner_text().strip() == "cba"
    assert wrong.locator("pre.output.actual").inner_text().strip() == "abc"
    raising = page.locator('tr:has(td.id:has-text("stdio-index-error")) .failed-test')
    assert "test 2 of 2: RUNTIME_ERROR (IndexError" in raising.inner_text()
    no_code = page.locator('tr:has(td.id:has-text("no-code"))')
    assert no_code.locator("td.ans").inner_text() == "(no program)"

    page.click('#filters button[data-filter="WRONG_OUTPUT"]')
    wrong_outputs = report["failure_counts"]["WRONG_OUTPUT"]
    assert visible_outcomes(page) == ["WRONG_OUTPUT"] * wrong_outputs
    page.click('#chart .bar[data-filter="TIMEOUT"]')
    assert visible_outcomes(page) == ["TIMEOUT"]
    page.click('#filters button[data-filter="ALL"]')
    page.fill("#search", "ZeroDivisionError")
    page.press("#search", "Enter")
    assert visible_outcomes(page) == ["RUNTIME_ERROR"]
    page.screenshot(path=str(artifacts_dir / "eval-code-report.png"), full_page=True)
    assert all(url.startswith("file://") for url in requested), requested
    page.close()

    data = decode_data((code_report / "report.html").read_text("utf-8"))
    assert data["display"] == "code"
    assert data["outcomes"][:3] == ["PASS", "NO_CODE", "SYNTAX_ERROR"]
