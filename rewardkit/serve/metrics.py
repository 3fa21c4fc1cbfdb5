"""Prometheus metrics of `rewardkit serve` (``GET /metrics``).

With ``--workers N`` each worker process counts in files under ``PROMETHEUS_MULTIPROC_DIR`` (set
by the supervisor before the workers start), and ``/metrics`` of any worker sums them all:
counters and histograms keep a dead worker's counts; in-flight gauges count live workers only.
"""

from __future__ import annotations

import os
import re
from functools import partial
from pathlib import Path
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)


class ServeMetrics:
    """The server's counters, histograms and gauges, in their own registry."""

    def __init__(self) -> None:
        self.multiprocess_dir = os.environ.get(MULTIPROC_ENV) or None
        self.registry = CollectorRegistry()
        # Every metric is in this registry; latencies share one set of buckets; in-flight gauges
        # count live workers only.
        counter = partial(Counter, registry=self.registry)
        latency = partial(Histogram, buckets=LATENCY_BUCKETS, registry=self.registry)
        live_gauge = partial(Gauge, registry=self.registry, multiprocess_mode="livesum")
        self.requests = counter(
            "rewardkit_serve_requests",
            "HTTP requests answered, by route and status code.",
            ["route", "status"],
        )
        self.request_seconds = latency(
            "rewardkit_serve_request_duration_seconds",
            "Time from a request's arrival to its response, by route.",
            ["route"],
        )
        self.samples = counter("rewardkit_serve_samples", "Samples scored, by reward.", ["reward"])
        self.sample_seconds = latency(
            "rewardkit_serve_sample_duration_seconds",
            "Time to score one sample (timeouts included), by reward.",
            ["reward"],
        )
        self.failures = counter(
            "rewardkit_serve_sample_failures",
            "Samples that failed, by reward and failure tag (timeout, reward_error, bad_result, bad_sample).",
            ["reward", "tag"],
        )
        self.rejected = counter(
            "rewardkit_serve_rejected_requests",
            "Requests refused before scoring, by reason (overloaded, body_too_large, malformed, unknown_reward).",
            ["reason"],
        )
        self.in_flight_requests = live_gauge(
            "rewardkit_serve_in_flight_requests", "Requests being scored now."
        )
        self.in_flight_samples = live_gauge(
            "rewardkit_serve_in_flight_samples", "Samples admitted and not yet answered."
        )

    def sample_done(self, reward: str, seconds: float, failure_tag: str | None) -> None:
        """Count one scored sample (the ``RewardService`` calls this)."""
        self.samples.labels(reward).inc()
        self.sample_seconds.labels(reward).observe(seconds)
        if failure_tag is not None:
            self.failures.labels(reward, failure_tag).inc()

    def exposition(self) -> tuple[bytes, str]:
        """The text exposition of every metric (all workers' with ``--workers``) and its type."""
        if self.multiprocess_dir is None:
            return generate_latest(self.registry), CONTENT_TYPE_LATEST
        forget_dead_workers(self.multiprocess_dir)
        combined = CollectorRegistry()
        multiprocess.MultiProcessCollector(combined, path=self.multiprocess_dir)
        return generate_latest(combined), CONTENT_TYPE_LATEST


_LIVE_FILE = re.compile(r"gauge_live\w*_(\d+)\.db\Z")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def forget_dead_workers(directory: str) -> None:
    """Drop the live-gauge files of worker processes that died (a killed worker never says so)."""
    for path in Path(directory).glob("gauge_live*.db"):
        found = _LIVE_FILE.match(path.name)
        if found is not None and not _alive(int(found.group(1))):
            multiprocess.mark_process_dead(int(found.group(1)), directory)


def worker_exited(pid: int) -> Any:
    """Tell the metrics a worker is gone (its in-flight gauges stop counting)."""
    directory = os.environ.get(MULTIPROC_ENV)
    if directory:
        multiprocess.mark_process_dead(pid, directory)
