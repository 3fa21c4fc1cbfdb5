"""`run_math_eval`: the batch API behind `rewardkit eval math`, importable from training loops.

It reads (or generates) cases, skips those already in `output` when resuming, grades the rest
with the chosen executor, appends each result to `output` as it arrives, and returns the
results in input order with their summary and report.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import itertools
import json
import os
import stat
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import IO, Any

from rewardkit._version import __version__
from rewardkit.evaluation.batches import (
    FileSpan,
    LineSettings,
    RawBlock,
    ResultBatch,
    TaskSizer,
    batch_of,
    grade_blocks_in_process,
    line_lists,
    malformed_line_case,
    read_blocks,
    read_spans,
)
from rewardkit.evaluation.cases import (
    DecidedCase,
    EvalInputError,
    FieldNames,
    MathCase,
    fast_loads,
    parse_case_line,
    read_cases,
)
from rewardkit.evaluation.errors import RAY_EXTRA_MISSING, EvalConfigError
from rewardkit.evaluation.generation import ChatClient, ChatEndpoint, generate_cases
from rewardkit.evaluation.grading import GradeOptions, Grader, decided_to_result
from rewardkit.evaluation.html_report import render_html, write_html_report
from rewardkit.evaluation.output_files import (
    check_distinct_files,
    check_writable,
    encode_text,
    has_content,
    write_atomically,
)
from rewardkit.evaluation.report import Timings, build_report, write_json_report
from rewardkit.evaluation.results_file import (
    InputFingerprint,
    ResultsFile,
    ResultsWriter,
    check_resumable,
    read_results,
    results_header,
)
from rewardkit.evaluation.scoring import LINE_ENCODER, CaseResult, Summary, summarize_counts
from rewardkit.evaluation.workers import (
    DEFAULT_WORKER_MEMORY,
    InProcessExecutor,
    ProcessExecutor,
    capped_workers,
    chunk_cases,
)

SAMPLE_NAME = "math_sample.jsonl"
POLICIES = ("lenient", "strict")
EXTRACT_MODES = ("boxed", "auto")
EXECUTORS = ("local", "ray")


@dataclass(frozen=True)
class EvalRun:
    """What a run produced: its summary and report, and every result (resumed ones included)
    in input order, built when first asked for (a run's main process keeps only counts)."""

    summary: Summary
    report: dict[str, Any]
    timings: Timings
    load_results: Callable[[], list[CaseResult]] = field(repr=False, compare=False)

    @functools.cached_property
    def results(self) -> list[CaseResult]:
        """Every result in input order."""
        return self.load_results()

    @property
    def score(self) -> float | None:
        """`passed / (cases - ADAPTER_ERROR - HARNESS_ERROR)`."""
        return self.summary.score


def sample_path() -> Path:
    """The shipped sample of 55 responses (`rewardkit eval math` with no file)."""
    return Path(str(resources.files("rewardkit.evaluation").joinpath("data", SAMPLE_NAME)))


def _records_to_cases(
    records: Iterable[Mapping[str, Any] | MathCase], fields: FieldNames, need_response: bool
) -> Iterator[MathCase | DecidedCase]:

    seen: set[str] = set()
    for number, record in enumerate(records, start=1):
        if isinstance(record, (MathCase, DecidedCase)):
            case = record
        else:
            case = parse_case_line(
                json.dumps(record),
                path="<records>",
                line=number,
                fields=fields,
                need_response=need_response,
            )
        if case.id in seen:
            raise EvalInputError(f"duplicate id {case.id!r}", path="<records>", line=number)
        seen.add(case.id)
        yield case


def _count_cases(path: Path, limit: int | None) -> int | None:
    """Non-blank lines of a regular file (None for a pipe, which cannot be read twice)."""
    try:
        with open(path, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return None
            count = sum(1 for raw in handle if raw.strip())
    except OSError:
        return None
    return min(count, limit) if limit is not None else count


@dataclass(frozen=True)
class _RunOptions:
    """The options of one run as `run_math_eval` received them (`_validate` checks them)."""

    grading: GradeOptions
    fields: FieldNames
    limit: int | None
    skip_bad: bool
    workers: int | None
    executor: str
    ray_address: str | None
    output: str | Path | None
    resume: bool
    overwrite: bool
    force_resume: bool
    report: str | Path | None
    html: str | Path | None
    generation: ChatEndpoint | None
    concurrency: int
    grader: Grader | None
    chunk_size: int | None
    on_result: Callable[[CaseResult], None] | None
    progress: bool
    worker_memory: int | None

    @property
    def include_response(self) -> bool:
        """Responses read from an input file stay out of the results file (they are most of its
        size and of the cost of writing it); generated ones exist nowhere else, so they go in."""
        return self.generation is not None

    @property
    def keep_responses(self) -> bool:
        """Workers send responses back only when this process needs them."""
        return self.html is not None or self.on_result is not None

    def executor_text(self, workers: int) -> str:
        """Where grading ran, for the report and the summary table."""
        if self.executor == "ray":
            return f"ray executor{f' at {self.ray_address}' if self.ray_address else ''}"
        if workers == 0:
            return "in-process"
        return f"{workers} worker process{'es' if workers > 1 else ''}"


def _validate(options: _RunOptions) -> None:
    """Refuse options that are out of range or contradict each other, before any file is opened."""
    grading = options.grading
    if grading.policy not in POLICIES:
        raise EvalConfigError(
            f"policy must be one of {', '.join(POLICIES)}, got {grading.policy!r}"
        )
    if grading.extract not in EXTRACT_MODES:
        raise EvalConfigError(
            f"extract must be one of {', '.join(EXTRACT_MODES)}, got {grading.extract!r}"
        )
    if not grading.timeout > 0:
        raise EvalConfigError(
            f"timeout must be a positive number of seconds, got {grading.timeout!r}"
        )
    workers, executor = options.workers, options.executor
    if workers is not None and workers < 0:
        raise EvalConfigError(f"workers must be >= 0 (0 grades in this process), got {workers}")
    if executor not in EXECUTORS:
        raise EvalConfigError(f"executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    if executor == "ray" and importlib.util.find_spec("ray") is None:
        # before any output is opened: a missing extra is a usage error, not a traceback mid-run
        raise EvalConfigError(RAY_EXTRA_MISSING)
    if options.resume and options.output is None:
        raise EvalConfigError("resume needs an output file (--output) to know which cases are done")
    if options.overwrite and options.output is None:
        raise EvalConfigError("overwrite needs an output file (--output)")
    if options.resume and options.overwrite:
        raise EvalConfigError(
            "--resume continues the results file and --overwrite replaces it: choose one"
        )
    if options.force_resume and not options.resume:
        raise EvalConfigError("--force-resume goes with --resume")
    if options.limit is not None and options.limit < 0:
        raise EvalConfigError(f"limit must be >= 0, got {options.limit}")
    if options.worker_memory is not None and options.worker_memory < 0:
        raise EvalConfigError(f"worker memory must be >= 0 bytes, got {options.worker_memory}")


def _check_outputs(input_path: Path | None, options: _RunOptions) -> None:
    """Before any grading: no two of input, results, report and HTML report are one file; an
    existing results file is continued or replaced only when asked; every output is writable."""
    output, report, html = options.output, options.report, options.html
    check_distinct_files(
        {"input": input_path, "results file": output, "JSON report": report, "HTML report": html}
    )
    if output is not None and not options.resume and not options.overwrite and has_content(output):
        raise EvalConfigError(
            f"the results file {output} exists and is not empty: add --resume to continue "
            "that run, or --overwrite to replace it"
        )
    for what, path in (("results file", output), ("JSON report", report), ("HTML report", html)):
        if path is not None:
            check_writable(path, what=what)


def _grader_name(grader: Grader | None) -> str:
    if grader is None:
        return "rewardkit.math.grade"
    return f"{getattr(grader, '__module__', '?')}.{getattr(grader, '__qualname__', repr(grader))}"


def _grading_config(options: _RunOptions) -> dict[str, Any]:
    """The settings that decide verdicts: a resumed run must use the same ones."""
    fields, generation = options.fields, options.generation
    used_fields: dict[str, Any] = {
        "id": fields.id,
        "response": fields.response,
        "gold": list(fields.gold),
        "error": fields.error,
    }
    if generation is not None:
        used_fields["question"] = fields.question
    return {
        "task": "math",
        "policy": options.grading.policy,
        "extract": options.grading.extract,
        "timeout": options.grading.timeout,
        "fields": used_fields,
        "grader": _grader_name(options.grader),
        "generation": None if generation is None else generation.verdict_settings(),
    }


@dataclass
class _Source:
    """What a run grades: an input file (`path`) or records given as Python objects, with the
    name reports show, the input's identity and the settings that decide verdicts."""

    path: Path | None
    records: list[Any] | None
    name: str
    fingerprint: InputFingerprint
    grading: dict[str, Any]
    workers: int
    """Worker processes (0: this process), after capping at the cores."""
    raw_lines: bool
    """Workers read raw lines of the file (the fast path) rather than parsed cases."""

    def count_cases(self, limit: int | None) -> int | None:
        """The cases this run would grade, or None when that cannot be known ahead (a pipe)."""
        if self.path is None:
            return len(self.records or [])
        return _count_cases(self.path, limit)


@dataclass
class _Resumed:
    """What an existing results file already holds (nothing unless resuming)."""

    existing: ResultsFile
    previous: list[CaseResult]
    done_ids: set[str]
    total: int | None
    """Cases left to grade, when known (the progress bar's total)."""
    nothing_left: bool
    """Every case of the input is in the results already: nothing to start at all."""


@dataclass
class _Written:
    """What the grading loop wrote: the new batches, responses of resumed cases (for the
    HTML report), the duplicate-id ledger, and when and how long."""

    batches: list[ResultBatch]
    resumed_responses: dict[str, str]
    ledger: _IdLedger
    started_at: str
    wall_seconds: float


def run_math_eval(
    data: str | Path | Iterable[Mapping[str, Any] | MathCase] | None = None,
    *,
    policy: str = "lenient",
    extract: str = "boxed",
    timeout: float = 1.0,
    fields: FieldNames | None = None,
    limit: int | None = None,
    skip_bad: bool = False,
    workers: int | None = None,
    executor: str = "local",
    ray_address: str | None = None,
    output: str | Path | None = None,
    resume: bool = False,
    overwrite: bool = False,
    force_resume: bool = False,
    report: str | Path | None = None,
    html: str | Path | None = None,
    generation: ChatEndpoint | None = None,
    concurrency: int = 8,
    grader: Grader | None = None,
    chunk_size: int | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
    progress: bool = False,
    worker_memory: int | None = DEFAULT_WORKER_MEMORY,
) -> EvalRun:
    """Grade math responses against gold answers and return results, summary and report.

    `data` is a JSONL path, an iterable of records (dicts) or `MathCase`s, or None for the
    shipped sample. `workers=0` grades in this process (the grader's sandbox enforces the
    budget); `workers=N` uses N killable worker processes (default: the cores; more are capped
    at the cores, with a warning), each allowed `worker_memory` bytes of address space beyond
    its start (None or 0: no cap). `generation` asks a chat endpoint for each problem's
    response first. `grader` replaces `rewardkit.math.grade` (same signature; module-level so
    worker processes can import it).

    An existing, non-empty `output` is refused unless `resume` (continue it; refused in turn if
    it was written for another input or other grading options, unless `force_resume`) or
    `overwrite`. Raises `EvalInputError` for unreadable or malformed input, `EvalConfigError`
    for bad or contradictory options, `EvalOutputError` when an output cannot be written, and
    `Interrupted` (a `KeyboardInterrupt`) when a signal stopped it after writing what was graded.
    """
    options = _RunOptions(
        grading=GradeOptions(policy=policy, extract=extract, timeout=timeout),
        fields=fields or FieldNames(),
        limit=limit,
        skip_bad=skip_bad,
        workers=workers,
        executor=executor,
        ray_address=ray_address,
        output=output,
        resume=resume,
        overwrite=overwrite,
        force_resume=force_resume,
        report=report,
        html=html,
        generation=generation,
        concurrency=concurrency,
        grader=grader,
        chunk_size=chunk_size,
        on_result=on_result,
        progress=progress,
        worker_memory=worker_memory,
    )
    _validate(options)
    source = _open(data, options)
    resumed = _resume(source, options)
    written = _write(source, options, resumed)
    return _summarise(source, options, resumed, written)


def _open(
    data: str | Path | Iterable[Mapping[str, Any] | MathCase] | None, options: _RunOptions
) -> _Source:
    """Name the input, check every output before any grading, and start hashing the input."""
    if data is None:
        data = sample_path()
    path = Path(data) if isinstance(data, (str, Path)) else None
    records: list[Any] | None = None
    if path is None:
        records = list(data)  # type: ignore[arg-type]
        if options.limit is not None:
            records = records[: options.limit]
    workers, capped = capped_workers(options.workers) if options.executor == "local" else (0, None)
    if capped is not None:
        warnings.warn(capped, RuntimeWarning, stacklevel=3)
    _check_outputs(path, options)
    name = str(path) if path is not None else "<records>"
    # (the name first: locating the packaged sample costs ~3 ms of importlib.resources)
    if path is not None and path.name == SAMPLE_NAME and path == sample_path():
        name = f"<sample {SAMPLE_NAME}>"
    fingerprint = (
        InputFingerprint.of_file(path, name)
        if path is not None
        else InputFingerprint.of_records(records or [])
    )
    return _Source(
        path=path,
        records=records,
        name=name,
        fingerprint=fingerprint,
        grading=_grading_config(options),
        workers=workers,
        raw_lines=path is not None and options.generation is None and options.executor == "local",
    )


def _resume(source: _Source, options: _RunOptions) -> _Resumed:
    """Read the results already in `output` when resuming (refusing another run's), and work
    out what is left to grade."""
    existing = ResultsFile(None, [])
    if options.resume and options.output is not None:
        existing = read_results(options.output)
        if not options.force_resume:
            check_resumable(
                existing,
                path=options.output,
                fingerprint=source.fingerprint,
                grading=source.grading,
            )
        existing.repair(options.output)
    previous = existing.results
    done_ids = {result.id for result in previous}
    cases_in_input: int | None = None
    if options.progress or (previous and not options.force_resume):
        cases_in_input = source.count_cases(options.limit)
    # Resuming a run that is complete (same input, checked above): nothing to start at all.
    nothing_left = (
        bool(previous)
        and not options.force_resume
        and cases_in_input is not None
        and cases_in_input <= len(previous)
    )
    return _Resumed(
        existing=existing,
        previous=previous,
        done_ids=done_ids,
        total=None if cases_in_input is None else max(0, cases_in_input - len(done_ids)),
        nothing_left=nothing_left,
    )


def _grade(
    source: _Source,
    options: _RunOptions,
    resumed: _Resumed,
    input_handle: IO[bytes] | None,
    resumed_responses: dict[str, str],
) -> Iterable[ResultBatch]:
    """The run's results as batches, in completion order: raw lines of a file graded by the
    worker code, or parsed cases (records, generation, Ray). Responses of skipped (done)
    parsed cases go to `resumed_responses`."""
    if resumed.nothing_left:
        return ()
    if input_handle is not None:
        return _grade_raw_lines(source, options, resumed, input_handle)
    cases: Iterable[MathCase | DecidedCase]
    need_response = options.generation is None
    if source.path is not None:
        cases = read_cases(
            source.path,
            fields=options.fields,
            skip_bad=options.skip_bad,
            limit=options.limit,
            need_response=need_response,
        )
    else:
        cases = _records_to_cases(source.records or [], options.fields, need_response)
    if resumed.done_ids:
        cases = _skip_done(cases, resumed.done_ids, resumed_responses)
    if options.generation is not None:
        client = ChatClient(options.generation)
        cases = generate_cases(cases, client, concurrency=options.concurrency)
    return _grade_parsed(
        cases,
        options.grading,
        executor=options.executor,
        workers=source.workers,
        ray_address=options.ray_address,
        grader=options.grader,
        chunk_size=options.chunk_size,
        total=resumed.total,
        generating=options.generation is not None,
        include_response=options.include_response,
        worker_memory=options.worker_memory or None,
    )


def _grade_raw_lines(
    source: _Source, options: _RunOptions, resumed: _Resumed, handle: IO[bytes]
) -> Iterable[ResultBatch]:
    """Raw lines of the input file, parsed and graded by the worker code: in this process
    (`workers=0`) or in worker processes that read their spans of the file themselves."""
    assert source.path is not None
    workers = source.workers
    settings = LineSettings(
        path=str(source.path),
        fields=options.fields,
        options=options.grading,
        skip_bad=options.skip_bad,
        keep_responses=options.keep_responses,
        sandbox=workers == 0,
        grader=options.grader,
    )
    sizer = TaskSizer(_max_block_bytes(source.path, max(1, workers)))
    blocks = _input_blocks(handle, workers, options.chunk_size, options.limit, sizer)
    if workers == 0:
        return grade_blocks_in_process(blocks, settings, resumed.done_ids, sizer)
    plain = options.chunk_size is None and options.limit is None
    return ProcessExecutor(
        options.grading,
        workers=workers,
        grader=options.grader,
        include_response=False,
        line_settings=settings,
        done_ids=frozenset(resumed.done_ids),
        memory_headroom=options.worker_memory or None,
        sizer=sizer if plain else None,
    ).batches(blocks)


def _write(source: _Source, options: _RunOptions, resumed: _Resumed) -> _Written:
    """Grade, appending each batch to the results file as it arrives (the header first, when
    the file is new), feeding the progress bar and `on_result`, and checking ids for duplicates."""
    started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    started = time.perf_counter()
    written = _Written(
        batches=[],
        resumed_responses={},
        ledger=_IdLedger(
            path=source.name if source.raw_lines else None,
            skip_bad=options.skip_bad,
            done_ids=resumed.done_ids,
            include_response=options.include_response,
        ),
        started_at=started_at,
        wall_seconds=0.0,
    )
    with contextlib.ExitStack() as stack:
        handle = None
        if source.raw_lines and not resumed.nothing_left:
            assert source.path is not None
            handle = _open_input(source.path)
            stack.callback(handle.close)
        batches = _grade(source, options, resumed, handle, written.resumed_responses)
        writer = None
        if options.output is not None:
            writer = ResultsWriter(
                options.output,
                append=options.resume,
                header=_header_text(source) if resumed.existing.empty else None,
                include_response=options.include_response,
            )
            stack.callback(writer.close)
        advance = stack.enter_context(_progress_bar(resumed.total, enabled=options.progress))
        for batch in batches:
            _take_batch(batch, source, options, written, writer)
            advance(len(batch), batch.failed)
    written.wall_seconds = time.perf_counter() - started
    return written


def _take_batch(
    batch: ResultBatch,
    source: _Source,
    options: _RunOptions,
    written: _Written,
    writer: ResultsWriter | None,
) -> None:
    """One batch of results: check its ids, append its lines, keep it, tell `on_result`."""
    if source.raw_lines:
        written.ledger.check(batch, written.batches)
        for case_id, _line, response in batch.skipped:
            if response is not None:
                written.resumed_responses[case_id] = response
    if writer is not None and batch.texts:
        writer.write_text("".join(batch.texts))
    written.batches.append(batch)
    if options.on_result is not None:
        for result in batch.materialise():
            options.on_result(result)


def _header_text(source: _Source) -> Callable[[], str]:
    """The results file's header, built when first written (it waits for the input's hash)."""
    return functools.partial(results_header, source.fingerprint, source.grading, __version__)


def _summarise(
    source: _Source, options: _RunOptions, resumed: _Resumed, written: _Written
) -> EvalRun:
    """Count outcomes over resumed and new results, then write the JSON and HTML reports."""
    previous = _settle_duplicates(source, options, resumed, written)
    responses = written.resumed_responses
    previous = [
        result.with_response(responses[result.id])
        if result.response is None and result.id in responses
        else result
        for result in previous
    ]
    counts: Counter[tuple[str, str]] = Counter(
        (result.outcome, result.reason) for result in previous
    )
    for batch in written.batches:
        counts.update(batch.counts)
    summary = summarize_counts(counts)
    timings = Timings(
        wall_seconds=written.wall_seconds,
        grading_seconds=sum(batch.grading_seconds for batch in written.batches),
        new_cases=sum(len(batch) for batch in written.batches),
        resumed_cases=len(previous),
        started_at=written.started_at,
        finished_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )
    config = _report_config(source, options)

    def all_results() -> list[CaseResult]:
        new = itertools.chain.from_iterable(batch.materialise() for batch in written.batches)
        results = sorted([*previous, *new], key=_input_order)
        if source.path is not None and options.generation is None:
            results = _with_responses(results, source.path, options.fields)
        return results

    document = build_report(summary, config=config, timings=timings)
    document["timings"]["executor"] = options.executor_text(source.workers)
    if options.report is not None:
        write_json_report(document, options.report)
    run = EvalRun(summary=summary, report=document, timings=timings, load_results=all_results)
    if options.html is not None:
        page = render_html(
            run.results,
            summary,
            title=f"rewardkit eval math: {source.name}",
            config={**config, "fields": None},
            timings=document["timings"],
        )
        write_html_report(page, options.html)
    return run


def _settle_duplicates(
    source: _Source, options: _RunOptions, resumed: _Resumed, written: _Written
) -> list[CaseResult]:
    """The resumed results without those a late-found duplicate id superseded; the results file
    is rewritten without them too (rare: duplicate ids under `--skip-bad`)."""
    ledger = written.ledger
    if not ledger.superseded:
        return resumed.previous
    previous = ledger.drop_superseded(resumed.previous, written.batches)
    if options.output is not None:
        header = resumed.existing.header
        first_line = (
            _header_text(source)() if header is None else LINE_ENCODER.encode(header) + "\n"
        )
        _rewrite_results(
            options.output, first_line, previous, written.batches, options.include_response
        )
    return previous


def _report_config(source: _Source, options: _RunOptions) -> dict[str, Any]:
    """The report's `config`: what was graded and how (reproducible: no timings)."""
    grading, generation = options.grading, options.generation
    return {
        "task": "math",
        "input": source.name,
        "policy": grading.policy,
        "extract": grading.extract,
        "timeout": grading.timeout,
        "fields": source.grading["fields"],
        "limit": options.limit,
        "skip_bad": options.skip_bad,
        "generation": None if generation is None else generation.public_settings(),
        "rewardkit_version": __version__,
        "input_sha256": source.fingerprint.to_json()["sha256"],
    }


def _with_responses(results: list[CaseResult], path: Path, fields: FieldNames) -> list[CaseResult]:
    """Attach responses, read back from the input file by line number, to results graded from
    raw lines (workers do not send them back unless the run needs them)."""
    wanted = {r.line for r in results if r.response is None and r.line is not None}
    responses: dict[int, str] = {}
    try:
        with open(path, "rb") as handle:
            for number, raw in enumerate(handle, start=1):
                if number in wanted:
                    try:
                        record = fast_loads(raw)
                    except (ValueError, RecursionError):  # a malformed line (--skip-bad)
                        continue
                    response = record.get(fields.response) if isinstance(record, dict) else None
                    if isinstance(response, str):
                        responses[number] = response
    except OSError:
        return results
    return [
        r.with_response(responses[r.line]) if r.response is None and r.line in responses else r
        for r in results
    ]


def _open_input(path: Path) -> IO[bytes]:
    try:
        return open(path, "rb")
    except OSError as exc:
        raise EvalInputError(f"cannot read input: {exc.strerror or exc}", path=str(path)) from None


def _grade_parsed(
    source: Iterable[MathCase | DecidedCase],
    options: GradeOptions,
    *,
    executor: str,
    workers: int,
    ray_address: str | None,
    grader: Grader | None,
    chunk_size: int | None,
    total: int | None,
    generating: bool,
    include_response: bool,
    worker_memory: int | None,
) -> Iterator[ResultBatch]:
    """Grade already-parsed cases (records, generated responses, Ray, in-process) as batches."""
    if executor == "local" and workers >= 1:
        size = chunk_size or _chunk_size(total, workers, generating=generating)
        pool = ProcessExecutor(
            options,
            workers=workers,
            grader=grader,
            include_response=include_response,
            memory_headroom=worker_memory,
        )
        yield from pool.batches(chunk_cases(source, size))
        return
    results: Iterable[CaseResult]
    if executor == "ray":
        from rewardkit.evaluation.ray_executor import RayExecutor

        results = RayExecutor(
            options, address=ray_address, grader=grader, chunk_size=chunk_size or 16
        ).results(source)
    else:
        results = InProcessExecutor(options, grader=grader).results(source)
    for result in results:
        yield batch_of([result], include_response=include_response)


class _IdLedger:
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
            reason = f"duplicate id {case_id!r} (first on line {first})"
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


def _rewrite_results(
    output: str | Path,
    header_line: str,
    previous: list[CaseResult],
    batches: list[ResultBatch],
    include_response: bool,
) -> None:
    """Rewrite the results file without superseded results (after a late-found duplicate id)."""
    parts = [header_line]
    parts += [result.to_line(include_response=include_response) for result in previous]
    parts += ["".join(batch.texts) for batch in batches]
    write_atomically(output, encode_text("".join(parts)), what="results file")


def _input_blocks(
    handle: IO[bytes],
    workers: int,
    lines_per_block: int | None,
    limit: int | None,
    sizer: TaskSizer,
) -> Iterator[RawBlock | FileSpan | list[bytes]]:
    """The input as worker tasks: positions in a regular file (workers read the bytes), or
    the bytes themselves for a pipe or when lines must be counted (`--limit`, `chunk_size`).
    Graded in this process (`workers == 0`), the file is read once, as lists of lines."""
    plain = lines_per_block is None and limit is None
    if plain and workers == 0:
        return line_lists(handle, sizer=sizer)
    if plain and stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
        return read_spans(handle, sizer=sizer)
    return read_blocks(handle, sizer=sizer, lines_per_block=lines_per_block, limit=limit)


def _max_block_bytes(path: Path, workers: int) -> int:
    """The largest worker task, in bytes of input: about eight tasks per worker at least
    (balance at the end of a run), between 16 KiB and 1 MiB. Each task costs ~0.3 ms of the
    main process's CPU and a pause in its worker (pebble's messages, the results' pickling):
    a 256 KiB cap made that a quarter of the main process's work on a 16,000-case run of
    cached grades (measured: 95 vs 68 ms). `TaskSizer` keeps tasks to ~0.1 s of work below it."""
    try:
        size = path.stat().st_size
    except OSError:
        size = 0
    return max(16 << 10, min(1 << 20, size // (workers * 8)))


def _chunk_size(total: int | None, workers: int, *, generating: bool) -> int:
    """Cases per worker task: large enough that the ~80 us cost of a pool task and the parent's
    bookkeeping stay small next to ~10-100 us grades, small enough that every worker gets about
    eight chunks (balance at the end of a run). Generated cases go one by one, as they arrive."""
    if generating:
        return 1
    if total is None:
        return 32
    return max(4, min(64, total // (workers * 8)))


def _skip_done(
    source: Iterable[MathCase | DecidedCase], done_ids: set[str], responses: dict[str, str]
) -> Iterator[MathCase | DecidedCase]:
    """Drop the cases already in the results file, keeping their responses for the HTML report."""
    for case in source:
        if case.id in done_ids:
            if isinstance(case, MathCase):
                responses[case.id] = case.response
            continue
        yield case


def _input_order(result: CaseResult) -> tuple[int, str]:
    return (result.line if result.line is not None else 1 << 62, result.id)


@contextlib.contextmanager
def _progress_bar(total: int | None, *, enabled: bool) -> Iterator[Callable[[int, int], None]]:
    """A rich progress bar on stderr (only when asked: the CLI asks when stderr is a terminal);
    the callback takes how many more cases are done and how many of them failed."""
    if not enabled:
        yield lambda _done, _failed: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn("grading"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[failed]} failed"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("grading", total=total, failed=0)
        failed = 0

        def advance(done: int, newly_failed: int) -> None:
            nonlocal failed
            failed += newly_failed
            bar.update(task, advance=done, failed=failed)

        yield advance
