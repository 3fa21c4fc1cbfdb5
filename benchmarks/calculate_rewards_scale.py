"""``calculate_rewards`` over 100,000 samples of a trivial async reward: samples/s and peak
memory, against the naive peer (one task per sample, ``asyncio.gather``) in the same run.
Then a trivial sync reward (threads), without and with a per-call timeout, and inline on the event
loop (``execution="inline"``), against the plain peer: every sample through
``loop.run_in_executor`` on a ``ThreadPoolExecutor`` of the same size.

Memory is the peak of Python allocations (``tracemalloc``) during the call, above what the
samples list already holds; it is measured in a separate run from the throughput, because
tracing slows everything down.

Run: ``.venv/bin/python benchmarks/calculate_rewards_scale.py [--samples 100000] [--concurrency 64]``
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import gc
import time
import tracemalloc
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from rewardkit import RewardResult, calculate_reward, calculate_rewards, reward


@reward(name="bench_trivial_async", auto_register=False)
async def trivial(final_response: str, answer: str) -> float:
    await asyncio.sleep(0)  # a real suspension point, as any I/O-bound reward has
    return 1.0 if final_response == answer else 0.0


@reward(name="bench_trivial_sync", auto_register=False)
def trivial_sync(final_response: str, answer: str) -> float:
    return 1.0 if final_response == answer else 0.0


def make_samples(count: int) -> list[dict[str, Any]]:
    return [{"final_response": str(i % 10), "answer": "3", "id": f"r{i}"} for i in range(count)]


async def rewardkit_batch(
    samples: Sequence[dict[str, Any]], concurrency: int
) -> list[RewardResult]:
    return await calculate_rewards(trivial, samples, concurrency=concurrency)


async def naive_gather(samples: Sequence[dict[str, Any]], concurrency: int) -> list[RewardResult]:
    """The peer: every sample's coroutine and task exist at once."""
    return list(await asyncio.gather(*(calculate_reward(trivial, **sample) for sample in samples)))  # type: ignore[arg-type]


async def rewardkit_sync_batch(
    samples: Sequence[dict[str, Any]], concurrency: int
) -> list[RewardResult]:
    return await calculate_rewards(trivial_sync, samples, concurrency=concurrency)


async def rewardkit_sync_batch_with_timeout(
    samples: Sequence[dict[str, Any]], concurrency: int
) -> list[RewardResult]:
    return await calculate_rewards(trivial_sync, samples, concurrency=concurrency, timeout=5.0)


async def rewardkit_sync_batch_inline(
    samples: Sequence[dict[str, Any]], concurrency: int
) -> list[RewardResult]:
    return await calculate_rewards(trivial_sync, samples, concurrency=concurrency, execution="inline")


async def executor_gather(
    samples: Sequence[dict[str, Any]], concurrency: int
) -> list[RewardResult]:
    """The sync peer: one executor job per sample on a pool of ``concurrency`` threads, no timeout."""
    loop = asyncio.get_running_loop()
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        jobs = [loop.run_in_executor(pool, trivial_sync.invoke, sample) for sample in samples]
        return list(await asyncio.gather(*jobs))


Runner = Callable[[Sequence[dict[str, Any]], int], Awaitable[list[RewardResult]]]


def throughput(runner: Runner, samples: list[dict[str, Any]], concurrency: int) -> float:
    gc.collect()
    start = time.perf_counter()
    results = asyncio.run(runner(samples, concurrency))
    elapsed = time.perf_counter() - start
    assert len(results) == len(samples)
    assert results[3].reward == 1.0
    return len(samples) / elapsed


def peak_memory_mib(runner: Runner, samples: list[dict[str, Any]], concurrency: int) -> float:
    gc.collect()
    tracemalloc.start()
    baseline, _ = tracemalloc.get_traced_memory()
    results = asyncio.run(runner(samples, concurrency))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(results) == len(samples)
    return (peak - baseline) / 2**20


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    samples = make_samples(args.samples)
    print(f"{args.samples} samples, trivial async reward, concurrency={args.concurrency}\n")
    rows = []
    for label, runner in (
        ("rewardkit calculate_rewards", rewardkit_batch),
        ("naive gather (task per sample)", naive_gather),
    ):
        rate = throughput(runner, samples, args.concurrency)
        peak = peak_memory_mib(runner, samples, args.concurrency)
        rows.append((label, rate, peak))
        print(f"  {label:32s} {rate:10,.0f} samples/s   peak memory {peak:7.1f} MiB")
    (_, our_rate, our_peak), (_, peer_rate, peer_peak) = rows
    results_only = peak_memory_mib(lambda s, c: _results_only(len(s)), samples, args.concurrency)
    print(f"\n  (the {args.samples} RewardResults themselves take {results_only:.1f} MiB)")
    print(f"  throughput ratio rewardkit / naive: {our_rate / peer_rate:.2f}x")
    print(f"  peak memory ratio naive / rewardkit: {peer_peak / our_peak:.1f}x")

    print(
        f"\n{args.samples} samples, trivial sync reward (threads), concurrency={args.concurrency}\n"
    )
    sync_rows = (
        ("rewardkit calculate_rewards", rewardkit_sync_batch),
        ("rewardkit, timeout=5.0", rewardkit_sync_batch_with_timeout),
        ("rewardkit, execution='inline'", rewardkit_sync_batch_inline),
        ("run_in_executor per sample", executor_gather),
    )
    rates = {label: throughput(runner, samples, args.concurrency) for label, runner in sync_rows}
    for label, rate in rates.items():
        print(f"  {label:32s} {rate:10,.0f} samples/s")
    peer = rates["run_in_executor per sample"]
    print(
        f"  throughput ratio rewardkit / executor: {rates['rewardkit calculate_rewards'] / peer:.2f}x, "
        f"with a timeout: {rates['rewardkit, timeout=5.0'] / peer:.2f}x"
    )
    return 0


async def _results_only(count: int) -> list[RewardResult]:
    return [RewardResult(1.0, {}) for _ in range(count)]


if __name__ == "__main__":
    raise SystemExit(main())
