"""The input as a run reads it: worker tasks cut from the file, or cases made from records
given as Python objects (and the ids of either, for resuming).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from rewardkit.evaluation.inputs.blocks import (
    FileSpan,
    RawBlock,
    TaskSizer,
    line_lists,
    read_blocks,
    read_spans,
)
from rewardkit.evaluation.inputs.cases import (
    Case,
    CodeCase,
    DecidedCase,
    EvalInputError,
    FieldNames,
    MathCase,
    case_id_of,
    parse_case_line,
)
from rewardkit.evaluation.inputs.file import InputFile
from rewardkit.evaluation.tasks import MATH, Task
from rewardkit.math.verdict import quoted


def input_blocks(
    source: InputFile,
    workers: int,
    lines_per_block: int | None,
    limit: int | None,
    sizer: TaskSizer,
) -> Iterator[RawBlock | FileSpan | list[bytes]]:
    """The input as worker tasks: positions in a regular file (workers read the bytes), or
    the bytes themselves for a pipe or when lines must be counted (`--limit`, `chunk_size`).
    Graded in this process (`workers == 0`), the file is read once, as lists of lines."""
    plain = lines_per_block is None and limit is None
    path, max_bytes = str(source.path), source.max_line_bytes
    if plain and workers == 0:
        return line_lists(source.stream, sizer=sizer, path=path, max_line_bytes=max_bytes)
    if plain and source.regular:
        return read_spans(source.fd, sizer=sizer, path=path, max_line_bytes=max_bytes)
    return read_blocks(
        source.stream,
        sizer=sizer,
        path=path,
        max_line_bytes=max_bytes,
        lines_per_block=lines_per_block,
        limit=limit,
    )


def max_block_bytes(size: int, workers: int) -> int:
    """The largest worker task, in bytes of input: about eight tasks per worker at least
    (balance at the end of a run), between 16 KiB and 1 MiB. Each task costs ~0.3 ms of the
    main process's CPU and a pause in its worker (pebble's messages, the results' pickling):
    a 256 KiB cap made that a quarter of the main process's work on a 16,000-case run of
    cached grades (measured: 95 vs 68 ms). `TaskSizer` keeps tasks to ~0.1 s of work below it."""
    return max(16 << 10, min(1 << 20, size // (workers * 8)))


def records_to_cases(
    records: Iterable[Mapping[str, Any] | Case],
    fields: FieldNames,
    need_response: bool,
    task: Task = MATH,
) -> Iterator[Case | DecidedCase]:
    """Records given as Python objects (dicts, `MathCase`s, `CodeCase`s) as cases of `task`; a
    duplicate id is an `EvalInputError` naming the record's position."""
    seen: set[str] = set()
    for number, record in enumerate(records, start=1):
        if isinstance(record, (MathCase, CodeCase, DecidedCase)):
            case = record
        else:
            case = parse_case_line(
                json.dumps(record),
                path="<records>",
                line=number,
                fields=fields,
                need_response=need_response,
                task=task,
            )
        if case.id in seen:
            raise EvalInputError(f"duplicate id {quoted(case.id)}", path="<records>", line=number)
        seen.add(case.id)
        yield case


def record_ids(
    records: Iterable[Mapping[str, Any] | Case], fields: FieldNames
) -> Iterator[tuple[int, str | None]]:
    """The position and id of each record (None where it has no usable id)."""
    for number, record in enumerate(records, start=1):
        if isinstance(record, (MathCase, CodeCase, DecidedCase)):
            yield number, record.id
        else:
            yield number, case_id_of(record, fields) if isinstance(record, dict) else None


def skip_done(
    source: Iterable[Case | DecidedCase], done_ids: set[str], responses: dict[str, str]
) -> Iterator[Case | DecidedCase]:
    """Drop the cases already in the results file, keeping their responses for the HTML report."""
    for case in source:
        if case.id in done_ids:
            if isinstance(case, (MathCase, CodeCase)):
                responses[case.id] = case.response
            continue
        yield case
