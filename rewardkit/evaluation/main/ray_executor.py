"""Grading on a Ray cluster (`--executor ray`), for runs that outgrow one machine.

Cases travel in chunks as Ray tasks; each task grades with `sandbox=True`, so the grader's own
killable process enforces the per-case budget on whichever node runs it. Ray retries a task
whose worker died once (`max_retries=1`); a chunk that still fails is retried case by case, and
a case that fails again is a `HARNESS_ERROR` naming the error.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from rewardkit.evaluation.errors import ray_extra_missing
from rewardkit.evaluation.inputs.cases import DecidedCase, MathCase
from rewardkit.evaluation.scoring import CaseResult
from rewardkit.evaluation.worker.grading import (
    GradeOptions,
    Grader,
    crash_result,
    decided_to_result,
    grade_case,
    start_symbolic_workers,
)


def _grade_chunk_on_ray(
    cases: list[MathCase], options: GradeOptions, grader: Grader | None
) -> list[CaseResult]:
    """Body of the Ray task: grade each case of a chunk with the grader's own sandbox, started
    first (once per Ray worker process) so that no case's budget is spent waiting for it."""
    start_symbolic_workers(grader, options.task)
    return [grade_case(case, options, sandbox=True, grader=grader) for case in cases]


class RayExecutor:
    """Submit chunks as Ray tasks and yield results as tasks finish (`ray.wait`)."""

    def __init__(
        self,
        options: GradeOptions,
        *,
        address: str | None = None,
        grader: Grader | None = None,
        chunk_size: int = 16,
        max_inflight: int | None = None,
    ) -> None:
        self.options = options
        self.address = address
        self.grader = grader
        self.chunk_size = max(1, chunk_size)
        self.max_inflight = max_inflight

    def _connect(self) -> Any:
        try:
            import ray
        except ImportError as exc:  # pragma: no cover - the extra is installed in CI
            raise RuntimeError(ray_extra_missing()) from exc
        if not ray.is_initialized():
            ray.init(
                address=self.address,
                include_dashboard=False,
                log_to_driver=False,
                ignore_reinit_error=True,
            )
        return ray

    def results(self, cases: Iterable[MathCase | DecidedCase]) -> Iterator[CaseResult]:
        """Yield results in completion order; at most `max_inflight` chunks are queued on the cluster."""
        ray = self._connect()
        remote = ray.remote(max_retries=1, num_cpus=1)(_grade_chunk_on_ray)
        inflight = self.max_inflight or max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
        pending: dict[Any, list[MathCase]] = {}

        def collect(block_until: int) -> Iterator[CaseResult]:
            while len(pending) > block_until:
                done, _ = ray.wait(list(pending), num_returns=1)
                for ref in done:
                    chunk = pending.pop(ref)
                    try:
                        yield from ray.get(ref)
                    except Exception as exc:  # worker crash after Ray's own retry, or a task error
                        yield from self._retry_alone(ray, remote, chunk, exc)

        chunk: list[MathCase] = []
        for case in cases:
            if isinstance(case, DecidedCase):
                yield decided_to_result(case)
                continue
            chunk.append(case)
            if len(chunk) >= self.chunk_size:
                pending[remote.remote(chunk, self.options, self.grader)] = chunk
                chunk = []
                yield from collect(inflight)
        if chunk:
            pending[remote.remote(chunk, self.options, self.grader)] = chunk
        yield from collect(0)

    def _retry_alone(
        self, ray: Any, remote: Any, chunk: list[MathCase], first_error: Exception
    ) -> Iterator[CaseResult]:
        refs = {remote.remote([case], self.options, self.grader): case for case in chunk}
        for ref, case in refs.items():
            try:
                yield from ray.get(ref)
            except Exception as exc:
                name = type(exc).__name__
                yield crash_result(
                    case,
                    f"Ray task failed twice ({type(first_error).__name__}, then {name}): {exc}"[
                        :2000
                    ],
                )
