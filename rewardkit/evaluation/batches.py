"""Chunks of results as the main process handles them, and the worker side that produces them
from raw input lines.

The main process of a run with worker processes must do almost nothing per case, or it becomes
the bottleneck (a cached grade takes ~12 us). So it reads raw lines (bytes) and ships them in
chunks with their line numbers; workers parse and validate each line, grade it and serialise
its results-file line; the main process gets back a `ResultBatch` of parallel lists (ids, line
numbers, results-file lines) and the count of each (outcome, reason), appends the lines with
one write and adds up the counts. `CaseResult` objects are built only when someone asks for them.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass, field
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import IO, Any

import orjson

from rewardkit.evaluation.cases import (
    DEFAULT_MAX_LINE_BYTES,
    DecidedCase,
    EvalInputError,
    FieldNames,
    MathCase,
    fast_loads,
    line_too_long,
    malformed_line_case,
    numbered_lines,
    parse_case_line,
)
from rewardkit.evaluation.grading import (
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
from rewardkit.evaluation.input_file import InputRef
from rewardkit.evaluation.scoring import LINE_ENCODER, PASS, CaseResult
from rewardkit.failures import FailureTag

FRAGMENT_CACHE_SIZE = 1 << 16
"""Serialised verdicts kept per worker (a few MB at most); the cache is emptied when full."""

RawBlock = tuple[int, bytes]
"""Whole input lines as read by the main process: the 1-based number of the first, and the bytes."""

FileSpan = tuple[int, int, int]
"""Whole lines of the input file by position: number of the first line, byte offset, length.
Workers read the bytes themselves, so they never pass through the main process."""

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


class TaskSizer:
    """How many bytes of input go into the next task: few at first, so that the first results
    reach the results file within milliseconds of the workers' start, then about
    `target_seconds` of a worker's time each, from the bytes per second of the tasks that
    finished. Small tasks stream results and lose little to an interrupt; each task also costs
    the main process ~0.3 ms, so fast (cached) grading gets bigger ones, up to `maximum`.

    The main loop calls `record`, the thread that cuts the input calls `size`."""

    FIRST = 16 << 10
    MINIMUM = 4 << 10
    TARGET_SECONDS = 0.1
    """Half of the ~0.2 s a batch may take, leaving room for a slower stretch of input."""

    def __init__(
        self, maximum: int = 1 << 20, *, first: int = FIRST, target_seconds: float = TARGET_SECONDS
    ) -> None:
        self.maximum = max(self.MINIMUM, maximum)
        self.target_seconds = target_seconds
        self._size = max(self.MINIMUM, min(first, self.maximum))
        self._cost: float | None = None
        """Seconds per byte, averaged: a slow stretch shrinks the tasks at once (the average
        of costs is dominated by the slow one), a fast one grows them back over a few tasks."""

    def size(self) -> int:
        """Bytes for the next task."""
        return self._size

    def record(self, nbytes: int, seconds: float) -> None:
        """A task of `nbytes` kept a worker busy for `seconds`."""
        if nbytes <= 0 or seconds <= 0:
            return
        cost = seconds / nbytes
        self._cost = cost if self._cost is None else (self._cost + cost) / 2
        self._size = int(min(self.maximum, max(self.MINIMUM, self.target_seconds / self._cost)))


def read_blocks(
    handle: IO[bytes],
    *,
    sizer: TaskSizer,
    path: str,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    lines_per_block: int | None = None,
    limit: int | None = None,
) -> Iterator[RawBlock]:
    """Yield a binary stream as blocks of whole lines, each with the number of its first line.

    This runs in the main process, where every microsecond per case is one every worker waits
    for, so it does not look at lines: it reads `sizer.size()` bytes and cuts after the last
    newline. A line longer than a read is carried as a list of pieces, joined once it ends
    (linear in its length, from a pipe too), and refused (`EvalInputError`) once it is longer
    than `max_line_bytes`. Only `lines_per_block` or `limit` (which count cases, i.e.
    non-blank lines, as `--limit` does) make it go line by line.
    """
    if lines_per_block is not None or limit is not None:
        lines = numbered_lines(handle, path=path, max_bytes=max_line_bytes)
        yield from _counted_blocks(lines, lines_per_block or 256, limit)
        return
    number = 1
    carry: list[bytes] = []
    carried = 0
    while data := handle.read(sizer.size()):
        end = data.find(b"\n")
        if carried + (len(data) if end < 0 else end) > max_line_bytes:
            raise line_too_long(path, number, max_line_bytes)
        if end < 0:
            carry.append(data)
            carried += len(data)
            continue
        cut = data.rfind(b"\n") + 1
        block = b"".join((*carry, data[:cut])) if carry else data[:cut]
        yield number, block
        number += block.count(b"\n")
        carry = [data[cut:]] if cut < len(data) else []
        carried = len(data) - cut
    if carry:
        yield number, b"".join(carry)


def line_lists(
    handle: IO[bytes], *, sizer: TaskSizer, path: str, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> Iterator[list[bytes]]:
    """A binary stream as lists of whole lines (newline included) of about `sizer.size()`
    bytes. Unnumbered: grading in this process numbers lines as it goes. One pass over the
    input, split in C by a bounded `readline` (`numbered_lines`'s rule: a line longer than
    `max_line_bytes` is refused as soon as that much of it is read)."""
    readline = handle.readline
    limit = max_line_bytes + 1
    number = 0
    while True:
        budget = sizer.size()
        lines: list[bytes] = []
        total = 0
        while total < budget and (raw := readline(limit)):
            if len(raw) == limit and raw[-1] != 0x0A:
                raise line_too_long(path, number + len(lines) + 1, max_line_bytes)
            lines.append(raw)
            total += len(raw)
        if not lines:
            return
        number += len(lines)
        yield lines


def read_spans(
    descriptor: int, *, sizer: TaskSizer, path: str, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> Iterator[FileSpan]:
    """Like `read_blocks` without a limit, but for a regular file, and yielding positions in
    it rather than bytes: the main process reads each block once to cut it after a newline
    and count its lines, and never pickles or sends input text (workers read their spans
    themselves). A line longer than a block doubles the read, up to `max_line_bytes`."""
    offset = 0
    number = 1
    size = sizer.size()
    while True:
        data = os.pread(descriptor, size, offset)
        if not data:
            return
        cut = data.rfind(b"\n") + 1
        if cut == 0 and len(data) == size:  # a line longer than the block: read more
            if size > max_line_bytes:
                raise line_too_long(path, number, max_line_bytes)
            size = min(2 * size, max_line_bytes + 1)
            continue
        cut = cut or len(data)  # the last line, without a newline
        yield number, offset, cut
        number += data.count(b"\n", 0, cut)
        offset += cut
        size = sizer.size()


def _counted_blocks(
    lines: Iterable[tuple[int, bytes]], cases_per_block: int, limit: int | None
) -> Iterator[RawBlock]:
    first = 1
    block: list[bytes] = []
    cases = 0
    total = 0
    for number, raw in lines:
        if limit is not None and total >= limit:
            break
        if not block:
            first = number
        block.append(raw)
        if raw.isspace():
            continue
        cases += 1
        total += 1
        if cases >= cases_per_block:
            yield first, b"".join(block)
            block, cases = [], 0
    if cases:
        yield first, b"".join(block)


def resolve_block(block: RawBlock | FileSpan, source: InputRef | None) -> RawBlock:
    """The bytes of a block, reading them from the run's input if it is given by position."""
    if len(block) == 2:
        return block  # type: ignore[return-value]
    assert source is not None
    first, offset, length = block  # type: ignore[misc]
    descriptor = source.open_descriptor()
    try:
        return first, os.pread(descriptor, length, offset)
    finally:
        if descriptor != source.fd:
            os.close(descriptor)


def block_lines(block: RawBlock) -> list[tuple[int, bytes]]:
    """The non-blank lines of a block with their line numbers."""
    first, data = block
    return [
        (first + offset, raw)
        for offset, raw in enumerate(data.split(b"\n"))
        if raw and not raw.isspace()
    ]


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
