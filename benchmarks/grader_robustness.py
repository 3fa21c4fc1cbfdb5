"""Robustness of rewardkit's math grader on real golds: each gold, boxed in a response, against itself.

    python benchmarks/grader_robustness.py --data ../shared/data/gold-answers.jsonl \
        [--variants] [--perturbed] [--hostile] [--cold] [--huge] [--memory [N]]

Prints the acceptance rate, p50/p99/max latency, the number of calls over the budget, and every
rejected gold with the verdict's reason (the best source of real normalization cases).
``--perturbed`` grades each gold with one digit changed against the original (every acceptance
is a potential false positive, listed); ``--hostile`` times adversarial inputs (power towers,
huge factorials, deep nesting, a megabyte of text, patterns that make naive regexes quadratic)
from the main thread, another thread and inside asyncio, against the budget. ``--huge`` times
5 MB inputs (a response, a boxed answer, a text gold); ``--memory`` prints the process's RSS
while N (default 100,000) unique long answers (19 KB, over the caches' key limit), N medium ones
(2.5 KB) and N short ones stream through the grader: the caches are bounded by bytes, so RSS
stays flat (the cached shapes grow to the bounds, then stop).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import statistics
import sys
import threading
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="JSONL with a gold field per line")
    parser.add_argument("--policy", default="lenient", choices=("lenient", "strict"))
    parser.add_argument("--budget", type=float, default=1.0, help="the per-call timeout, seconds")
    parser.add_argument("--variants", action="store_true", help="also grade re-rendered golds (dfrac, no $)")
    parser.add_argument("--perturbed", action="store_true", help="also grade golds with one digit changed")
    parser.add_argument("--hostile", action="store_true", help="also time adversarial inputs against the budget")
    parser.add_argument("--cold", action="store_true", help="also time first symbolic calls in fresh processes (no warm_up)")
    parser.add_argument("--huge", action="store_true", help="also time 5 MB inputs")
    parser.add_argument(
        "--memory", type=int, nargs="?", const=100_000, default=0, help="also print RSS over N unique long and short answers"
    )
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
    if args.perturbed:
        _report_perturbed(golds, args)
    if args.hostile:
        _report_hostile(args)
    if args.cold:
        _report_cold_start(args)
    if args.huge:
        _report_huge(args)
    if args.memory:
        _report_memory(args.memory)
    return 0


def _report_huge(args: argparse.Namespace) -> None:
    """5 MB inputs, best of 3: a response is read from its end (``extract="auto"`` reads its last
    ``MAX_RESPONSE_LENGTH`` characters), a 5 MB box is unclosed (over 20,000 characters), a gold
    over ``MAX_GOLD_LENGTH`` is a bad gold."""
    from rewardkit.math import grade

    cases = {
        '"1,"*2_500_000, extract="auto"': ("1," * 2_500_000, "1", "auto"),
        "5 MB, then \\boxed{1}": ("x" * 5_000_000 + "\\boxed{1}", "1", "boxed"),
        "5 MB, then \\boxed{1}, auto": ("x" * 5_000_000 + "\\boxed{1}", "1", "auto"),
        "5 MB box": ("\\boxed{" + "1+" * 2_500_000 + "1}", "1", "boxed"),
        "5 MB text gold": ("\\boxed{1}", "a b" * 1_700_000, "boxed"),
    }
    for name, (response, gold, extract) in cases.items():
        best, verdict = float("inf"), None
        for _ in range(3):
            started = time.perf_counter()
            verdict = grade(response, gold, extract=extract, timeout=args.budget)
            best = min(best, time.perf_counter() - started)
        assert verdict is not None
        print(f"huge input   : {name:<32} {1000 * best:8.3f} ms  {verdict.reason} ({verdict.detail.get('error', '')})")


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _report_memory(count: int) -> None:
    """RSS while ``count`` unique answers of each shape are graded (in-process symbolic work off:
    the caches under test are the grader's own)."""
    from rewardkit.math import grade

    long_body = "+".join(f"x_{{{k}}}" for k in range(2_200))  # 18.7 KB; the index makes each answer unique
    medium_body = "+".join(f"x_{{{k}}}" for k in range(330))  # 2.5 KB: under the caches' key limit
    shapes = {
        "long (19 KB)": lambda i: f"\\boxed{{{i}+{long_body}}}",
        "medium (2.5 KB, cached)": lambda i: f"\\boxed{{{i}+{medium_body}}}",
        "short (~60 chars)": lambda i: f"\\boxed{{\\frac{{{i}}}{{7}}+{i % 13}, {i * 3}, \\{{{i}, {i + 1}\\}}}}",
    }
    for name, answer in shapes.items():
        rows = []
        started, rss_before = time.perf_counter(), _rss()
        for index in range(count):
            grade(answer(index), "5", sandbox=False)
            if (index + 1) in (count // 10, count // 2, count):
                rows.append(f"{index + 1:,}: {_rss() / 2**20:.0f} MB")
        print(
            f"memory       : {count:,} unique {name} answers, RSS {rss_before / 2**20:.0f} MB before; "
            + ", ".join(rows) + f"  ({time.perf_counter() - started:.0f} s)",
            flush=True,
        )


_COLD_START_SCRIPT = """
import sys, time
started = time.monotonic()
from rewardkit.math import compare_answers, grade
if sys.argv[1] == "after-fast-call":
    grade("\\\\boxed{42}", "42")  # the grader's first use starts the workers in the background
    time.sleep(float(sys.argv[2]))
call = time.monotonic()
verdict = compare_answers("(x+1)^2", "x^2+2x+1", timeout=float(sys.argv[3]))
print(verdict.correct, verdict.reason, f"{time.monotonic() - call:.3f}")
"""  # the first call waits for the workers (uncharged): its verdict is right, its latency is the start


def _report_cold_start(args: argparse.Namespace, runs: int = 3) -> None:
    """A symbolic comparison as the first call of a fresh process, default settings, no warm_up():
    at once, and 0.5 s after a fast-path call (the background start's head start)."""
    import subprocess

    for scenario, head_start in (("first-call", 0.0), ("after-fast-call", 0.5)):
        outcomes = []
        for _ in range(runs):
            completed = subprocess.run(
                [sys.executable, "-c", _COLD_START_SCRIPT, scenario, str(head_start), str(args.budget)],
                capture_output=True, text=True, timeout=120, check=False,
            )
            outcomes.append(completed.stdout.strip() or f"failed: {completed.stderr.strip()[-200:]}")
        print(f"cold start   : {scenario:<16} " + " | ".join(outcomes) + "  (correct, reason, seconds)")


def _report_perturbed(golds: list[str], args: argparse.Namespace) -> None:
    """Each gold with one digit changed (fixed seed), graded against the original: should be rejected."""
    from rewardkit.math import compare_answers

    rng = random.Random(7)
    accepted: list[tuple[str, str, str]] = []
    tried = 0
    for gold in golds:
        digits = [match.start() for match in re.finditer(r"\d", gold)]
        if not digits:
            continue
        index = rng.choice(digits)
        perturbed = gold[:index] + str((int(gold[index]) + 1) % 10) + gold[index + 1 :]
        tried += 1
        verdict = compare_answers(perturbed, gold, policy=args.policy, timeout=args.budget)
        if verdict.correct:
            accepted.append((gold, perturbed, verdict.reason))
    print(f"perturbed    : {tried - len(accepted)}/{tried} rejected ({len(accepted)} accepted, each listed)")
    for gold, perturbed, reason in accepted:
        print(f"  {reason:>9}: {gold!r} <- {perturbed!r}")


def hostile_inputs() -> dict[str, str]:
    """Responses built to exhaust a grader: evaluation bombs, deep nesting, huge or quadratic text."""
    return {
        "power tower": r"\boxed{9^{9^{9^9}}}",
        "huge factorial": r"\boxed{100000!}",
        "huge power": r"\boxed{10^{10^{10}}}",
        "exp tower": r"\boxed{e^{e^{e^{e^{10}}}}}",
        "5000 nested braces": r"\boxed{" + "{" * 5000 + "1" + "}" * 5000 + "}",
        "5000 nested parens": r"\boxed{" + "(" * 5000 + "1" + ")" * 5000 + "}",
        "3000 nested tuples": r"\boxed{" + "(1," * 3000 + "1" + ")" * 3000 + "}",
        "megabyte of text": "x" * 1_000_000 + r" \boxed{5}",
        "megabyte box": r"\boxed{" + "1+" * 500_000 + "1}",
        "control characters": "\x00\x01\x1b[31m\x07" * 1000 + r"\boxed{5\x00}",
        "unclosed display math": "\\[" * 5000,
        "unclosed inline parens": "\\(" * 5000 + "x",
        "tildes": r"\boxed{" + "~" * 9000 + "x}",
        "semicolons": r"\boxed{" + " ;" * 4500 + "1}",
        "text pieces": r"\boxed{" + r"\text{a}" * 1200 + "}",
        "binomial of expressions": r"\boxed{\binom{10^9}{5 \cdot 10^8}}",
        "Gamma of a power": r"\boxed{\Gamma(10^{10})}",
        "factorial of a cancellation": r"\boxed{(x - x + 10^{10})!}",
        "5 MB before the last box": "x" * 5_000_000 + r" \boxed{5}",
    }


def _report_hostile(args: argparse.Namespace) -> None:
    from rewardkit.math import grade

    golds = ("5", "x+1", "(1,2)")

    def run(where: str, worst: list[tuple[float, str, str]]) -> None:
        for name, response in hostile_inputs().items():
            for gold in golds:
                started = time.perf_counter()
                grade(response, gold, policy=args.policy, extract="auto", timeout=args.budget)
                worst.append((time.perf_counter() - started, f"{name} ({where})", gold))

    worst: list[tuple[float, str, str]] = []
    run("main thread", worst)
    thread = threading.Thread(target=run, args=("thread", worst))
    thread.start()
    thread.join()

    async def in_event_loop() -> None:
        run("asyncio", worst)

    asyncio.run(in_event_loop())
    worst.sort(reverse=True)
    over = sum(latency > args.budget for latency, _, _ in worst)
    print(f"hostile      : {len(worst)} calls, max {1000 * worst[0][0]:.1f} ms, over budget: {over}")
    for latency, name, gold in worst[:5]:
        print(f"  {1000 * latency:8.1f} ms  {name} vs {gold!r}")


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
