"""Worker side: raw input lines parsed, validated, graded and serialised as results-file
lines, in a worker process or (`workers=0`) in this one.
"""

from __future__ import annotations

import os
import time
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any

import orjson

from rewardkit.evaluation.inputs.blocks import FileSpan, RawBlock, TaskSizer
from rewardkit.evaluation.inputs.cases import (
    DEFAULT_MAX_LINE_BYTES,
    DecidedCase,
    EvalInputError,
    FieldNames,
    MathCase,
    line_too_long,
    malformed_line_case,
    parse_case_line,
)
from rewardkit.evaluation.inputs.file import InputRef
from rewardkit.evaluation.scoring import LINE_ENCODER, PASS, CaseResult
from rewardkit.evaluation.worker.batch import OutcomeKey, ResultBatch
from rewardkit.evaluation.worker.grading import (
    COLD_GUARD,
    SYMBOLIC_MODULE,
    ColdWorker,
    GradeOptions,
    Grader,
    LazySymbolicWorkers,
    decided_to_result,
    default_grader,
    grade_case,
    grader_error_result,
    verdict_to_result,
)
from rewardkit.runtime.define.failures import FailureTag

FRAGMENT_CACHE_SIZE = 1 << 16
"""Serialised verdicts kept per worker (a few MB at most); the cache is emptied when full."""


@dataclass(frozen=True)
class LineSettings:
    """What a worker needs to turn raw lines into results: where they come from and how to grade."""

    path: str
    fields: FieldNames
    options: GradeOptions
    skip_bad: bool
    keep_responses: bool
    sandbox: bool = False
    grader: Grader | None = None
    source: InputRef | None = None
    """The run's input file, for spans of it given by position."""
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES


def grade_blocks_in_process(
    blocks: Iterable[RawBlock | FileSpan | list[bytes]],
    settings: LineSettings,
    done_ids: set[str],
    sizer: TaskSizer | None = None,
) -> Iterator[ResultBatch]:
    """Grade raw blocks in this process (`--workers 0`; `settings.sandbox` should be True, so
    the grader's own process enforces the budget). Lists of lines (from `line_lists`) are
    numbered here, in order; their size and grading time go to `sizer`. The grader's symbolic
    workers start with the first block (none for an empty input). A malformed line raises
    `EvalInputError` after the batch of the lines before it."""
    grader: LineGrader | None = None
    symbolic = LazySymbolicWorkers(settings.grader) if settings.sandbox else None
    next_line = 1
    try:
        for block in blocks:
            if grader is None:
                grader = LineGrader(settings, done_ids)
            started = time.perf_counter()
            nbytes = 0
            if isinstance(block, list):
                nbytes = sum(map(len, block))
                block, next_line = (next_line, block), next_line + len(block)
            if symbolic is None:
                batch = grader.grade_block(block)
            else:
                batch = yield from _grade_block_lazily(grader, block, symbolic)
            if sizer is not None:
                sizer.record(nbytes, time.perf_counter() - started)
            yield batch
            if batch.interrupted is not None:
                raise batch.interrupted
            if batch.error is not None:
                line, reason = batch.error
                raise EvalInputError(reason, path=settings.path, line=line)
    finally:
        if grader is not None:
            grader.close()


def _grade_block_lazily(
    grader: LineGrader,
    block: RawBlock | FileSpan | tuple[int, list[bytes]],
    symbolic: LazySymbolicWorkers,
) -> Generator[ResultBatch, None, ResultBatch]:
    """Grade `block` in this process, starting the symbolic workers at the first case that
    needs them (`LazySymbolicWorkers`): the cases before it are yielded as a batch of their
    own, and the block is graded on from that case with `sandbox=True`."""
    grader.kwargs["sandbox"] = symbolic.sandbox
    with symbolic.guarded():
        batch = grader.grade_block(block)
    if batch.resume_at is None:
        return batch
    first, raws = grader._block_lines(block)
    rest = (first + batch.resume_at, raws[batch.resume_at :])
    batch.resume_at = None
    yield batch
    symbolic.start()
    grader.kwargs["sandbox"] = True
    return grader.grade_block(rest)


def _tag_value(tag: Any) -> str:
    return tag.value if isinstance(tag, FailureTag) else FailureTag(tag).value


class LineGrader:
    """Worker side: parse, validate, grade and serialise raw lines (`grade_lines` per chunk)."""

    def __init__(self, settings: LineSettings, done_ids: frozenset[str] | set[str]) -> None:
        self.settings = settings
        self.done_ids = done_ids
        self.grade = settings.grader or default_grader()
        fields = settings.fields
        self.id_field = fields.id
        self.response_field = fields.response
        self.gold_fields = fields.gold
        self.error_field = fields.error
        self.descriptor: int | None = None
        """The input file, kept open across spans (a worker reads many spans of one file)."""
        self.fragments: dict[tuple[Any, ...], tuple[OutcomeKey, str]] = {}
        options = settings.options
        self.kwargs = {
            "policy": options.policy,
            "extract": options.extract,
            "timeout": options.timeout,
            "sandbox": settings.sandbox,
        }

    def grade_block(
        self, block: RawBlock | FileSpan | tuple[int, list[bytes]], on_case: Any = None
    ) -> ResultBatch:
        """Grade the lines of a block (bytes, a position in the file, or a list of lines);
        `on_case(offset)` is called before each case with its line's offset in the block (the
        parent's deadline watch)."""
        batch = ResultBatch(responses=[] if self.settings.keep_responses else None)
        ids, lines, texts = batch.ids, batch.lines, batch.texts
        counts = batch.counts
        responses = batch.responses
        done_ids = self.done_ids
        grade = self.grade
        kwargs = self.kwargs
        encode_text = encode_basestring
        perf_counter = time.perf_counter
        cold_guard = COLD_GUARD
        seconds_total = 0.0
        max_line_bytes = self.settings.max_line_bytes
        try:
            first, raws = self._block_lines(block)
        except EvalInputError as exc:  # a spawned worker found another file at the input's path
            batch.error = (block[0], exc.reason)
            return batch
        offset = 0
        try:
            for offset, raw in enumerate(raws):
                if not raw or raw.isspace():
                    continue
                if on_case is not None:
                    on_case(offset)
                number = first + offset
                if len(raw) > max_line_bytes and len(raw.rstrip(b"\n")) > max_line_bytes:
                    batch.error = (number, line_too_long("", number, max_line_bytes).reason)
                    break
                record = self._fast_record(raw)
                if record is None:  # anything unusual goes through the full, message-giving parser
                    if not self._grade_unusual_line(raw, number, batch):
                        break
                    continue
                case_id, response, gold = record
                if case_id in done_ids:
                    batch.skipped.append((case_id, number, response))
                    continue
                started = perf_counter()
                try:
                    verdict = grade(response, gold, **kwargs)
                except Exception as exc:  # a grader bug: HARNESS_ERROR, as `grade_case` makes it
                    verdict = exc
                seconds = perf_counter() - started
                if cold_guard.fired:  # (a grader that swallowed `ColdWorker`)
                    raise ColdWorker(SYMBOLIC_MODULE)
                line_record = (
                    None if isinstance(verdict, Exception) else self._verdict_fragment(verdict)
                )
                if line_record is None:  # unusual: built by the general, checking functions
                    case = MathCase(id=case_id, response=response, gold=gold, line=number)
                    result = (
                        grader_error_result(case, verdict, seconds)
                        if isinstance(verdict, Exception)
                        else verdict_to_result(case, verdict, seconds=seconds)
                    )
                    self._add_result(batch, result, number)
                    if responses is not None:
                        responses[-1] = response
                    seconds_total += result.seconds
                    continue
                ids.append(case_id)
                lines.append(number)
                counts[line_record[0]] += 1
                texts.append(
                    f'{{"id": {encode_text(case_id)}, {line_record[1]}, "line": {number}, '
                    f'"seconds": {seconds:.6f}}}\n'
                )
                seconds_total += seconds
                if responses is not None:
                    responses.append(response)
        except (KeyboardInterrupt, ColdWorker) as stop:  # keep the cases done before it
            batch.keep_complete(stop, offset)
        batch.grading_seconds += seconds_total
        return batch

    def _block_lines(
        self, block: RawBlock | FileSpan | tuple[int, list[bytes]]
    ) -> tuple[int, list[bytes]]:
        """The number of a block's first line and its lines (bytes, a span of the file read
        here, or lines already split)."""
        if isinstance(block[1], list):
            return block  # type: ignore[return-value]
        if len(block) == 3:  # a span of the file, read here
            first, offset, length = block  # type: ignore[misc]
            return first, self._span_lines(offset, length)
        first, data = block  # type: ignore[misc]
        return first, data.split(b"\n")

    def _grade_unusual_line(self, raw: bytes, number: int, batch: ResultBatch) -> bool:
        """A line the fast check did not take: parsed by `parse_case_line`, which names what
        is wrong, then graded (or decided) into `batch`. False when it is malformed and the
        run stops there (`batch.error`)."""
        settings = self.settings
        try:
            case = parse_case_line(
                raw.decode("utf-8"), path=settings.path, line=number, fields=settings.fields
            )
        except (UnicodeDecodeError, EvalInputError) as exc:
            reason = (
                f"not UTF-8 text ({exc.reason})"
                if isinstance(exc, UnicodeDecodeError)
                else exc.reason
            )
            if not settings.skip_bad:
                batch.error = (number, reason)
                return False
            case_id = getattr(exc, "case_id", None)
            case = malformed_line_case(settings.path, number, reason, case_id)
        if case.id in self.done_ids:
            batch.skipped.append((case.id, number, getattr(case, "response", None)))
            return True
        if isinstance(case, DecidedCase):
            result = decided_to_result(case)
        else:
            result = grade_case(
                case, settings.options, sandbox=self.kwargs["sandbox"], grader=settings.grader
            )
        self._add_result(batch, result, number)
        batch.grading_seconds += result.seconds
        return True

    @staticmethod
    def _add_result(batch: ResultBatch, result: CaseResult, number: int) -> None:
        """Add a result built by the general functions (its line serialised by `to_line`)."""
        batch.ids.append(result.id)
        batch.lines.append(number)
        batch.counts[result.outcome, result.reason] += 1
        batch.texts.append(result.to_line(include_response=False))
        if batch.responses is not None:
            batch.responses.append(result.response)

    def _span_lines(self, offset: int, length: int) -> list[bytes]:
        """The lines of `length` bytes of the run's input from `offset` (a span ends at a line
        boundary or at the end of the file), read from the file the run opened."""
        if self.descriptor is None:
            source = self.settings.source
            self.descriptor = (
                source.open_descriptor()
                if source is not None
                else os.open(self.settings.path, os.O_RDONLY | os.O_CLOEXEC)
            )
        return os.pread(self.descriptor, length, offset).split(b"\n")

    def close(self) -> None:
        """Close the input file, if this process had to open it (not the run's own)."""
        source, descriptor = self.settings.source, self.descriptor
        self.descriptor = None
        if descriptor is not None and (source is None or descriptor != source.fd):
            os.close(descriptor)

    def _fast_record(self, raw: bytes) -> tuple[str, str, str] | None:
        """`(id, response, gold)` of an ordinary line, or None to take the full parser's path.

        orjson refuses a few lines `json` reads (NaN, lone surrogates, a byte-order mark) and
        reads big integers as floats; such lines, and ids or golds that are not strings, go to
        `parse_case_line`, which reads them as `json` does and names what is wrong."""
        try:
            record = orjson.loads(raw)
        except ValueError:  # not JSON, or not UTF-8 (orjson.JSONDecodeError is a ValueError)
            return None
        if type(record) is not dict:
            return None
        case_id = record.get(self.id_field)
        response = record.get(self.response_field)
        for name in self.gold_fields:
            if name in record:
                gold = record[name]
                break
        else:
            return None
        error = record.get(self.error_field)
        if (
            type(case_id) is not str
            or not case_id
            or type(response) is not str
            or type(gold) is not str
            or not (error is None or error == "")
        ):
            return None
        return case_id, response, gold

    def _verdict_fragment(self, verdict: Any) -> tuple[OutcomeKey, str] | None:
        """`((outcome, reason), '"passed": ..., "tag": ..., "detail": {...}')` of a well-formed
        verdict, as `verdict_to_result` and `CaseResult.to_line` would write it; None when the
        verdict needs that function's checks (an inconsistent tag, an error in its detail).

        Verdicts repeat (the same answer against the same gold), so the serialised middle of the
        line is cached by the verdict's content: a line then costs one id encoding."""
        tag = verdict.tag
        raw_detail = verdict.detail
        key = (
            verdict.correct,
            tag,
            verdict.parsed_answer,
            verdict.expected,
            verdict.reason,
            tuple(raw_detail.items()) if raw_detail else (),
        )
        cached = self.fragments.get(key)
        if cached is not None:
            return cached
        if verdict.correct == (tag is not None):
            return None
        if raw_detail and "error" in raw_detail:
            return None
        detail: dict[str, str | None] = {
            "parsed_answer": verdict.parsed_answer,
            "expected": verdict.expected,
            "reason": verdict.reason or "unknown",
            "error": None,
        }
        if raw_detail:
            for name, value in raw_detail.items():
                detail[name] = None if value is None else str(value)
        tag_text = None if tag is None else _tag_value(tag)
        encode = LINE_ENCODER.encode
        fragment = (
            f'"passed": {encode(tag_text is None)}, "tag": {encode(tag_text)}, '
            f'"detail": {encode(detail)}'
        )
        if len(self.fragments) >= FRAGMENT_CACHE_SIZE:
            self.fragments.clear()
        self.fragments[key] = result = ((tag_text or PASS, detail["reason"] or "unknown"), fragment)
        return result
