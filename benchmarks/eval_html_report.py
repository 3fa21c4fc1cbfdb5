"""The `--html` report of 16,000 cases: its size, the time and memory to write it, and the time
a real browser (Debian's Chromium, headless, through Playwright) takes to open it.

    python benchmarks/eval_html_report.py --data ../shared/data/math-cot-responses.jsonl

The corpus is replicated 20 times (16,000 cases), once as identical copies and once with each
copy's responses made distinct (`Attempt k.` first), and graded once. Then, each in a fresh
process, `--repeat` times (default 3; best kept: other load only slows a run down):

- writing: a `--resume` of the finished run with `--html` (nothing left to grade: reading the
  results and the responses back, rendering, compressing, writing), against the same resume
  without `--html`; wall time and peak RSS of the process.
- opening: from navigation start to the first page of rows on screen (the report's
  `rewardkit-report-ready` performance mark), in a new page of one browser; then to the same
  rows with their LaTeX typeset (`rewardkit-report-math`: KaTeX is decoded after the rows).

The peer, measured in the same run: the same cases as a plain HTML table, one `<tr>` per case
with the escaped response (what the report was before, and what a quick `to_html` gives), opened
until its `load` event.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from headless_chromium import CHROMIUM, CHROMIUM_ARGS

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_scaling import replicate

WRITE = r"""
import json, re, sys, time
from rewardkit.evaluation import run_math_eval
data, output, html = sys.argv[1], sys.argv[2], sys.argv[3] or None
started = time.perf_counter()
run_math_eval(data, output=output, resume=True, html=html, workers=2)
wall = time.perf_counter() - started
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over an exec from the forking parent
status = open("/proc/self/status").read()
peak = int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1))
print(json.dumps({"wall": wall, "peak_kb": peak}))
"""


def measure_write(data: Path, output: Path, target: Path | None) -> dict:
    completed = subprocess.run(
        [sys.executable, "-c", WRITE, str(data), str(output), str(target or "")],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def plain_table(results: Path, data: Path, target: Path) -> None:
    """The peer: every case a `<tr>` with its escaped response, no script."""
    responses = {}
    with open(data, encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            responses[row["id"]] = row["response"]
    rows = []
    with open(results, encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if "id" not in record:
                continue
            detail = record["detail"]
            cells = [
                record["id"],
                record["tag"] or "PASS",
                detail.get("reason") or "",
                detail.get("parsed_answer") or "",
                detail.get("expected") or "",
            ]
            rows.append(
                "<tr>"
                + "".join(f"<td>{html.escape(str(cell))}</td>" for cell in cells)
                + f"<td><pre>{html.escape(responses.get(record['id'], ''))}</pre></td></tr>"
            )
    target.write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>cases</title></head><body>"
        "<table><tbody>" + "\n".join(rows) + "</tbody></table></body></html>",
        encoding="utf-8",
    )


def open_times(
    browser, path: Path, *, ready: bool, repeat: int, math: list[float] | None = None
) -> list[float]:
    """Milliseconds from navigation start to the first page of rows (`ready`) or to `load`;
    with `ready`, `math` gets the times to the same rows with their LaTeX typeset by KaTeX."""
    times = []
    for _ in range(repeat):
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(path.as_uri(), wait_until="load", timeout=120_000)
        if ready:
            page.wait_for_selector("body[data-ready='1']", timeout=120_000)
            value = page.evaluate(
                "performance.getEntriesByName('rewardkit-report-ready')[0].startTime"
            )
            page.wait_for_selector("body[data-math='1']", timeout=120_000)
            if math is not None:
                math.append(
                    page.evaluate(
                        "performance.getEntriesByName('rewardkit-report-math')[0].startTime"
                    )
                )
        else:
            value = page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd")
        times.append(float(value))
        page.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, required=True, help="math-cot-responses.jsonl")
    parser.add_argument("--copies", type=int, default=20)
    parser.add_argument("--gold-field", default="gold")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from rewardkit.evaluation import run_math_eval

    print(f"load before: {os.getloadavg()[0]:.2f} (1-minute average, {os.cpu_count()} cores)")
    with tempfile.TemporaryDirectory() as scratch, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for distinct in (False, True):
            where = Path(scratch) / ("distinct" if distinct else "identical")
            where.mkdir()
            data = where / "cases.jsonl"
            n = replicate(args.data, args.copies, args.gold_field, data, distinct=distinct)
            results = where / "results.jsonl"
            run_math_eval(data, output=results, workers=2)
            report, peer = where / "report.html", where / "plain.html"
            writes, bases = [], []
            for _ in range(max(1, args.repeat)):  # interleaved
                bases.append(measure_write(data, results, None))
                writes.append(measure_write(data, results, report))
            plain_table(results, data, peer)
            typeset: list[float] = []
            ours = open_times(browser, report, ready=True, repeat=args.repeat, math=typeset)
            theirs = open_times(browser, peer, ready=False, repeat=args.repeat)
            best_write = min(w["wall"] for w in writes) - min(b["wall"] for b in bases)
            peak, base_peak = (min(r["peak_kb"] for r in runs) / 1024 for runs in (writes, bases))
            kind = "each copy's responses distinct" if distinct else "identical copies"
            print(f"\n{n} cases ({args.copies} x {args.data.name}, {kind})")
            print(f"  report: {report.stat().st_size / 2**20:6.2f} MB (limit 8 MB)")
            print(
                f"  writing it: +{best_write:.2f} s over the same finished-run resume without "
                f"--html ({min(b['wall'] for b in bases):.2f} s); peak RSS {peak:.0f} MB "
                f"(without --html: {base_peak:.0f} MB)"
            )
            print(
                f"  opening in Chromium, navigation to first page of rows: best {min(ours):.0f} ms "
                f"(all: {', '.join(f'{t:.0f}' for t in ours)}; target 2000 ms)"
            )
            print(
                f"  then their LaTeX typeset (KaTeX decoded, run, 100 rows re-rendered): best "
                f"{min(typeset):.0f} ms (all: {', '.join(f'{t:.0f}' for t in typeset)})"
            )
            print(
                f"  peer, a plain table of every case: {peer.stat().st_size / 2**20:.1f} MB, "
                f"load event best {min(theirs):.0f} ms (all: {', '.join(f'{t:.0f}' for t in theirs)})"
                f"; the report opens {min(theirs) / min(ours):.1f}x as fast"
            )
        browser.close()
    print(f"\nload after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
