"""`run_math_eval` and `run_code_eval`: the batch API behind `rewardkit eval math|code`,
importable from training loops; both are `run_task` of their task.

A run reads as its steps: validate the options; open the input (once: every reader reads that
file) and lock the results file; resume (read the results already there, refusing another
run's); grade and write (append each batch of results as it arrives); summarise (count,
report). It returns the results in input order with their summary and report.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import stat
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from rewardkit._version import __version__
from rewardkit.evaluation.dispatch import grade_parsed, grade_raw_lines
from rewardkit.evaluation.errors import EvalConfigError, InputReplacedWarning
from rewardkit.evaluation.inputs.cases import (
    Case,
    CodeCase,
    DecidedCase,
    FieldNames,
    MathCase,
    cases_of_lines,
    fast_loads,
)
from rewardkit.evaluation.inputs.file import (
    InputChangedError,
    InputFile,
    LeftToGrade,
    left_to_grade,
    line_ids,
)
from rewardkit.evaluation.inputs.records import (
    record_ids,
    records_to_cases,
    skip_done,
)
from rewardkit.evaluation.main.executors import capped_workers
from rewardkit.evaluation.main.generation import ChatClient, generate_cases
from rewardkit.evaluation.main.html_report import render_html, write_html_report
from rewardkit.evaluation.main.ledger import IdLedger, rewrite_results
from rewardkit.evaluation.main.output_files import check_distinct_files, check_writable, has_content
from rewardkit.evaluation.main.report import Timings, build_report, write_json_report
from rewardkit.evaluation.main.results_file import (
    InputFingerprint,
    ResultsFile,
    ResultsLock,
    ResultsWriter,
    check_foreign_ids,
    check_resumable,
    metadata_path,
    read_results,
    run_metadata,
)
from rewardkit.evaluation.option_names import option, option_with
from rewardkit.evaluation.options import EvalOptions, option_keywords
from rewardkit.evaluation.scoring import CaseResult, Summary, summarize_counts
from rewardkit.evaluation.tasks import CODE, MATH, Task
from rewardkit.evaluation.worker.batch import ResultBatch
from rewardkit.evaluation.worker.grading import Grader


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
        """`passed / (cases - ADAPTER_ERROR - HARNESS_ERROR)` (and `- SANDBOX_ERROR` for code)."""
        return self.summary.score


def sample_path() -> Path:
    """The shipped sample of 55 responses (`rewardkit eval math` with no file)."""
    return MATH.sample_path()


def _check_outputs(input_path: Path | None, options: EvalOptions) -> None:
    """Before any grading: no two of input, results, report and HTML report are one file, and
    every output (and the results file's metadata beside it) is writable."""
    output, report, html = options.output, options.report, options.html
    check_distinct_files(
        {"input": input_path, "results file": output, "JSON report": report, "HTML report": html}
    )
    for what, path in (("results file", output), ("JSON report", report), ("HTML report", html)):
        if path is not None:
            check_writable(path, what=what)
    if output is not None and _regular_or_missing(output):
        check_writable(metadata_path(output), what="run metadata of the results file")


def _regular_or_missing(path: str | Path) -> bool:
    """A results file that has metadata beside it: not a device or FIFO (`-o /dev/null`)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return True
    except OSError:
        return False


def _lock_output(options: EvalOptions) -> ResultsLock | None:
    """Lock the results file for the whole run (refused if another run holds it); then, under
    the lock, refuse an existing one unless it is to be continued or replaced."""
    if options.output is None:
        return None
    lock = ResultsLock(options.output).acquire()
    if not options.resume and not options.overwrite and has_content(options.output):
        lock.release()
        raise EvalConfigError(
            f"the results file {options.output} exists and is not empty: add "
            f"{option('resume')} to continue that run, or {option('overwrite')} to replace it"
        )
    return lock


def _grader_name(grader: Grader | None, task: Task) -> str:
    if grader is None:
        return task.default_grader
    return f"{getattr(grader, '__module__', '?')}.{getattr(grader, '__qualname__', repr(grader))}"


def _grading_config(options: EvalOptions, task: Task) -> dict[str, Any]:
    """The settings that decide verdicts: a resumed run must use the same ones (the sandbox
    and a program's memory too, for code)."""
    fields, generation = options.fields, options.generation
    used_fields: dict[str, Any] = {
        "id": fields.id,
        "response": fields.response,
        "gold": list(fields.gold),
        "error": fields.error,
    }
    if generation is not None:
        used_fields["question"] = fields.question
    config = {
        "task": task.name,
        "policy": options.policy,
        "extract": options.extract,
        "timeout": options.timeout,
        "fields": used_fields,
        "grader": _grader_name(options.grader, task),
        "generation": None if generation is None else generation.verdict_settings(),
    }
    if task.runs_code:
        config.update(sandbox=options.sandbox, memory=options.memory)
    return config


@dataclass
class _Source:
    """What a run grades: an input file (opened once) or records given as Python objects, with
    the name reports show, the input's identity, the settings that decide verdicts, and the
    lock on the results file."""

    task: Task
    name: str
    input: InputFile | None
    records: list[Any] | None
    fingerprint: InputFingerprint
    grading: dict[str, Any]
    workers: int
    """Worker processes (0: this process), after capping at the cores."""
    raw_lines: bool
    """Workers read raw lines of the file (the fast path) rather than parsed cases."""
    lock: ResultsLock | None

    def close(self, *, failed: bool) -> None:
        """Release the input and the results file (the input's hash is finished first)."""
        self.fingerprint.wait()
        if self.input is not None:
            self.input.close()
        if self.lock is not None:
            self.lock.release(failed=failed)


@dataclass
class _Resumed:
    """What an existing results file already holds (nothing unless resuming)."""

    existing: ResultsFile
    previous: list[CaseResult]
    """The results kept: those for ids of the input."""
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
    ledger: IdLedger
    started_at: str
    wall_seconds: float = 0.0


@option_keywords
def run_math_eval(
    data: str | Path | Iterable[Mapping[str, Any] | MathCase] | None = None,
    *,
    options: EvalOptions | None = None,
    **keywords: Any,
) -> EvalRun:
    """Grade math responses against gold answers and return results, summary and report.

    `data` is a JSONL path, an iterable of records (dicts) or `MathCase`s, or None for the
    shipped sample. The options are `EvalOptions`' fields, given as keywords (`workers=0`) or
    whole (`options=EvalOptions(...)`, with keywords replacing its fields). `workers=0` grades
    in this process (the grader's sandbox enforces the budget); `workers=N` uses N killable
    worker processes (default: the cores; more are capped at the cores, with a warning), each
    allowed `worker_memory` bytes of address space beyond its start (None or 0: no cap).
    `generation` asks a chat endpoint for each problem's response first. `grader` replaces
    `rewardkit.math.grade` (same signature; module-level so worker processes can import it).
    No input line may be longer than `max_line_bytes`.

    `output` is locked for the whole run: a second run on it is refused. An existing, non-empty
    `output` is refused unless `resume` (continue it; refused in turn if it was written for
    another input or other grading options, or holds results for ids the input does not have,
    unless `force_resume`) or `overwrite`. Raises `EvalInputError` for unreadable, malformed
    or changing input, `EvalConfigError` for bad or contradictory options, `EvalOutputError`
    when an output cannot be written, and `Interrupted` (a `KeyboardInterrupt`) when a signal
    stopped it after writing what was graded. Warns (`EvalWarning`) when the input's path
    names another file by the end, or a forced resume left results out.
    """
    return run_task(MATH, data, EvalOptions.of(options, keywords, caller="run_math_eval"))


@option_keywords(task=CODE)
def run_code_eval(
    data: str | Path | Iterable[Mapping[str, Any] | CodeCase] | None = None,
    *,
    options: EvalOptions | None = None,
    **keywords: Any,
) -> EvalRun:
    """Run the program in each response against its case's tests, inside a sandbox, and return
    results, summary and report: `run_math_eval`'s run (the same options, outputs, resume,
    workers and errors) with the code task's grader, `rewardkit.code.grade_code`.

    Each record has an id, a response and `tests` (any form `rewardkit.code.parse_tests`
    reads); None grades the shipped sample. Without `options`, the defaults are the code
    task's (`EvalOptions.for_task("code")`: extract `last`, `timeout` 10 s per test); `sandbox`
    (`auto`, `bwrap`, `wasm`; `none` for trusted code only) and `memory` (bytes per program)
    go to the grader. A sandbox that cannot run here is refused before any grading
    (`EvalConfigError` saying what to install). `SANDBOX_ERROR` cases are our side's failures:
    excluded from the score, like `HARNESS_ERROR`.
    """
    return run_task(
        CODE, data, EvalOptions.of(options, keywords, caller="run_code_eval", task=CODE)
    )


def run_task(
    task: Task,
    data: str | Path | Iterable[Mapping[str, Any] | Case] | None,
    options: EvalOptions,
) -> EvalRun:
    """Run `task` on `data` with `options` (validated first): the steps every task shares."""
    options.validate(task)
    options = options.resolved(task)
    if task.runs_code and options.grader is None:
        _check_sandbox(options)
    source = _open(task, data, options)
    failed = True
    try:
        resumed = _resume(source, options)
        written = _write(source, options, resumed)
        run = _summarise(source, options, resumed, written)
        failed = False
    finally:
        source.close(failed=failed)
    return run


def _check_sandbox(options: EvalOptions) -> None:
    """Refuse a run whose sandbox cannot run here before any grading (`EvalConfigError` saying
    what to install), rather than a `SANDBOX_ERROR` for every case; and the wasm sandbox in
    workers whose address space is capped (wasmtime reserves far more than it uses: every case
    would be a `SANDBOX_ERROR`). `none` needs nothing."""
    name = options.sandbox
    if name == "none":
        return
    from rewardkit.code.sandbox.selection import available_backends, unavailable_message

    reasons = available_backends()
    usable = [backend for backend, reason in reasons.items() if reason is None]
    if name == "auto" and not usable:
        raise EvalConfigError(unavailable_message(reasons))
    if name != "auto" and reasons.get(name) is not None:
        raise EvalConfigError(
            f"the {name} sandbox is not usable here: {reasons[name]}. "
            + unavailable_message({name: reasons[name]})
        )
    backend = usable[0] if name == "auto" else name
    capped = options.worker_memory and options.executor == "local" and options.workers != 0
    if backend == "wasm" and capped:
        raise EvalConfigError(
            f"the wasm sandbox reserves more address space than {option('worker_memory')} "
            f"allows each worker ({options.worker_memory:,} bytes): give "
            f"{option_with('worker_memory', 0)} (a program's memory is bounded by "
            f"{option('memory')} inside the sandbox)"
        )


def _open(
    task: Task,
    data: str | Path | Iterable[Mapping[str, Any] | Case] | None,
    options: EvalOptions,
) -> _Source:
    """Check every output before any grading, open the input (every reader reads this file),
    lock the results file, and start hashing the input."""
    if data is None:
        data = task.sample_path()
    path = Path(data) if isinstance(data, (str, Path)) else None
    records = None if path is not None else list(data)  # type: ignore[arg-type]
    workers, capped = capped_workers(options.workers) if options.executor == "local" else (0, None)
    if capped is not None:
        warnings.warn(capped, RuntimeWarning, stacklevel=3)
    _check_outputs(path, options)
    name = str(path) if path is not None else "<records>"
    # (the name first: locating the packaged sample costs ~3 ms of importlib.resources)
    if path is not None and path.name == task.sample and path == task.sample_path():
        name = f"<sample {task.sample}>"
    input_file = None
    if path is not None:
        input_file = InputFile.open(path, max_line_bytes=options.max_line_bytes)
    try:
        lock = _lock_output(options)
    except BaseException:
        if input_file is not None:
            input_file.close()
        raise
    return _Source(
        task=task,
        name=name,
        input=input_file,
        records=records,
        fingerprint=(
            InputFingerprint.of_descriptor(input_file.fd, name)
            if input_file is not None
            else InputFingerprint.of_records(records or [])
        ),
        grading=_grading_config(options, task),
        workers=workers,
        raw_lines=task.raw_lines
        and path is not None
        and options.generation is None
        and options.executor == "local",
        lock=lock,
    )


def _resume(source: _Source, options: EvalOptions) -> _Resumed:
    """Read the results already in `output` when resuming, refusing another run's (another
    input, other options, ids the input does not have), and work out what is left to grade."""
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
    previous = existing.results
    left = None
    if previous or options.progress:
        left = _left_to_grade(source, options, {result.id for result in previous})
    if previous and left is not None:
        previous = check_foreign_ids(
            existing, left.found, path=options.output or "", force=options.force_resume
        )
    if options.resume and options.output is not None:
        existing.repair(options.output)
    return _Resumed(
        existing=existing,
        previous=previous,
        done_ids={result.id for result in previous},
        total=None if left is None else left.left,
        nothing_left=bool(previous) and left is not None and left.left == 0,
    )


def _left_to_grade(source: _Source, options: EvalOptions, done_ids: set[str]) -> LeftToGrade | None:
    """One pass over the input's ids (None for a pipe, which cannot be read twice)."""
    fields, limit = options.fields, options.limit
    if source.input is None:
        return left_to_grade(record_ids(source.records or [], fields), done_ids, limit)
    if not source.input.rewind():
        return None
    try:
        lines = source.input.lines()
        ids = (
            line_ids(lines, fields)
            if done_ids
            else ((number, None) for number, raw in lines if not raw.isspace())
        )
        return left_to_grade(ids, done_ids, limit)
    finally:
        source.input.rewind()


def _grade(
    source: _Source, options: EvalOptions, resumed: _Resumed, resumed_responses: dict[str, str]
) -> Iterable[ResultBatch]:
    """The run's results as batches, in completion order: raw lines of a file graded by the
    worker code, or parsed cases (records, generation, Ray). Responses of skipped (done)
    parsed cases go to `resumed_responses`."""
    if resumed.nothing_left:
        return ()
    if source.raw_lines:
        assert source.input is not None
        return grade_raw_lines(
            source.input, options, workers=source.workers, done_ids=resumed.done_ids
        )
    cases: Iterable[Case | DecidedCase]
    need_response = options.generation is None
    if source.input is not None:
        cases = cases_of_lines(
            source.input.lines(),
            path=str(source.input.path),
            fields=options.fields,
            skip_bad=options.skip_bad,
            limit=options.limit,
            need_response=need_response,
            task=source.task,
        )
    else:
        cases = records_to_cases(
            source.records or [], options.fields, need_response, task=source.task
        )
        if options.limit is not None:
            cases = itertools.islice(cases, options.limit)
    if resumed.done_ids:
        cases = skip_done(cases, resumed.done_ids, resumed_responses)
    if options.generation is not None:
        client = ChatClient(options.generation)
        cases = generate_cases(cases, client, concurrency=options.concurrency)
    return grade_parsed(
        cases, options, workers=source.workers, total=resumed.total, task=source.task.name
    )


def _write(source: _Source, options: EvalOptions, resumed: _Resumed) -> _Written:
    """Grade, appending each batch to the results file as it arrives (its metadata first,
    when the file is new), feeding the progress bar and `on_result`, checking ids for
    duplicates and the input for changes."""
    written = _Written(
        batches=[],
        resumed_responses={},
        ledger=IdLedger(
            path=source.name if source.raw_lines else None,
            skip_bad=options.skip_bad,
            done_ids=resumed.done_ids,
            include_response=options.include_response,
        ),
        started_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )
    started = time.perf_counter()
    writer = None
    with contextlib.ExitStack() as stack:
        if options.output is not None:
            writer = ResultsWriter(
                options.output,
                append=not options.overwrite,
                metadata=_metadata(source) if resumed.existing.empty else None,
                include_response=options.include_response,
            )
            stack.callback(writer.close)
        batches = _grade(source, options, resumed, written.resumed_responses)
        stack.push(_closing(batches))
        advance = stack.enter_context(_progress_bar(resumed.total, enabled=options.progress))
        try:
            for batch in batches:
                _take_batch(batch, source, options, written, writer)
                advance(len(batch), batch.failed)
            if source.input is not None:
                source.input.check_unchanged()
        except InputChangedError:
            if writer is not None:
                writer.input_changed()
            raise
    written.wall_seconds = time.perf_counter() - started
    if source.input is not None and source.input.replaced():
        warnings.warn(
            f"{source.input.path} names another file now (replaced during the run): the run "
            "graded the file it opened, whole",
            InputReplacedWarning,
            stacklevel=4,
        )
    return written


def _closing(batches: Iterable[ResultBatch]) -> Callable[..., bool]:
    """Close the batches' generator on leaving the loop, not when it is collected: its pools
    stop and its feeder thread is joined before the input and the results file close, however
    the loop ended. A failure to clean up never hides the error that ended the loop."""

    def close(_type: object, error: BaseException | None, _traceback: object) -> bool:
        closer = getattr(batches, "close", None)
        if closer is not None:
            if error is None:
                closer()
            else:
                with contextlib.suppress(Exception):
                    closer()
        return False

    return close


def _take_batch(
    batch: ResultBatch,
    source: _Source,
    options: EvalOptions,
    written: _Written,
    writer: ResultsWriter | None,
) -> None:
    """One batch of results: check the input did not change, check the batch's ids, append
    its lines, keep it, tell `on_result`."""
    if source.input is not None:
        source.input.check_unchanged()
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


def _metadata(source: _Source) -> Callable[[], dict[str, Any]]:
    """The results file's metadata, built when first written (it waits for the input's hash)."""
    return functools.partial(run_metadata, source.fingerprint, source.grading, __version__)


def _summarise(
    source: _Source, options: EvalOptions, resumed: _Resumed, written: _Written
) -> EvalRun:
    """Count outcomes over resumed and new results, then write the JSON and HTML reports."""
    previous = _settle_duplicates(options, resumed, written)
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
    summary = summarize_counts(counts, source.task)
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
        if source.input is not None and options.generation is None:
            with source.input.reread() as stream:
                if stream is not None:
                    results = _with_responses(results, stream, source.input, options.fields)
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
            task=source.task,
            title=f"{source.task.prog}: {source.name}",
            config={**config, "fields": None},
            timings=document["timings"],
        )
        write_html_report(page, options.html)
    return run


def _settle_duplicates(
    options: EvalOptions, resumed: _Resumed, written: _Written
) -> list[CaseResult]:
    """The resumed results without those a late-found duplicate id superseded; the results file
    is rewritten without them too (rare: duplicate ids under `--skip-bad`)."""
    ledger = written.ledger
    if not ledger.superseded:
        return resumed.previous
    previous = ledger.drop_superseded(resumed.previous, written.batches)
    if options.output is not None:
        rewrite_results(options.output, previous, written.batches, options.include_response)
    return previous


def _report_config(source: _Source, options: EvalOptions) -> dict[str, Any]:
    """The report's `config`: what was graded and how (reproducible: no timings)."""
    generation = options.generation
    config = {
        "task": source.task.name,
        "input": source.name,
        "policy": options.policy,
        "extract": options.extract,
        "timeout": options.timeout,
        "fields": source.grading["fields"],
        "limit": options.limit,
        "skip_bad": options.skip_bad,
        "generation": None if generation is None else generation.public_settings(),
        "rewardkit_version": __version__,
        "input_sha256": source.fingerprint.to_json()["sha256"],
    }
    if source.task.runs_code:
        config.update(sandbox=options.sandbox, memory=options.memory)
    return config


def _with_responses(
    results: list[CaseResult], stream: IO[bytes], source: InputFile, fields: FieldNames
) -> list[CaseResult]:
    """Attach responses, read back from the input file by line number, to results graded from
    raw lines (workers do not send them back unless the run needs them)."""
    wanted = {r.line for r in results if r.response is None and r.line is not None}
    responses: dict[int, str] = {}
    for number, raw in source.lines(stream):
        if number in wanted:
            try:
                record = fast_loads(raw)
            except (ValueError, RecursionError):  # a malformed line (--skip-bad)
                continue
            response = record.get(fields.response) if isinstance(record, dict) else None
            if isinstance(response, str):
                responses[number] = response
    return [
        r.with_response(responses[r.line]) if r.response is None and r.line in responses else r
        for r in results
    ]


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
