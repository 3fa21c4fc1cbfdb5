"""Scaling of `rewardkit eval math`: cases/s with 1 and 2 worker processes, and the runner's
overhead over what a user would write instead, all measured in this run.

    python benchmarks/eval_scaling.py --data ../shared/data/math-cot-responses.jsonl

The baselines are the loop a user would write: read the JSONL file, `json.loads` each line,
call `grade(response, gold, sandbox=False)` in one process (against 1 and 2 worker processes),
or `grade(response, gold)` as it comes, with its sandbox (against the runner in the same
process, `--workers 0`; both start the sandbox before timing). The runner does that plus
validating every line, writing a results file and keeping a resumable, streamed run.

Each measurement runs in a fresh Python process (cold grader caches, no state inherited from
an earlier measurement), `--repeat` times (default 3); the best wall time of each configuration
is kept, since other load on a shared machine only ever slows a run down. Besides wall time it
prints CPU time per case in the main process and in the worker processes. Targets (issue 4):
speedup >= 1.7x with 2 workers on 2 cores; runner overhead < 10%.

Two rows bound what any process-based runner can reach here: the loop alone in one forked
process (its extra time over the loop is a floor for the overhead) and the loop split over two
forked processes (their speedup is a ceiling for 2 workers: each process pays its own cold
caches and copy-on-write faults, whatever the runner does).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def replicate(data: Path, copies: int, gold_field: str, target: Path, *, distinct: bool) -> int:
    """Write the corpus `copies` times over, with distinct ids, as the runner's input.

    With `distinct`, each copy's response starts with its own first line ("Attempt k."), as the
    responses of a real run are all different (the grader caches per answer and gold, so this
    changes little). Answers and golds are unchanged."""
    rows = [
        json.loads(line) for line in data.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    with open(target, "w", encoding="utf-8") as handle:
        for k in range(copies):
            for i, row in enumerate(rows):
                response = f"Attempt {k + 1}.\n{row['response']}" if distinct else row["response"]
                record = {
                    "id": f"{row.get('id', i)}#{k}",
                    "response": response,
                    "gold": str(row[gold_field]),
                }
                handle.write(json.dumps(record) + "\n")
    return copies * len(rows)


def measure(kind: str, path: Path, timeout: float) -> dict:
    """One measurement, in this (fresh) process: a loop (`loop`, `loop-sandbox`, `loop-forked`,
    `loop-halves`) or the runner (`workers=N`)."""
    from rewardkit.evaluation.worker.grading import warm_up

    warm_up()  # imports and the LaTeX parser's first load are not part of either side
    if kind in ("loop-sandbox", "workers=0"):
        from rewardkit.math import warm_up as start_sandbox

        start_sandbox()  # grade's symbolic workers: started (once per process) on both sides
    self0, kids0 = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    started = time.perf_counter()
    counts: dict = {}
    if kind == "loop-halves":
        _loop_in_processes(path, timeout, 2)
    elif kind == "loop-forked":
        _loop_in_processes(path, timeout, 1)
    elif kind.startswith("loop"):
        from rewardkit.math import grade

        sandbox = kind == "loop-sandbox"
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                row = json.loads(line)
                grade(row["response"], row["gold"], timeout=timeout, sandbox=sandbox)
    else:
        from rewardkit.evaluation import run_math_eval

        workers = int(kind.split("=")[1])
        output = path.with_suffix(f".{workers}.{os.getpid()}.out")
        run = run_math_eval(path, workers=workers, timeout=timeout, output=output, overwrite=True)
        counts = run.summary.failure_counts
        for leftover in output.parent.glob(f"*{output.name}*"):  # (with its metadata)
            leftover.unlink()
    wall = time.perf_counter() - started
    self1, kids1 = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return {
        "wall": wall,
        "main_cpu": (self1.ru_utime + self1.ru_stime) - (self0.ru_utime + self0.ru_stime),
        "worker_cpu": (kids1.ru_utime + kids1.ru_stime) - (kids0.ru_utime + kids0.ru_stime),
        "counts": counts,
    }


def _loop_in_processes(path: Path, timeout: float, processes: int) -> None:
    """The loop split between forked processes that share nothing (each reads the file and
    grades its share of the lines), no runner at all: with 1 process, the floor of any runner
    that grades in a worker process (fork's copy-on-write faults, a cold cache); with 2, the
    ceiling of 2 workers."""
    import gc

    from rewardkit.math import grade

    gc.freeze()  # as the runner does before forking its workers (fewer copy-on-write faults)
    children = []
    for share in range(processes):
        pid = os.fork()
        if pid == 0:
            with open(path, encoding="utf-8") as handle:
                for number, line in enumerate(handle):
                    if number % processes == share:
                        row = json.loads(line)
                        grade(row["response"], row["gold"], timeout=timeout, sandbox=False)
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.waitpid(pid, 0)
    gc.unfreeze()


def first_line(path: Path, workers: int, timeout: float) -> dict:
    """The CLI as a user runs it (a fresh process: imports, the grader loaded as needed) with
    `--output`: seconds from its start to the first result line in the file, and to its exit."""
    out = path.with_suffix(".cli.out")
    out.unlink(missing_ok=True)  # (a line left by the previous run would count as the first)
    command = [sys.executable, "-m", "rewardkit", "eval", "math", str(path), "--output", str(out)]
    command += ["--workers", str(workers), "--timeout", str(timeout)]
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    first = None
    while process.poll() is None:
        if first is None and out.exists():
            with open(out, "rb") as handle:
                head = handle.read(1 << 16)
            if b'"passed"' in head:  # a result line (the header has none)
                first = time.perf_counter() - started
        time.sleep(0.002)
    total = time.perf_counter() - started
    if process.returncode != 0:
        raise RuntimeError(process.stderr.read().decode() if process.stderr else "CLI failed")
    return {"first": first if first is not None else total, "total": total}


def run_fresh(kind: str, path: Path, timeout: float, tree: Path | None = None) -> dict:
    """One measurement in a fresh process; with `tree`, of the rewardkit in that folder (a
    checkout of another commit) instead of the one installed."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tree), *filter(None, [env.get("PYTHONPATH")])])
    out = subprocess.run(
        [
            sys.executable,
            __file__,
            "--measure",
            kind,
            "--cases",
            str(path),
            "--timeout",
            str(timeout),
        ],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


RUNNER_KINDS = ("workers=0", "workers=1", "workers=2")


def compare_trees(path: Path, timeout: float, baseline: Path, repeat: int, n: int) -> None:
    """The runner's rows measured with this rewardkit and with the one in `baseline` (a
    checkout of the commit before a change), interleaved run by run, so that the machine's
    load falls on both alike: the before/after of a change, in one run."""
    walls: dict[tuple[str, str], list[float]] = {}
    cpus: dict[tuple[str, str], list[float]] = {}
    for _ in range(repeat):
        for kind in RUNNER_KINDS:
            for side, tree in (("before", baseline), ("after", None)):
                run = run_fresh(kind, path, timeout, tree)
                walls.setdefault((kind, side), []).append(run["wall"])
                cpus.setdefault((kind, side), []).append(run["main_cpu"] + run["worker_cpu"])
    print(f"\nbefore ({baseline}) and after (this tree), interleaved, {repeat} runs each:")
    print(
        f"  {'':<14}{'before best':>12}{'after best':>12}{'ratio':>8}{'before med':>12}{'after med':>12}{'ratio':>8}"
    )
    for kind in RUNNER_KINDS:
        before, after = sorted(walls[kind, "before"]), sorted(walls[kind, "after"])
        med_b, med_a = before[len(before) // 2], after[len(after) // 2]
        print(
            f"  {kind:<14}{before[0]:12.2f}{after[0]:12.2f}{after[0] / before[0]:8.2f}"
            f"{med_b:12.2f}{med_a:12.2f}{med_a / med_b:8.2f}"
        )
    print(f"  ({n} cases; wall seconds; ratio after / before: below 1 is faster)")
    print(
        "  CPU of the run's processes (main + workers), us per case, median (less sensitive to load):"
    )
    for kind in RUNNER_KINDS:
        before, after = (sorted(cpus[kind, side]) for side in ("before", "after"))
        med_b, med_a = before[len(before) // 2] / n * 1e6, after[len(after) // 2] / n * 1e6
        print(f"  {kind:<14}{med_b:12.1f}{med_a:12.1f}{med_a / med_b:8.2f}")
    for kind in RUNNER_KINDS:
        for side in ("before", "after"):
            walls_text = ", ".join(f"{wall:.2f}" for wall in walls[kind, side])
            print(f"  {kind:<10}{side:<8}all walls, in order: {walls_text}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--data", type=Path, help="JSONL with response and gold (e.g. math-cot-responses.jsonl)"
    )
    parser.add_argument(
        "--copies", type=int, default=20, help="replicate the corpus this many times (default 20)"
    )
    parser.add_argument("--gold-field", default="gold")
    parser.add_argument(
        "--distinct-copies",
        action="store_true",
        help="give each copy's responses their own first line, as in a real run",
    )
    parser.add_argument("--timeout", type=float, default=1.0)
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs per configuration; the best is kept (default 3)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="only the rows of the targets (no bounds)"
    )
    parser.add_argument(
        "--first-line-only",
        action="store_true",
        help="only the streaming figure: when the CLI writes its first result line",
    )
    parser.add_argument(
        "--baseline-tree",
        type=Path,
        help="also measure the runner rows with the rewardkit in this folder (e.g. `git archive "
        "main | tar -x -C /tmp/before`), interleaved: a change's before and after in one run",
    )
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--cases", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.cases, args.timeout)))
        return
    if args.data is None:
        parser.error("--data is required")

    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "cases.jsonl"
        n = replicate(args.data, args.copies, args.gold_field, path, distinct=args.distinct_copies)
        copies = (
            "each copy's responses made distinct" if args.distinct_copies else "identical copies"
        )
        print(
            f"{n} cases ({args.copies} x {args.data.name}, {copies}), timeout {args.timeout:g} s, "
            f"each run a fresh process, best of {args.repeat} runs per row\n"
        )
        kinds = [
            ("loop", "loop: read, json.loads, grade(sandbox=False)"),
            ("workers=1", "run_math_eval --workers 1"),
            ("workers=2", "run_math_eval --workers 2"),
            ("loop-sandbox", "loop: read, json.loads, grade() (sandboxed)"),
            ("workers=0", "run_math_eval --workers 0 (in-process)"),
        ]
        if not args.quick:
            kinds += [
                ("loop-forked", "the loop in 1 forked process"),
                ("loop-halves", "the loop split over 2 forked processes"),
            ]
        print(f"load (1-minute average) before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
        streams = [first_line(path, 2, args.timeout) for _ in range(max(1, args.repeat))]
        print(
            "the CLI with --output and 2 workers, from its start: first result line / exit, s:\n  "
            + ", ".join(
                f"{r['first']:.2f} / {r['total']:.2f} ({r['first'] / r['total']:.0%})"
                for r in streams
            )
            + f"\n  best share {min(r['first'] / r['total'] for r in streams):.0%}, "
            f"median {sorted(r['first'] / r['total'] for r in streams)[len(streams) // 2]:.0%} "
            "(target: within 20% of the run)\n"
        )
        if args.first_line_only:
            return
        if args.baseline_tree is not None:
            compare_trees(path, args.timeout, args.baseline_tree, max(1, args.repeat), n)
            print(f"load (1-minute average) after: {os.getloadavg()[0]:.2f}")
            return
        results: dict[str, dict] = {}
        walls: dict[str, list[float]] = {kind: [] for kind, _ in kinds}
        for _ in range(max(1, args.repeat)):  # interleaved, so a burst of load hits all alike
            for kind, _label in kinds:
                run = run_fresh(kind, path, args.timeout)
                walls[kind].append(run["wall"])
                if kind not in results or run["wall"] < results[kind]["wall"]:
                    results[kind] = run
        print(
            f"  {'':<46}{'wall s':>8}{'cases/s':>10}{'main cpu us/case':>18}{'worker cpu us/case':>20}"
        )
        for kind, label in kinds:
            r = results[kind]
            print(
                f"  {label:<46}{r['wall']:8.2f}{n / r['wall']:10,.0f}{r['main_cpu'] / n * 1e6:18.1f}{r['worker_cpu'] / n * 1e6:20.1f}"
            )
        one, two = results["workers=1"], results["workers=2"]
        loop, sandboxed, in_process = results["loop"], results["loop-sandbox"], results["workers=0"]
        print()
        for kind, label in kinds:
            print(f"  {label:<46}all walls: {', '.join(f'{w:.3f}' for w in walls[kind])} s")
        print()
        print(
            f"speedup, 2 workers vs 1 (wall): {one['wall'] / two['wall']:.2f}x  (target >= 1.7x on 2 cores)"
        )
        print(
            "runner overhead over grade() in a loop, both in this process with grade's sandbox\n"
            f"  (--workers 0 vs loop: grade()): {in_process['wall'] / sandboxed['wall'] - 1:+.1%}  (target < 10%)"
        )
        print(
            "with 1 worker process vs the loop (sandbox=False) in this process: "
            f"{one['wall'] / loop['wall'] - 1:+.1%} wall, "
            f"{(one['main_cpu'] + one['worker_cpu']) / loop['main_cpu'] - 1:+.1%} CPU"
        )
        print(f"2 workers vs the loop (sandbox=False): {loop['wall'] / two['wall']:.2f}x as fast")
        if "loop-forked" in results:
            forked, halves = results["loop-forked"], results["loop-halves"]
            print(
                "bounds on this machine, no runner at all: the loop in 1 forked process is "
                f"{forked['wall'] / loop['wall'] - 1:+.1%} over the loop here; "
                f"split over 2 forked processes it is {forked['wall'] / halves['wall']:.2f}x as fast "
                "as in 1 (the ceiling for 2 workers vs 1)"
            )
        print(f"load (1-minute average) after: {os.getloadavg()[0]:.2f}")
        if one["counts"] != two["counts"]:
            print(
                f"WARNING: outcomes differ between 1 and 2 workers: {one['counts']} vs {two['counts']}"
            )


if __name__ == "__main__":
    main()
