"""Per-sample cost of the result schema (``rewardkit.runtime.define.schema``) against a plain call, in one run.

Every adapter gives each sample exactly the reward's extras keys: ``schema.conform(extras)``
after each call (``conform(None)`` for a failed sample). This measures, per sample:

* ``function``: the undecorated function, the floor;
* ``plain``: the reward object's call path, ``reward.invoke(fields)``;
* ``plain + conform``: the same, then the schema's ``conform`` of its extras (what the schema
  adds to every sample);
* ``failure fill``: ``conform(None)``, a failed sample's extras;
* ``to_verl`` and ``to_openrlhf`` (a batch of 64, per sample): the whole adapter path, for scale.

and, once per adapter, ``result_schema(reward)``: reading the returns from the source.
Ratios are against ``plain`` measured in the same run; the machine may be busy (its load is
printed), so read the ratios, not the absolute times.

Run: ``.venv/bin/python benchmarks/adapter_schema_overhead.py [--calls 20000] [--repeats 15]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

from rewardkit import reward
from rewardkit.adapters import to_openrlhf, to_verl
from rewardkit.schema import result_schema


def _grade(final_response: str, answer: str) -> dict[str, Any]:
    words = final_response.split()
    pred = words[-1] if words else ""
    return {"reward": float(pred == answer), "acc": pred == answer, "pred": pred}


def math_like(final_response: str, answer: str) -> dict[str, Any]:
    return _grade(final_response, answer)


bench_reward = reward(math_like, name="bench_schema_math_like", auto_register=False)
FIELDS = {"final_response": "so the answer is 42", "answer": "42"}


def per_call_ns(call: Callable[[], Any], calls: int, repeats: int) -> float:
    """Median over ``repeats`` of the mean time of ``calls`` calls, in nanoseconds."""
    samples = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        for _ in range(calls):
            call()
        samples.append((time.perf_counter_ns() - start) / calls)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()

    started = time.perf_counter()
    schema = result_schema(bench_reward)
    build_ms = (time.perf_counter() - started) * 1000
    invoke = bench_reward.invoke
    conform = schema.conform
    fields = dict(FIELDS)
    extras = invoke(fields).extras
    compute_score = to_verl(bench_reward)
    reward_func = to_openrlhf(bench_reward, return_tensors=False)
    batch = 64
    queries = ["Q: " + FIELDS["final_response"]] * batch
    prompts, labels = ["Q: "] * batch, [FIELDS["answer"]] * batch

    rows: list[tuple[str, float]] = [
        ("function", per_call_ns(lambda: math_like(**fields), args.calls, args.repeats)),
        ("plain", per_call_ns(lambda: invoke(fields), args.calls, args.repeats)),
        ("plain + conform", per_call_ns(lambda: conform(invoke(fields).extras), args.calls, args.repeats)),
        ("conform alone", per_call_ns(lambda: conform(extras), args.calls, args.repeats)),
        ("failure fill", per_call_ns(lambda: conform(None), args.calls, args.repeats)),
        (
            "to_verl per sample",
            per_call_ns(
                lambda: compute_score(data_source="d", solution_str=FIELDS["final_response"], ground_truth="42"),
                args.calls // 4,
                args.repeats,
            ),
        ),
        (
            "to_openrlhf per sample (batch 64)",
            per_call_ns(lambda: reward_func(queries, prompts, labels), max(1, args.calls // 256), args.repeats)
            / batch,
        ),
    ]
    plain = dict(rows)["plain"]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"schema of {bench_reward.name!r}: keys {schema.keys}, read from its returns in {build_ms:.2f} ms (once per adapter)")
    print(f"{os.cpu_count()} CPUs, load average {load:.1f} (a busy machine inflates every row alike)")
    print(f"{'path':36} {'ns/sample':>10} {'x plain':>8}")
    for name, nanoseconds in rows:
        print(f"{name:36} {nanoseconds:10.0f} {nanoseconds / plain:8.2f}")
    added = dict(rows)["plain + conform"] - plain
    print(f"the schema adds {added:.0f} ns per sample ({added / plain:.0%} of a plain call of this reward)")


if __name__ == "__main__":
    main()
