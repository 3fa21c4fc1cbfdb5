"""A batch of results as it crosses the process boundary: parallel per-case lists.

The main process of a run with worker processes must do almost nothing per case, or it becomes
the bottleneck (a cached grade takes ~12 us). So workers send back a `ResultBatch` of parallel
lists (ids, line numbers, results-file lines) and the count of each (outcome, reason); the main
process appends the lines with one write and adds up the counts. `CaseResult` objects are built
only when someone asks for them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from rewardkit.evaluation.inputs.cases import (
    fast_loads,
)
from rewardkit.evaluation.scoring import PASS, CaseResult
from rewardkit.evaluation.worker.grading import (
    ColdWorker,
)

OutcomeKey = tuple[str, str]
"""`(outcome, reason)` of one result: all the summary needs."""


@dataclass
class ResultBatch:
    """The results of one chunk, as parallel per-case lists, plus what the chunk skipped.

    `texts` are the results-file lines (JSON plus newline). `responses` is filled only when
    the run needs responses in the main process (HTML report, `on_result`). `skipped` lists the
    cases already done in a resumed run as `(id, line, response)`: they still take part in the
    duplicate-id check. `error` is `(line, reason)` of a malformed line when the run stops at
    one; the chunk's lines after it were not graded.
    """

    ids: list[str] = field(default_factory=list)
    lines: list[int | None] = field(default_factory=list)
    counts: Counter[OutcomeKey] = field(default_factory=Counter)
    texts: list[str] = field(default_factory=list)
    responses: list[str | None] | None = None
    skipped: list[tuple[str, int | None, str | None]] = field(default_factory=list)
    error: tuple[int, str] | None = None
    grading_seconds: float = 0.0
    busy_seconds: float = 0.0
    """Wall time the worker spent on the chunk (parsing, grading, serialising): sizes the next tasks."""
    results: list[CaseResult] | None = None
    """The result objects, when they exist already (built in the main process)."""
    interrupted: BaseException | None = None
    """Ctrl-C (or another stop signal) arrived while this batch was graded in this process: it
    holds the cases finished before it; the run writes them, then stops."""
    resume_at: int | None = None
    """The chunk stopped at this case (its offset in the chunk) because it needs the grader's
    symbolic part, which this worker must not load (`ColdWorker`): the rest goes to a warm one."""

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def failed(self) -> int:
        """How many results of the batch did not pass (for the progress bar)."""
        return sum(count for (outcome, _reason), count in self.counts.items() if outcome != PASS)

    def append(self, result: CaseResult, *, include_response: bool) -> None:
        """Add a result built in the main process (crash, timeout, duplicate id, other executors)."""
        if self.results is None:
            self.results = self.materialise()
        self.results.append(result)
        self.ids.append(result.id)
        self.lines.append(result.line)
        self.counts[result.outcome, result.reason] += 1
        self.texts.append(result.to_line(include_response=include_response))
        if self.responses is not None:
            self.responses.append(result.response)
        self.grading_seconds += result.seconds

    def keep_complete(self, stop: BaseException, offset: int) -> None:
        """Cut the per-case lists to the cases whose results-file line was made (a signal may
        land between two appends), and remember why the chunk stopped at `offset`."""
        done = len(self.texts)
        self.ids, self.lines = self.ids[:done], self.lines[:done]
        if self.responses is not None:
            self.responses = self.responses[:done]
        if isinstance(stop, ColdWorker):
            self.resume_at = offset
        else:
            self.interrupted = stop

    def materialise(self) -> list[CaseResult]:
        """The batch's `CaseResult`s, parsed back from their results-file lines if need be."""
        if self.results is not None:
            return list(self.results)
        responses = self.responses or [None] * len(self.texts)
        return [
            CaseResult.from_json(fast_loads(text), response=response, serialized=text)
            for text, response in zip(self.texts, responses)
        ]

    def drop(self, positions: Iterable[int]) -> None:
        """Remove the results at `positions` (a duplicate id found after it was emitted)."""
        gone = set(positions)
        if not gone:
            return
        results = self.materialise()
        keep = [i for i in range(len(self.ids)) if i not in gone]
        self.results = [results[i] for i in keep]
        self.ids = [self.ids[i] for i in keep]
        self.lines = [self.lines[i] for i in keep]
        for i in gone:
            self.counts[results[i].outcome, results[i].reason] -= 1
        self.counts = +self.counts
        self.texts = [self.texts[i] for i in keep]
        if self.responses is not None:
            self.responses = [self.responses[i] for i in keep]


def batch_of(results: Iterable[CaseResult], *, include_response: bool) -> ResultBatch:
    """A batch from result objects (in-process and Ray executors, crashes, timeouts)."""
    batch = ResultBatch(results=[], responses=[])
    for result in results:
        batch.append(result, include_response=include_response)
    return batch
