"""Case outcomes and the score: `score = passed / (cases - ADAPTER_ERROR - HARNESS_ERROR)`
(and `- SANDBOX_ERROR` for code).

Our side's failures (the endpoint, the harness, a bad gold, the sandbox) are excluded from the
denominator, so they can never move the model's score; every non-pass has exactly one tag.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from rewardkit.evaluation.tasks import MATH, Task
from rewardkit.runtime.define.failures import FailureTag

EXCLUDED_TAGS = frozenset({FailureTag.ADAPTER_ERROR, FailureTag.HARNESS_ERROR})
"""Tags that are our side's failures and leave the score's denominator (every task's; a
task may add its own: `Task.excluded`, code's `SANDBOX_ERROR`)."""

Tag = Enum
"""A case's failure tag: a `FailureTag`, or a task's own (`rewardkit.code.CodeTag`); its value
is the outcome's name."""


def tag_of(value: str) -> Tag:
    """The tag named `value` (a `FailureTag`, else a `CodeTag`); `ValueError` for neither."""
    try:
        return FailureTag(value)
    except ValueError:
        from rewardkit.code.verdict import CodeTag

        return CodeTag(value)


PASS = "PASS"
"""The outcome name of a passing case in counts and reports (passing cases carry no tag)."""

LINE_ENCODER = json.JSONEncoder(ensure_ascii=False)
"""Reused: `json.dumps` with any non-default option builds a new encoder on every call."""

DETAIL_KEYS = ("parsed_answer", "expected", "reason", "error")


@dataclass(frozen=True)
class CaseResult:
    """The graded outcome of one case: `passed` xor `tag`, with the grader's explanation in `detail`."""

    id: str
    passed: bool
    tag: Tag | None
    detail: Mapping[str, str | None]
    line: int | None = None
    response: str | None = None
    seconds: float = 0.0
    extra: Mapping[str, Any] = field(default_factory=dict)
    serialized: str | None = field(default=None, compare=False, repr=False)
    """The results-file line, when a worker already produced it (keeps JSON work off the parent)."""

    def __post_init__(self) -> None:
        if self.passed == (self.tag is not None):
            raise ValueError(
                f"case {self.id!r}: a result passes xor carries a tag (passed={self.passed}, tag={self.tag})"
            )

    @property
    def outcome(self) -> str:
        """`PASS` or the failure tag's name."""
        return PASS if self.tag is None else self.tag.value

    @property
    def reason(self) -> str:
        """Which rule decided the case (`exact`, `symbolic`, `hedge`, `timeout`, `crash`, ...)."""
        return self.detail.get("reason") or "unknown"

    def to_json(self, *, include_response: bool = True) -> dict[str, Any]:
        """The results-file record: `id`, `passed`, `tag`, `detail`, then context fields.

        The response is left out when it can be read back from the input file: it is most of
        a line's size and of the cost of writing it."""
        record: dict[str, Any] = {
            "id": self.id,
            "passed": self.passed,
            "tag": None if self.tag is None else self.tag.value,
            "detail": dict(self.detail),
            "line": self.line,
            "seconds": round(self.seconds, 6),
        }
        if include_response:
            record["response"] = self.response
        record.update(self.extra)
        return record

    def to_line(self, *, include_response: bool = True) -> str:
        """The results-file line (JSON plus newline)."""
        return (
            self.serialized
            or LINE_ENCODER.encode(self.to_json(include_response=include_response)) + "\n"
        )

    def with_response(self, response: str | None) -> CaseResult:
        """This result carrying `response` (a direct copy: `dataclasses.replace` costs ~35 us)."""
        return CaseResult(
            self.id,
            self.passed,
            self.tag,
            self.detail,
            self.line,
            response,
            self.seconds,
            self.extra,
            self.serialized,
        )

    @classmethod
    def from_json(
        cls,
        record: Mapping[str, Any],
        *,
        response: str | None = None,
        serialized: str | None = None,
    ) -> CaseResult:
        """Inverse of `to_json`; raises `KeyError`/`ValueError` on a record that is not a result.
        `response` (when given) stands for the record's; `serialized` is the line it came from."""
        tag = record["tag"]
        known = {"id", "passed", "tag", "detail", "line", "seconds", "response"}
        return cls(
            id=str(record["id"]),
            passed=bool(record["passed"]),
            tag=None if tag is None else tag_of(tag),
            detail=dict(record["detail"]),
            line=record.get("line"),
            response=record.get("response") if response is None else response,
            seconds=float(record.get("seconds") or 0.0),
            extra={k: v for k, v in record.items() if k not in known},
            serialized=serialized,
        )


def make_detail(
    *,
    parsed_answer: str | None = None,
    expected: str | None = None,
    reason: str,
    error: str | None = None,
    **more: str | None,
) -> dict[str, str | None]:
    """A `detail` mapping with the four documented keys always present (None when not applicable)."""
    detail: dict[str, str | None] = {
        "parsed_answer": parsed_answer,
        "expected": expected,
        "reason": reason,
        "error": error,
    }
    detail.update(more)
    return detail


@dataclass(frozen=True)
class Summary:
    """Counts and score over a set of results; what the table, the JSON and the HTML report show."""

    n: int
    passed: int
    failure_counts: dict[str, int]
    reason_counts: dict[str, int]
    reasons_by_outcome: dict[str, dict[str, int]]
    excluded_tags: tuple[str, ...] = MATH.excluded
    """The tags left out of the denominator (the task's: `Task.excluded`)."""

    @property
    def excluded(self) -> int:
        """Cases left out of the denominator (`ADAPTER_ERROR` + `HARNESS_ERROR`, and for code
        `SANDBOX_ERROR`)."""
        return sum(self.failure_counts.get(tag, 0) for tag in self.excluded_tags)

    @property
    def scored(self) -> int:
        """The score's denominator."""
        return self.n - self.excluded

    @property
    def score(self) -> float | None:
        """`passed / scored`, or None when no case could be scored (an empty or all-error run)."""
        return self.passed / self.scored if self.scored else None


def summarize(results: Iterable[CaseResult], task: Task = MATH) -> Summary:
    """Count outcomes and reasons; every tag of `task` appears in `failure_counts`, zero or not."""
    return summarize_outcomes(((result.outcome, result.reason) for result in results), task)


def summarize_outcomes(keys: Iterable[tuple[str, str]], task: Task = MATH) -> Summary:
    """`summarize` from `(outcome, reason)` pairs alone."""
    return summarize_counts(Counter(keys), task)


def summarize_counts(pairs: Mapping[tuple[str, str], int], task: Task = MATH) -> Summary:
    """`summarize` from how many results have each `(outcome, reason)`: what a run keeps."""
    outcomes: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    by_outcome: dict[str, Counter[str]] = {}
    n = 0
    for (outcome, reason), count in pairs.items():
        n += count
        outcomes[outcome] += count
        reasons[reason] += count
        by_outcome.setdefault(outcome, Counter())[reason] += count
    order = [PASS, *task.tags]
    return Summary(
        n=n,
        passed=outcomes[PASS],
        failure_counts={tag: outcomes[tag] for tag in task.tags},
        reason_counts=dict(sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))),
        reasons_by_outcome={
            name: dict(sorted(by_outcome[name].items(), key=lambda kv: (-kv[1], kv[0])))
            for name in order
            if name in by_outcome
        },
        excluded_tags=task.excluded,
    )
