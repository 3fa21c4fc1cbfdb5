"""Determinism of rewardkit's math grader: the same verdicts on a quiet and on a busy machine, from
the first call of fresh processes; and what a cold start costs.

    python benchmarks/grader_determinism.py \\
        --golds ../shared/data/gold-answers.jsonl --responses ../shared/data/math-cot-responses.jsonl

Grades every gold boxed in a response against itself, every response against its gold, and the
first ``--symbolic`` golds against ``<gold>+0`` (which only sympy decides), in
``--runs`` fresh processes on the machine as it is ("quiet") and ``--runs`` more while
``--busy`` CPU-bound processes run beside them (default 2 x the cores). Prints the number of
verdicts (correct, reason) that differ between any two runs (goal 0), harness errors, how many
comparisons went to the symbolic workers, and the load. Then the cold start: a fresh process
whose first call is a symbolic comparison (``grade(r"\\boxed{(x+1)^2}", "x^2+2x+1")``), whole
process wall time, as a ratio to ``python -c "import sympy"`` measured in the same run (median of
``--cold-runs``), plus the first call's own latency.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

_COLD_CALL = """
import time
started = time.perf_counter()
from rewardkit.math import grade
imported = time.perf_counter()
verdict = grade(r"The answer is $\\boxed{(x+1)^2}$.", "x^2+2x+1")
done = time.perf_counter()
print(verdict.correct, verdict.reason, f"{imported - started:.3f}", f"{done - imported:.3f}")
"""


def _load(path: Path, fields: tuple[str, ...]) -> list[dict[str, str]]:
    rows = []
    for line_number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                row = json.loads(line)
                rows.append({field: row[field] for field in fields})
            except (json.JSONDecodeError, KeyError) as error:
                raise SystemExit(f"{path}:{line_number}: bad line: {error}") from None
    return rows


def grade_all(golds_path: Path, responses_path: Path, symbolic: int) -> None:
    """The child: grade everything as a fresh process does, print one JSON document."""
    started = time.perf_counter()
    from rewardkit.math import grade, grading

    sandbox = grading.default_sandbox()
    symbolic_calls = 0
    run = sandbox.run

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        nonlocal symbolic_calls
        symbolic_calls += 1
        return run(*args, **kwargs)

    sandbox.run = counted  # type: ignore[method-assign]
    verdicts = []
    for row in _load(golds_path, ("gold",)):
        verdict = grade(f"So the final answer is $\\boxed{{{row['gold']}}}$.", row["gold"])
        verdicts.append([verdict.correct, verdict.reason])
    for row in _load(responses_path, ("response", "gold")):
        verdict = grade(row["response"], row["gold"])
        verdicts.append([verdict.correct, verdict.reason])
    for row in _load(golds_path, ("gold",))[:symbolic]:  # "+0" sends the comparison to sympy
        verdict = grade(f"So the final answer is $\\boxed{{{row['gold']}+0}}$.", row["gold"])
        verdicts.append([verdict.correct, verdict.reason])
    print(json.dumps({"verdicts": verdicts, "symbolic": symbolic_calls, "seconds": time.perf_counter() - started}))


def _busy_loop_count() -> int:
    try:
        return 2 * len(os.sched_getaffinity(0))
    except AttributeError:
        return 2 * (os.cpu_count() or 1)


def _load_average() -> str:
    try:
        return "load " + " ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "load unknown"


def _run_child(args: argparse.Namespace) -> dict:  # type: ignore[type-arg]
    command = [sys.executable, __file__, "--child", "--golds", str(args.golds), "--responses", str(args.responses)]
    command += ["--symbolic", str(args.symbolic)]
    completed = subprocess.run(command, capture_output=True, text=True, check=False, timeout=3600)
    if completed.returncode != 0:
        raise SystemExit(f"a grading process failed:\n{completed.stderr[-2000:]}")
    return json.loads(completed.stdout)  # type: ignore[no-any-return]


class _BusyLoops:
    def __init__(self, count: int) -> None:
        self.count = count
        self.processes: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> _BusyLoops:
        self.processes = [
            subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL) for _ in range(self.count)
        ]
        time.sleep(1.0)  # let the load build up
        return self

    def __exit__(self, *exc: object) -> None:
        for process in self.processes:
            process.kill()
        for process in self.processes:
            process.wait()


def _process_seconds(code: str) -> float:
    started = time.perf_counter()
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=600)
    elapsed = time.perf_counter() - started
    if completed.returncode != 0:
        raise SystemExit(f"cold-start process failed:\n{completed.stderr[-2000:]}")
    return elapsed


def _cold_start(runs: int, label: str) -> None:
    sympy_times, grade_times, calls, verdicts = [], [], [], Counter()
    for _ in range(runs):  # interleaved, so that both see the same machine
        sympy_times.append(_process_seconds("import sympy"))
        started = time.perf_counter()
        completed = subprocess.run([sys.executable, "-c", _COLD_CALL], capture_output=True, text=True, check=False, timeout=600)
        grade_times.append(time.perf_counter() - started)
        correct, reason, _, first_call = completed.stdout.split()
        verdicts[f"{correct} {reason}"] += 1
        calls.append(float(first_call))
    sympy_median, grade_median = statistics.median(sympy_times), statistics.median(grade_times)
    print(
        f"cold start ({label}): first symbolic verdict in a fresh process {grade_median:.2f} s (process wall, median of {runs}; "
        f"the call itself {statistics.median(calls):.2f} s) vs `python -c \"import sympy\"` {sympy_median:.2f} s: "
        f"ratio {grade_median / sympy_median:.2f}x; verdicts {dict(verdicts)}  [{_load_average()}]"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--golds", type=Path, required=True, help="JSONL with a gold field per line")
    parser.add_argument("--responses", type=Path, required=True, help="JSONL with response and gold fields")
    parser.add_argument("--runs", type=int, default=3, help="fresh grading processes per condition")
    parser.add_argument("--busy", type=int, default=_busy_loop_count(), help="busy loops beside the busy runs")
    parser.add_argument("--cold-runs", type=int, default=5, help="fresh processes timed for the cold start")
    parser.add_argument(
        "--symbolic", type=int, default=1000, help="also grade the first N golds against '<gold>+0' (symbolic work)"
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        grade_all(args.golds, args.responses, args.symbolic)
        return 0
    for path in (args.golds, args.responses):
        if not path.is_file():
            raise SystemExit(f"{path}: no such file (pass the shared data's paths explicitly)")
    args.golds, args.responses = args.golds.resolve(), args.responses.resolve()

    runs: list[tuple[str, dict]] = []  # type: ignore[type-arg]
    print(f"machine: {os.cpu_count()} cores  [{_load_average()}]")
    for index in range(args.runs):
        result = _run_child(args)
        runs.append((f"quiet-{index + 1}", result))
        print(f"  quiet run {index + 1}: {result['seconds']:.1f} s, {result['symbolic']} symbolic comparisons  [{_load_average()}]")
    with _BusyLoops(args.busy):
        for index in range(args.runs):
            result = _run_child(args)
            runs.append((f"busy-{index + 1}", result))
            print(
                f"  busy run {index + 1} ({args.busy} busy loops): {result['seconds']:.1f} s, "
                f"{result['symbolic']} symbolic comparisons  [{_load_average()}]"
            )
    reference = runs[0][1]["verdicts"]
    differing = [
        index for index in range(len(reference)) if any(result["verdicts"][index] != reference[index] for _, result in runs)
    ]
    harness = Counter(
        name for name, result in runs for correct, reason in result["verdicts"] if reason in ("overloaded", "crash")
    )
    reasons = Counter(reason for _, reason in reference)
    print(f"verdicts per run: {len(reference)} ({sum(correct for correct, _ in reference)} correct)")
    print(f"verdicts that differ between any two of the {len(runs)} runs: {len(differing)} (goal 0)")
    for index in differing[:20]:
        print(f"  item {index}: " + ", ".join(f"{name}={result['verdicts'][index]}" for name, result in runs))
    print(f"overloaded or crash verdicts: {dict(harness) or 0}")
    print(f"reasons (quiet run 1): {dict(reasons.most_common())}")
    _cold_start(args.cold_runs, "as is")
    with _BusyLoops(args.busy):
        _cold_start(args.cold_runs, f"{args.busy} busy loops")
    return 0


if __name__ == "__main__":
    sys.exit(main())
