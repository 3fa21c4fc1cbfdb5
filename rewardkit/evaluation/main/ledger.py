"""The duplicate-id check of a run whose lines were parsed in worker processes.

Workers parse lines, so the main process sees only the ids they return, batch by batch, in
completion order; this ledger finds the later of two lines with one id from those lists.
"""

from __future__ import annotations

from pathlib import Path

from rewardkit.evaluation.errors import EvalOutputError, os_error_reason
from rewardkit.evaluation.inputs.cases import EvalInputError, malformed_line_case
from rewardkit.evaluation.main.output_files import encode_text
from rewardkit.evaluation.scoring import CaseResult
from rewardkit.evaluation.worker.batch import ResultBatch
from rewardkit.evaluation.worker.grading import decided_to_result
from rewardkit.math.verdict import quoted


class IdLedger:
    """Duplicate-id check of a run whose lines were parsed in workers, from the ids they return.

    A duplicate is the later of two lines with one id. It stops the run (`EvalInputError`
    naming it), or with `--skip-bad` becomes a `HARNESS_ERROR` case `line:N`. Chunks finish out
    of order, so the later line may have been emitted first: its result is then superseded,
    and dropped from the results (file included) at the end of the run.
    """

    def __init__(
        self, *, path: str | None, skip_bad: bool, done_ids: set[str], include_response: bool
    ) -> None:
        self.path = path
        self.skip_bad = skip_bad
        self.done_ids = done_ids
        self.include_response = include_response
        self.first_line: dict[str, int | None] = {}
        self.superseded: set[tuple[str, int | None]] = set()

    def check(self, batch: ResultBatch, emitted: list[ResultBatch]) -> None:
        """Record the batch's ids; fix or reject duplicates (the rare, slow path)."""
        ids = batch.ids
        incoming = dict(zip(ids, batch.lines))
        for case_id, line, _response in batch.skipped:
            incoming[case_id] = line
        if len(incoming) == len(ids) + len(batch.skipped) and self.first_line.keys().isdisjoint(
            incoming
        ):
            self.first_line.update(incoming)
            return
        replaced: list[int] = []
        additions: list[CaseResult] = []
        pairs = [(i, case_id, line) for i, (case_id, line) in enumerate(zip(ids, batch.lines))]
        pairs += [(None, case_id, line) for case_id, line, _ in batch.skipped]
        pairs.sort(key=lambda pair: pair[2] or 0)
        for position, case_id, line in pairs:
            if case_id not in self.first_line:
                self.first_line[case_id] = line
                continue
            other = self.first_line[case_id]
            first, duplicate = sorted((line or 0, other or 0))
            reason = f"duplicate id {quoted(case_id)} (first on line {first})"
            if not self.skip_bad:
                raise EvalInputError(reason, path=self.path or "<input>", line=duplicate)
            if duplicate == line:  # this line is the duplicate: replace its result
                if position is not None:
                    replaced.append(position)
            else:  # the line emitted earlier is the duplicate: supersede it
                self.superseded.add((case_id, other))
                self.first_line[case_id] = line
            stand_in = malformed_line_case(self.path or "<input>", duplicate, reason)
            if stand_in.id not in self.done_ids:
                additions.append(decided_to_result(stand_in))
            self.first_line[stand_in.id] = duplicate
        batch.drop(replaced)
        for result in additions:
            batch.append(result, include_response=self.include_response)

    def drop_superseded(
        self, previous: list[CaseResult], batches: list[ResultBatch]
    ) -> list[CaseResult]:
        """Remove superseded results from the resumed ones and from the batches."""
        for batch in batches:
            batch.drop(
                i for i, key in enumerate(zip(batch.ids, batch.lines)) if key in self.superseded
            )
        return [r for r in previous if (r.id, r.line) not in self.superseded]


def rewrite_results(
    output: str | Path,
    previous: list[CaseResult],
    batches: list[ResultBatch],
    include_response: bool,
) -> None:
    """Rewrite the results file without superseded results (after a late-found duplicate id).
    In place, not renamed over: the run's lock is on this file."""
    parts = [result.to_line(include_response=include_response) for result in previous]
    parts += ["".join(batch.texts) for batch in batches]
    data = encode_text("".join(parts))
    try:
        with open(output, "r+b") as handle:
            handle.write(data)
            handle.truncate(len(data))
    except OSError as error:
        raise EvalOutputError("results file", output, os_error_reason(error)) from None
