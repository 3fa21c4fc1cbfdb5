"""`run_math_eval`: the batch API behind `rewardkit eval math`, importable from training loops.

It reads (or generates) cases, skips those already in `output` when resuming, grades the rest
with the chosen executor, appends each result to `output` as it arrives, and returns the
results in input order with their summary and report.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import Any

from rewardkit._version import __version__
from rewardkit.evaluation.cases import (
    DecidedCase,
    EvalInputError,
    FieldNames,
    MathCase,
    parse_case_line,
    read_cases,
)
from rewardkit.evaluation.generation import ChatClient, ChatEndpoint, generate_cases
from rewardkit.evaluation.grading import GradeOptions, Grader
from rewardkit.evaluation.html_report import render_html, write_html_report
from rewardkit.evaluation.report import Timings, build_report, write_json_report
from rewardkit.evaluation.results_file import ResultsWriter, load_results
from rewardkit.evaluation.scoring import CaseResult, Summary, summarize
from rewardkit.evaluation.workers import (
    Executor,
    InProcessExecutor,
    ProcessExecutor,
    default_workers,
)

SAMPLE_NAME = "math_sample.jsonl"
POLICIES = ("lenient", "strict")
EXTRACT_MODES = ("boxed", "auto")
EXECUTORS = ("local", "ray")


class EvalConfigError(ValueError):
    """The options of a run contradict each other or are out of range (a usage error, exit 2)."""


@dataclass(frozen=True)
class EvalRun:
    """What a run produced: every result (resumed ones included) in input order, and its summary."""

    results: list[CaseResult]
    summary: Summary
    report: dict[str, Any]
    timings: Timings

    @property
    def score(self) -> float | None:
        """`passed / (cases - ADAPTER_ERROR - HARNESS_ERROR)`."""
        return self.summary.score


def sample_path() -> Path:
    """The shipped sample of ~50 responses (`rewardkit eval math` with no file)."""
    return Path(str(resources.files("rewardkit.evaluation").joinpath("data", SAMPLE_NAME)))


def _records_to_cases(
    records: Iterable[Mapping[str, Any] | MathCase], fields: FieldNames, need_response: bool
) -> Iterator[MathCase | DecidedCase]:
    import json

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


def _count_lines(path: Path, limit: int | None) -> int | None:
    try:
        with open(path, "rb") as handle:
            count = sum(1 for raw in handle if raw.strip())
    except OSError:
        return None
    return min(count, limit) if limit is not None else count


def _validate(
    policy: str,
    extract: str,
    timeout: float,
    workers: int | None,
    executor: str,
    resume: bool,
    output: Any,
    limit: int | None,
) -> None:
    if policy not in POLICIES:
        raise EvalConfigError(f"policy must be one of {', '.join(POLICIES)}, got {policy!r}")
    if extract not in EXTRACT_MODES:
        raise EvalConfigError(f"extract must be one of {', '.join(EXTRACT_MODES)}, got {extract!r}")
    if not timeout > 0:
        raise EvalConfigError(f"timeout must be a positive number of seconds, got {timeout!r}")
    if workers is not None and workers < 0:
        raise EvalConfigError(f"workers must be >= 0 (0 grades in this process), got {workers}")
    if executor not in EXECUTORS:
        raise EvalConfigError(f"executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    if resume and output is None:
        raise EvalConfigError("resume needs an output file (--output) to know which cases are done")
    if limit is not None and limit < 0:
        raise EvalConfigError(f"limit must be >= 0, got {limit}")


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
    report: str | Path | None = None,
    html: str | Path | None = None,
    generation: ChatEndpoint | None = None,
    concurrency: int = 8,
    grader: Grader | None = None,
    chunk_size: int | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
    progress: bool = False,
) -> EvalRun:
    """Grade math responses against gold answers and return results, summary and report.

    `data` is a JSONL path, an iterable of records (dicts) or `MathCase`s, or None for the
    shipped sample. `workers=0` grades in this process (the grader's sandbox enforces the
    budget); `workers=N` uses N killable worker processes (default: the cores). `generation`
    asks a chat endpoint for each problem's response first. `grader` replaces
    `rewardkit.math.grade` (same signature; module-level so worker processes can import it).
    Raises `EvalInputError` for unreadable or malformed input and `EvalConfigError` for bad options.
    """
    _validate(policy, extract, timeout, workers, executor, resume, output, limit)
    fields = fields or FieldNames()
    options = GradeOptions(policy=policy, extract=extract, timeout=timeout)
    need_response = generation is None
    if data is None:
        data = sample_path()
    if isinstance(data, (str, Path)):
        input_name: str = str(data)
        source: Iterable[MathCase | DecidedCase] = read_cases(
            data, fields=fields, skip_bad=skip_bad, limit=limit, need_response=need_response
        )
        total = _count_lines(Path(data), limit)
    else:
        input_name = "<records>"
        records = list(data)[:limit] if limit is not None else list(data)
        source = _records_to_cases(records, fields, need_response)
        total = len(records)
    if data == sample_path():
        input_name = f"<sample {SAMPLE_NAME}>"

    previous = load_results(output) if resume and output is not None else []
    done_ids = {result.id for result in previous}
    resumed_responses: dict[str, str] = {}
    if done_ids:
        source = _skip_done(source, done_ids, resumed_responses)
        total = None if total is None else max(0, total - len(done_ids))
    # Responses read from an input file stay out of the results file (they are most of its
    # size and of the cost of writing it); generated ones exist nowhere else, so they go in.
    include_response = generation is not None
    if generation is not None:
        source = generate_cases(source, ChatClient(generation), concurrency=concurrency)

    n_workers = default_workers() if workers is None else workers
    grading: Executor
    if executor == "ray":
        from rewardkit.evaluation.ray_executor import RayExecutor

        grading = RayExecutor(
            options, address=ray_address, grader=grader, chunk_size=chunk_size or 16
        )
        workers_text = f"ray executor{f' at {ray_address}' if ray_address else ''}"
    elif n_workers == 0:
        grading = InProcessExecutor(options, grader=grader)
        workers_text = "in-process"
    else:
        size = chunk_size or _chunk_size(total, n_workers, generating=generation is not None)
        grading = ProcessExecutor(
            options,
            workers=n_workers,
            grader=grader,
            chunk_size=size,
            include_response=include_response,
        )
        workers_text = f"{n_workers} worker process{'es' if n_workers > 1 else ''}"

    config: dict[str, Any] = {
        "task": "math",
        "input": input_name,
        "policy": policy,
        "extract": extract,
        "timeout": timeout,
        "fields": {
            "id": fields.id,
            "response": fields.response,
            "gold": list(fields.gold),
            "question": fields.question,
            "error": fields.error,
        },
        "limit": limit,
        "skip_bad": skip_bad,
        "generation": None
        if generation is None
        else {k: v for k, v in asdict(generation).items() if k != "api_key"},
        "rewardkit_version": __version__,
    }
    started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    started = time.perf_counter()
    new_results: list[CaseResult] = []
    writer = (
        ResultsWriter(output, append=resume, include_response=include_response)
        if output is not None
        else None
    )
    with contextlib.ExitStack() as stack:
        if writer is not None:
            stack.callback(writer.close)
        advance = stack.enter_context(_progress_bar(total, enabled=progress))
        for result in grading.results(source):
            if writer is not None:
                writer.write(result)
            new_results.append(result)
            advance(result)
            if on_result is not None:
                on_result(result)
    wall = time.perf_counter() - started

    previous = [
        replace(result, response=resumed_responses[result.id])
        if result.response is None and result.id in resumed_responses
        else result
        for result in previous
    ]
    all_results = sorted([*previous, *new_results], key=_input_order)
    summary = summarize(all_results)
    timings = Timings(
        wall_seconds=wall,
        grading_seconds=sum(result.seconds for result in new_results),
        new_cases=len(new_results),
        resumed_cases=len(previous),
        started_at=started_at,
        finished_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )
    document = build_report(summary, config=config, timings=timings)
    document["timings"]["executor"] = workers_text
    if report is not None:
        write_json_report(document, report)
    if html is not None:
        title = f"rewardkit eval math: {input_name}"
        write_html_report(
            render_html(
                all_results,
                summary,
                title=title,
                config={**config, "fields": None},
                timings=document["timings"],
            ),
            html,
        )
    return EvalRun(results=all_results, summary=summary, report=document, timings=timings)


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
def _progress_bar(total: int | None, *, enabled: bool) -> Iterator[Callable[[CaseResult], None]]:
    """A rich progress bar on stderr (only when asked: the CLI asks when stderr is a terminal)."""
    if not enabled:
        yield lambda _result: None
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

        def advance(result: CaseResult) -> None:
            nonlocal failed
            failed += 0 if result.passed else 1
            bar.update(task, advance=1, failed=failed)

        yield advance
