"""Per-call overhead of the sync reward path: ``await calculate_reward(r, **fields)`` against
calling the function directly, and against an AgentFly-style path, measured in one run.

AgentFly itself cannot be installed here (the PyPI package named ``agentfly`` is an unrelated
project), so the "AgentFly-style path" below reproduces the per-call work of its reward
wrapper: read the function's signature on every call, filter the keyword arguments by it,
call, and normalize a number into a ``{"reward": ...}`` dict. It is our reproduction, not
AgentFly's code.

Then the per-sample cost of each execution mode under ``calculate_rewards`` (inline, thread,
process), against a plain loop of direct calls, measured in the same run: for a trivial reward
(the mode's whole overhead) and for a real math_verify grader (what the process mode costs a
reward that needs it).

Run: ``.venv/bin/python benchmarks/reward_overhead.py [--calls 20000] [--repeats 25] [--samples 2000]``
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import time
from collections.abc import Callable
from typing import Any

from rewardkit import calculate_reward, calculate_rewards, reward
from rewardkit.reward_processes import reward_processes

BUDGET_NS = 1000.0  # the bar: at most 1 microsecond over a direct call


def exact_match(final_response: str, answer: str) -> float:
    return 1.0 if final_response == answer else 0.0


rewardkit_reward = reward(exact_match, name="bench_exact_match", auto_register=False)


class AgentFlyStyleReward:
    """Reproduction of AgentFly's per-call reward path (see module docstring)."""

    def __init__(self, func: Callable[..., Any]) -> None:
        self.func = func
        self.name = func.__name__
        self.is_coroutine = inspect.iscoroutinefunction(func)

    async def __call__(self, **kwargs: Any) -> dict[str, Any]:
        parameters = inspect.signature(self.func).parameters
        accepted = {key: value for key, value in kwargs.items() if key in parameters}
        if self.is_coroutine:
            result = await self.func(**accepted)
        else:
            result = self.func(**accepted)
        if isinstance(result, (int, float)):
            result = {"reward": float(result)}
        return result


agentfly_style_reward = AgentFlyStyleReward(exact_match)


async def bare_async_wrapper(reward_fn: Callable[..., Any], /, **fields: Any) -> Any:
    """The floor: what any ``async def f(reward_fn, **fields)`` API costs before doing anything."""
    return reward_fn(**fields)


async def per_call_ns(kind: str, calls: int, extra_fields: bool) -> float:
    """Nanoseconds per call of one path, measured in a tight loop inside the event loop."""
    fn = exact_match
    rk = rewardkit_reward
    af = agentfly_style_reward
    floor = bare_async_wrapper
    trajectory: list[dict[str, str]] = []
    start = time.perf_counter_ns()
    if kind == "direct":
        for _ in range(calls):
            fn(final_response="4", answer="4")
    elif kind == "floor":
        for _ in range(calls):
            await floor(fn, final_response="4", answer="4")
    elif kind == "rewardkit" and not extra_fields:
        for _ in range(calls):
            await calculate_reward(rk, final_response="4", answer="4")
    elif kind == "rewardkit":
        for _ in range(calls):
            await calculate_reward(
                rk, final_response="4", answer="4", trajectory=trajectory, id="r1"
            )
    elif kind == "agentfly" and not extra_fields:
        for _ in range(calls):
            await af(final_response="4", answer="4")
    else:
        for _ in range(calls):
            await af(final_response="4", answer="4", trajectory=trajectory, id="r1")
    return (time.perf_counter_ns() - start) / calls


async def measure(calls: int, repeats: int, extra_fields: bool) -> dict[str, float]:
    """Best (minimum) of ``repeats`` rounds, as ``timeit`` advises: other processes only ever
    add time. The paths alternate within each round so that load hits them alike."""
    samples: dict[str, list[float]] = {"direct": [], "floor": [], "rewardkit": [], "agentfly": []}
    for _ in range(repeats):
        for kind in samples:
            samples[kind].append(await per_call_ns(kind, calls, extra_fields))
    return {kind: min(values) for kind, values in samples.items()}


def report(title: str, figures: dict[str, float]) -> bool:
    direct = figures["direct"]
    ours = figures["rewardkit"] - direct
    theirs = figures["agentfly"] - direct
    print(title)
    print(f"  direct call                      {direct:8.0f} ns")
    print(
        f"  bare async wrapper (the floor)   {figures['floor']:8.0f} ns   overhead {figures['floor'] - direct:6.0f} ns"
    )
    print(
        f"  rewardkit calculate_reward       {figures['rewardkit']:8.0f} ns   overhead {ours:6.0f} ns"
    )
    print(
        f"  AgentFly-style path (reproduced) {figures['agentfly']:8.0f} ns   overhead {theirs:6.0f} ns"
    )
    print(f"  overhead ratio AgentFly-style / rewardkit: {theirs / ours:.1f}x")
    verdict = "within" if ours <= BUDGET_NS else "OVER"
    print(
        f"  rewardkit overhead {ours / 1000:.2f} us: {verdict} the {BUDGET_NS / 1000:.0f} us budget"
    )
    return ours <= BUDGET_NS


def math_verify_accuracy(final_response: str, answer: str) -> float:
    """math_verify as TRL's accuracy reward calls it (default timeouts: signal.alarm)."""
    from math_verify import parse, verify

    return float(verify(parse(answer), parse(final_response)))


MATH_SAMPLES = [
    {"final_response": "The answer is $\\frac{1}{2}$", "answer": "$0.5$"},
    {"final_response": "So $\\boxed{\\sqrt{4}}$", "answer": "$2$"},
    {"final_response": "$3$", "answer": "$4$"},
    {"final_response": "We get $x = 12$", "answer": "$12$"},
]


def direct_batch_seconds(function: Callable[..., Any], samples: list[dict[str, Any]]) -> float:
    start = time.perf_counter()
    for sample in samples:
        function(**sample)
    return time.perf_counter() - start


def mode_batch_seconds(
    function: Callable[..., Any], samples: list[dict[str, Any]], execution: str
) -> float:
    start = time.perf_counter()
    results = asyncio.run(
        calculate_rewards(function, samples, execution=execution, on_error="record")
    )
    elapsed = time.perf_counter() - start
    failed = [result.extras["error"] for result in results if "error" in result.extras]
    if failed:
        raise SystemExit(f"{execution}: {len(failed)} samples failed, e.g. {failed[0]}")
    return elapsed


def report_modes(
    title: str, function: Callable[..., Any], samples: list[dict[str, Any]], repeats: int
) -> None:
    """Per-sample microseconds of each mode, best of ``repeats`` rounds, against direct calls."""
    modes = ["inline", "thread", "process"]
    if function.__name__ == "math_verify_accuracy":
        modes.remove("thread")  # signal.alarm refuses threads: that is what the process mode is for
    mode_batch_seconds(function, samples[:8], "process")  # start the workers (not timed)
    best = {"direct": float("inf"), **dict.fromkeys(modes, float("inf"))}
    for _ in range(repeats):  # interleaved, so that load hits every path alike
        best["direct"] = min(best["direct"], direct_batch_seconds(function, samples))
        for mode in modes:
            best[mode] = min(best[mode], mode_batch_seconds(function, samples, mode))
    count = len(samples)
    direct = best["direct"] / count * 1e6
    print(f"{title} ({count} samples, best of {repeats} rounds, per sample):")
    print(f"  direct call (plain loop)         {direct:10.1f} us")
    for mode in modes:
        per_sample = best[mode] / count * 1e6
        print(
            f"  calculate_rewards {mode:<8}       {per_sample:10.1f} us   overhead {per_sample - direct:9.1f} us"
            f"   ({per_sample / direct:.2f}x the direct call)"
        )


def shippable(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` as worker processes find it: from this file imported by its module name
    (run as a script, it is ``__main__``, which a worker never imports)."""
    import reward_overhead  # this file: benchmarks/ is sys.path[0] when it runs as a script

    return getattr(reward_overhead, function.__name__)  # type: ignore[no-any-return]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000, help="calls per measurement round")
    parser.add_argument("--repeats", type=int, default=25, help="rounds (the best is reported)")
    parser.add_argument(
        "--samples", type=int, default=2000, help="samples per execution-mode batch"
    )
    parser.add_argument(
        "--mode-repeats", type=int, default=5, help="rounds of the execution-mode batches"
    )
    args = parser.parse_args()
    print(f"{args.calls} calls x {args.repeats} rounds per path, best round, per call\n")
    exact = asyncio.run(measure(args.calls, args.repeats, extra_fields=False))
    ok = report("reward receives exactly its fields (final_response, answer):", exact)
    print()
    extra = asyncio.run(measure(args.calls, args.repeats, extra_fields=True))
    ok = report("sample also carries trajectory and id (ignored by the reward):", extra) and ok
    print()
    trivial = [{"final_response": str(index % 10), "answer": "3"} for index in range(args.samples)]
    report_modes(
        "execution modes, trivial reward", shippable(exact_match), trivial, args.mode_repeats
    )
    print()
    graded = (MATH_SAMPLES * (args.samples // 10 // len(MATH_SAMPLES) + 1))[
        : max(len(MATH_SAMPLES), args.samples // 10)
    ]
    report_modes(
        "execution modes, math_verify reward",
        shippable(math_verify_accuracy),
        graded,
        args.mode_repeats,
    )
    print(f"  (process mode: {reward_processes.max_workers} worker processes per reward)")
    reward_processes.shutdown()
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
