"""What a dead reward server costs an `eval --reward-url` run, in this run.

    python benchmarks/eval_dead_reward_server.py [--cases 3000] [--peer-cases 40] [--workers 0 2]

A run's grader is `RemoteGrader` at a port nobody listens on (the run's own check before the
run, `connect`, is skipped: this is a server that died after it). Once a request found the
server not answering, a process fails its next cases at once and asks `/health` again at most
every 5 s (`RemoteGrader._check_alive`, state per process: an eval worker
gets a fresh copy of its grader with each task). The peer is the same grader with that fail-fast taken
out: every case pays the client's retries and backoff, as every case did before (then inside
the 1 s budget, so each was killed at 2 s and came out a WRONG_ANSWER). Prints seconds per case
for both and their ratio; every case must be a HARNESS_ERROR with reason `reward_server`.
"""

from __future__ import annotations

import argparse
import socket
import time

from rewardkit.evaluation import run_math_eval
from rewardkit.serve.grading import _DOWN_SERVERS, RemoteGrader


class NoFailFast(RemoteGrader):
    """The peer: asks the dead server for every case."""

    def _check_alive(self) -> None:
        _DOWN_SERVERS.pop(self.base, None)


def dead_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


def seconds_per_case(grader: RemoteGrader, cases: int, workers: int) -> float:
    records = [{"id": f"q{i}", "response": "\\boxed{4}", "gold": "4"} for i in range(cases)]
    started = time.perf_counter()
    run = run_math_eval(records, grader=grader, workers=workers)
    elapsed = time.perf_counter() - started
    reasons = {(result.outcome, result.reason) for result in run.results}
    assert reasons == {("HARNESS_ERROR", "reward_server")}, reasons
    return elapsed / cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=3000)
    parser.add_argument("--peer-cases", type=int, default=40)
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 2])
    args = parser.parse_args()
    print(
        f"{'workers':>7} {'fail-fast s/case':>17} {'total s':>8} {'peer s/case':>12} {'ratio':>7}"
    )
    for workers in args.workers:
        ours = seconds_per_case(RemoteGrader(dead_url()), args.cases, workers)
        peer = seconds_per_case(NoFailFast(dead_url()), args.peer_cases, workers)
        print(
            f"{workers:>7} {ours:>17.5f} {ours * args.cases:>8.2f} {peer:>12.3f} {peer / ours:>7.0f}x"
        )


if __name__ == "__main__":
    main()
