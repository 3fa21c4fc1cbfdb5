"""Throughput of rewardkit's math grader against math-verify, same process, same data.

    python benchmarks/grader_throughput.py --data ../shared/data/math-cot-responses.jsonl

Prints responses/s for both graders, the ratio, and every response where they disagree.
Both are warmed up first (imports, rewardkit's worker pool) so the figures are steady-state.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def _load(path: Path) -> list[dict]:
    rows = []
    for line_number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise SystemExit(f"{path}:{line_number}: not JSON: {error}") from None
    return rows


def _time_rewardkit(
    rows: list[dict], repeat: int, *, sandbox: bool = True
) -> tuple[float, list[bool]]:
    from rewardkit.math import grade

    results: list[bool] = []
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        results = [grade(row["response"], row["gold"], sandbox=sandbox).correct for row in rows]
        best = min(best, time.perf_counter() - started)
    return best, results


def _time_math_verify(rows: list[dict], repeat: int) -> tuple[float, list[bool]]:
    from math_verify import parse, verify

    results: list[bool] = []
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        results = [
            bool(verify(parse("$" + row["gold"] + "$"), parse(row["response"]))) for row in rows
        ]
        best = min(best, time.perf_counter() - started)
    return best, results


def _clear_rewardkit_caches() -> None:
    from rewardkit.math import grading, normalization, representation

    grading._prepare_gold.cache_clear()
    grading._SYMBOLIC_CACHE.clear()
    grading._BAD_GOLDS.clear()
    normalization.normalize.cache_clear()
    representation.parse_value.cache_clear()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, required=True, help="JSONL with response and gold fields"
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="timed warm passes (the best is reported)"
    )
    args = parser.parse_args(argv)
    rows = _load(args.data)

    from math_verify import parse, verify

    from rewardkit.math import grade, warm_up

    warm_up()  # starts the symbolic workers; math-verify gets the same courtesy of a first call
    grade("\\boxed{x+1}", "1+x")
    verify(parse("$x+1$"), parse("$1+x$"))
    _clear_rewardkit_caches()

    # First pass: every response graded once, rewardkit's caches empty (what one RL step sees).
    rk_cold, rk_results = _time_rewardkit(rows, 1)
    mv_cold, mv_results = _time_math_verify(rows, 1)
    # Warm passes: the same data again (repeated golds and responses hit rewardkit's caches).
    rk_warm, _ = _time_rewardkit(rows, args.repeat)
    mv_warm, _ = _time_math_verify(rows, args.repeat)

    print(f"responses: {len(rows)} (single process)")
    print(f"{'':14}{'first pass':>16}{'warm (best of ' + str(args.repeat) + ')':>22}")
    print(
        f"{'rewardkit':14}{len(rows) / rk_cold:>11.1f} r/s{len(rows) / rk_warm:>17.1f} r/s   ({sum(rk_results)} correct)"
    )
    print(
        f"{'math-verify':14}{len(rows) / mv_cold:>11.1f} r/s{len(rows) / mv_warm:>17.1f} r/s   ({sum(mv_results)} correct)"
    )
    print(f"{'ratio':14}{mv_cold / rk_cold:>13.1f}x{mv_warm / rk_warm:>19.1f}x")
    disagreements = [(row, rk, mv) for row, rk, mv in zip(rows, rk_results, mv_results) if rk != mv]
    # The sandbox's cost: the same passes with symbolic work in-process (sandbox=False). Only the
    # few symbolic comparisons differ (a worker round-trip, each worker's own parser caches).
    grade("\\boxed{x+1}", "1+x", sandbox=False)
    _clear_rewardkit_caches()
    inproc_cold, _ = _time_rewardkit(rows, 1, sandbox=False)
    inproc_warm, _ = _time_rewardkit(rows, args.repeat, sandbox=False)
    print(
        f"sandbox cost: first pass {rk_cold / inproc_cold:.2f}x, warm {rk_warm / inproc_warm:.2f}x the in-process time "
        f"({rk_cold / len(rows) * 1e6:.1f} vs {inproc_cold / len(rows) * 1e6:.1f} us/response first pass)"
    )
    print(f"disagreements: {len(disagreements)}")
    for row, rk, mv in disagreements:
        verdict = grade(row["response"], row["gold"])
        print(
            f"  {row.get('id', '?')}: gold={row['gold']!r} answer={verdict.parsed_answer!r} "
            f"rewardkit={rk} ({verdict.reason}) math-verify={mv}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
