"""Robustness of rewardkit's math grader on real golds: each gold, boxed in a response, against itself.

    python benchmarks/grader_robustness.py --data ../shared/data/gold-answers.jsonl

Prints the acceptance rate, p50/p99/max latency, the number of calls over the budget, and every
rejected gold with the verdict's reason (the best source of real normalization cases).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="JSONL with a gold field per line")
    parser.add_argument("--policy", default="lenient", choices=("lenient", "strict"))
    parser.add_argument("--budget", type=float, default=1.0, help="the per-call timeout, seconds")
    parser.add_argument("--variants", action="store_true", help="also grade re-rendered golds (dfrac, no $)")
    args = parser.parse_args(argv)

    from rewardkit.math import grade, warm_up

    warm_up()
    golds = []
    for line_number, line in enumerate(args.data.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                golds.append(json.loads(line)["gold"])
            except (json.JSONDecodeError, KeyError) as error:
                raise SystemExit(f"{args.data}:{line_number}: bad line: {error}") from None
    latencies: list[float] = []
    cpu_times: list[float] = []
    rejected = []
    for gold in golds:
        response = f"So the final answer is $\\boxed{{{gold}}}$."
        started, cpu_started = time.perf_counter(), time.thread_time()
        verdict = grade(response, gold, policy=args.policy, timeout=args.budget)
        latencies.append(time.perf_counter() - started)
        cpu_times.append(time.thread_time() - cpu_started)
        if not verdict.correct:
            rejected.append((gold, verdict))
    latencies.sort()
    cpu_times.sort()
    accepted = len(golds) - len(rejected)
    p50 = statistics.median(latencies)
    p99 = latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))]
    over = sum(latency > args.budget for latency in latencies)
    print(f"golds        : {len(golds)}")
    print(f"accepted     : {accepted} ({100 * accepted / len(golds):.2f}%)")
    print(f"latency p50  : {1000 * p50:.3f} ms")
    print(f"latency p99  : {1000 * p99:.3f} ms")
    print(f"latency max  : {1000 * latencies[-1]:.3f} ms")
    cpu_p99 = cpu_times[min(len(cpu_times) - 1, int(0.99 * len(cpu_times)))]
    print(f"cpu p50/p99  : {1000 * statistics.median(cpu_times):.3f} / {1000 * cpu_p99:.3f} ms (this thread; wall time includes load from other processes)")
    print(f"over budget  : {over} (budget {args.budget:.2f} s)")
    print(f"rejected     : {len(rejected)}")
    for gold, verdict in rejected:
        print(f"  {verdict.reason:>9} {verdict.tag}: {gold!r} -> answer {verdict.parsed_answer!r}")
    if args.variants:
        _report_variants(grade, golds, args)
    return 0


def _variants(gold: str) -> dict[str, str]:
    """Renderings a model might give of the same gold: other fraction commands, no math delimiters."""
    return {
        "dfrac": gold.replace("\\frac", "\\dfrac"),
        "no-dollars": gold.replace("$", ""),
        "left-right": gold.replace("(", "\\left(").replace(")", "\\right)") if "\\left" not in gold else gold,
    }


def _report_variants(grade, golds: list[str], args: argparse.Namespace) -> None:  # type: ignore[no-untyped-def]
    rejected: dict[str, list[tuple[str, str, str]]] = {}
    for gold in golds:
        for name, variant in _variants(gold).items():
            verdict = grade(f"\\boxed{{{variant}}}", gold, policy=args.policy, timeout=args.budget)
            if not verdict.correct:
                rejected.setdefault(name, []).append((gold, variant, verdict.reason))
    for name in _variants(""):
        failures = rejected.get(name, [])
        print(f"variant {name:11}: {len(golds) - len(failures)}/{len(golds)} accepted")
        for gold, variant, reason in failures:
            print(f"  {reason:>9}: {gold!r} -> {variant!r}")


if __name__ == "__main__":
    sys.exit(main())
