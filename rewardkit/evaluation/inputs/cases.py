"""Reading evaluation inputs: one JSONL line becomes one case (a `MathCase`, a `CodeCase`), or a
typed error naming file:line.

Cases keep their line number so every later message (a malformed line, a bad gold, a crash)
can point back at the place in the input that caused it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson

from rewardkit.evaluation.option_names import option
from rewardkit.evaluation.tasks import MATH, Task
from rewardkit.math.verdict import quoted
from rewardkit.runtime.define.failures import FailureTag

DEFAULT_GOLD_FIELDS = ("gold", "answer")
"""Gold field names tried in order when the user did not name one (`answer` is MATH's)."""


class EvalInputError(Exception):
    """An input file cannot be read or one of its lines is malformed; the message names file:line."""

    def __init__(self, message: str, *, path: str, line: int | None = None) -> None:
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}")
        self.path = path
        self.line = line
        self.reason = message
        self.case_id: str | None = None
        """The id of the malformed line's case, when it could be read (`--skip-bad` uses it)."""


@dataclass(frozen=True)
class FieldNames:
    """Which JSON keys hold a case's id, response, gold answer, question and upstream error."""

    id: str = "id"
    response: str = "response"
    gold: tuple[str, ...] = DEFAULT_GOLD_FIELDS
    question: str = "question"
    error: str = "error"


@dataclass(frozen=True)
class MathCase:
    """One response to grade against its gold answer; `line` is its 1-based line in the input."""

    id: str
    response: str
    gold: str
    line: int | None = None
    question: str | None = None


@dataclass(frozen=True)
class CodeCase:
    """One response whose program runs against `tests` (a data set's tests object, in any form
    `rewardkit.code.parse_tests` reads); `line` is its 1-based line in the input."""

    id: str
    response: str
    tests: Any
    line: int | None = None
    question: str | None = None


Case = MathCase | CodeCase
"""A case to grade, of any task."""


@dataclass(frozen=True)
class DecidedCase:
    """A case whose outcome is known before grading: a malformed line (with `--skip-bad`) or a
    generation error recorded upstream. It is written as a result without going to a worker."""

    id: str
    tag: FailureTag
    error: str
    line: int | None = None
    gold: str | None = None
    response: str | None = None
    extra: dict[str, str] = field(default_factory=dict)


DEFAULT_MAX_LINE_BYTES = 16 << 20
"""The longest input line read (16 MiB): 30 times the longest model response of a 128k-token
completion, and a bound on the memory one line may take."""


def line_too_long(path: str, line: int, max_bytes: int) -> EvalInputError:
    """The error for a line over the limit. It stops the run, `--skip-bad` or not: the rest of
    such a line cannot be skipped without reading it, and a pipe may never end it."""
    return EvalInputError(
        f"the line is longer than {max_bytes:,} bytes, the limit for one line "
        f"({option('max_line_bytes')} raises it)",
        path=path,
        line=line,
    )


def numbered_lines(
    handle: IO[bytes], *, path: str, max_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> Iterator[tuple[int, bytes]]:
    """The one line reader of evaluation inputs: the lines of a binary stream with their
    1-based numbers (newline included, blank lines too), split at `\\n` only (a bare `\\r` is
    JSON whitespace, not a line break, for every executor). Raises `EvalInputError` at a line
    longer than `max_bytes` as soon as that many bytes of it were read: linear in the input,
    whatever its line lengths, and bounded in memory (C's `readline` with a limit)."""
    readline = handle.readline
    limit = max_bytes + 1
    number = 1
    while raw := readline(limit):
        if len(raw) == limit and raw[-1] != 0x0A:
            raise line_too_long(path, number, max_bytes)
        yield number, raw
        number += 1


def malformed_line_case(
    path: str, line: int, reason: str, case_id: str | None = None
) -> DecidedCase:
    """The `HARNESS_ERROR` case that stands for a malformed line under `--skip-bad`: its id
    when the line's id could be read, else `line:N`."""
    return DecidedCase(
        id=case_id or f"line:{line}",
        tag=FailureTag.HARNESS_ERROR,
        error=f"malformed input line {path}:{line}: {reason}",
        line=line,
    )


def _as_text(value: object) -> str | None:
    """Golds and ids arrive as strings or numbers; anything else is not usable."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return str(value)
    return None


def fast_loads(raw: str | bytes) -> Any:
    """`json.loads` for lines whose big numbers do not matter (results files, responses read
    back from the input): orjson first (a quarter of the time), then `json` for what orjson
    refuses (NaN, lone surrogate escapes, a number beyond a double). orjson reads integers
    beyond 64 bits as floats. Raises what `json.loads` raises (`ValueError`, `RecursionError`)."""
    try:
        return orjson.loads(raw)
    except ValueError:
        return json.loads(raw)


INT_DIGITS_LIMIT = 4300
"""Python's default limit on the digits of an integer read from text (`sys.get_int_max_str_digits`)."""


def load_json_line(raw: str | bytes, *, path: str, line: int) -> object:
    """`json.loads(raw)`, or `EvalInputError` naming `path:line` for anything it refuses:
    invalid JSON, an integer longer than Python converts (4,300 digits), nesting deeper than
    the interpreter's recursion limit."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise EvalInputError(
            f"not valid JSON ({exc.msg} at column {exc.colno})", path=path, line=line
        ) from None
    except RecursionError:
        raise EvalInputError(
            "JSON nested too deeply to read (arrays or objects inside each other, "
            "thousands of levels)",
            path=path,
            line=line,
        ) from None
    except ValueError as exc:  # int("9" * 5000): Python's limit on integer strings
        if "digits" not in str(exc):
            raise EvalInputError(f"not valid JSON ({exc})", path=path, line=line) from None
        raise EvalInputError(
            f"a JSON integer longer than {INT_DIGITS_LIMIT:,} digits (Python's limit for "
            "reading integers); write it as a string",
            path=path,
            line=line,
        ) from None


def case_id_of(record: dict[str, Any], fields: FieldNames) -> str | None:
    """The id of a record, or None when it has no usable one."""
    return _as_text(record.get(fields.id)) or None


def _json_type(value: object) -> str:
    """How JSON writes a value's type, for messages (`true`, `null`, `an array`, ...)."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, str):
        return "an empty string" if value == "" else "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return "a number"


def _case_id(record: dict[str, Any], fields: FieldNames, *, path: str, line: int) -> str:
    """The id of a record; `EvalInputError` saying what is wrong with it."""
    value = record.get(fields.id)
    case_id = _as_text(value)
    if case_id:
        return case_id
    if fields.id not in record:
        raise EvalInputError(
            f"missing id field {quoted(fields.id)} (choose another with {option('id_field')}); "
            f"keys: {', '.join(map(quoted, sorted(record)))}",
            path=path,
            line=line,
        )
    raise EvalInputError(
        f"the id field {quoted(fields.id)} is {_json_type(value)}: an id is a non-empty string or "
        "a number",
        path=path,
        line=line,
    )


def parse_case_line(
    raw: str,
    *,
    path: str,
    line: int,
    fields: FieldNames,
    need_response: bool = True,
    task: Task = MATH,
) -> Case | DecidedCase:
    """Turn one JSONL line into a case of `task`; raise `EvalInputError` naming `path:line` if
    it is malformed.

    A line whose error field is set (a generation failure recorded by whoever produced the
    file) becomes an `ADAPTER_ERROR` case rather than a malformed line.
    """
    record = load_json_line(raw, path=path, line=line)
    if not isinstance(record, dict):
        raise EvalInputError(
            f"expected a JSON object, got {type(record).__name__}", path=path, line=line
        )
    case_id = _case_id(record, fields, path=path, line=line)
    try:
        return _case_of_record(
            record,
            case_id,
            path=path,
            line=line,
            fields=fields,
            need_response=need_response,
            task=task,
        )
    except EvalInputError as exc:
        exc.case_id = case_id
        raise


def _as_tests(value: object) -> object | None:
    """A code case's tests arrive as an object, a list, or either as a JSON string (APPS's
    `input_output`); their form is the grader's to read (a bad one is our side's failure)."""
    return value if isinstance(value, (dict, list, str)) else None


_GOLD_TYPES = {"math": "a string or a number", "code": "an object, a list or a JSON string"}
"""What each task's gold may be, for messages (`_gold_of`)."""


def _gold_of(
    record: dict[str, Any], case_id: str, *, path: str, line: int, fields: FieldNames, task: Task
) -> Any:
    """The value a case of `task` is graded against: a math gold as text, code tests as given."""
    gold_value: object = None
    for name in fields.gold:
        if name in record:
            gold_value = record[name]
            break
    else:
        raise EvalInputError(
            f"case {quoted(case_id)}: missing {task.gold} field "
            f"{' or '.join(map(quoted, fields.gold))} "
            f"(choose one with {option(task.gold + '_field')})",
            path=path,
            line=line,
        )
    gold = _as_tests(gold_value) if task.runs_code else _as_text(gold_value)
    if gold is None:
        raise EvalInputError(
            f"case {quoted(case_id)}: {task.gold} must be {_GOLD_TYPES[task.name]}, "
            f"got {type(gold_value).__name__}",
            path=path,
            line=line,
        )
    return gold


def _case_of_record(
    record: dict[str, Any],
    case_id: str,
    *,
    path: str,
    line: int,
    fields: FieldNames,
    need_response: bool,
    task: Task,
) -> Case | DecidedCase:
    """The case of a record whose id is `case_id` (`parse_case_line`'s second half)."""
    gold = _gold_of(record, case_id, path=path, line=line, fields=fields, task=task)
    make = CodeCase if task.runs_code else MathCase
    question = record.get(fields.question)
    question = question if isinstance(question, str) else None
    upstream_error = record.get(fields.error)
    if upstream_error not in (None, "", {}):
        text = upstream_error if isinstance(upstream_error, str) else json.dumps(upstream_error)
        return DecidedCase(
            id=case_id,
            tag=FailureTag.ADAPTER_ERROR,
            error=f"generation failed upstream: {text}",
            line=line,
            gold=None if task.runs_code else gold,
        )
    if not need_response:
        if question is None:
            raise EvalInputError(
                f"case {quoted(case_id)}: generation needs a string question field "
                f"{quoted(fields.question)} (choose another with {option('question_field')})",
                path=path,
                line=line,
            )
        return make(case_id, "", gold, line, question)
    response = record.get(fields.response)
    if not isinstance(response, str):
        found = "missing" if fields.response not in record else f"a {type(response).__name__}"
        raise EvalInputError(
            f"case {quoted(case_id)}: response field {quoted(fields.response)} must be a string, it is {found} "
            f"(choose another with {option('response_field')})",
            path=path,
            line=line,
        )
    return make(case_id, response, gold, line, question)


def read_cases(
    path: str | Path,
    *,
    fields: FieldNames | None = None,
    skip_bad: bool = False,
    limit: int | None = None,
    need_response: bool = True,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    task: Task = MATH,
) -> Iterator[Case | DecidedCase]:
    """Yield the cases of a JSONL file lazily, in file order, skipping blank lines.

    A malformed line raises `EvalInputError` (file:line), or with `skip_bad` becomes a
    `HARNESS_ERROR` case whose id is `line:N`. Duplicate ids are malformed too: resuming a run
    relies on ids being unique. `limit` counts cases, not lines.
    """
    name = str(path)
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed in finally, generator
    except OSError as exc:
        raise EvalInputError(f"cannot read input: {exc.strerror or exc}", path=name) from None
    with handle:
        yield from cases_of_lines(
            numbered_lines(handle, path=name, max_bytes=max_line_bytes),
            path=name,
            fields=fields or FieldNames(),
            skip_bad=skip_bad,
            limit=limit,
            need_response=need_response,
            task=task,
        )


def _unseen(case_id: str | None, seen: Mapping[str, int]) -> str | None:
    """A malformed line's id, unless an earlier line has it (then it stands as `line:N`)."""
    return None if case_id in seen else case_id


def cases_of_lines(
    lines: Iterable[tuple[int, bytes]],
    *,
    path: str,
    fields: FieldNames,
    skip_bad: bool = False,
    limit: int | None = None,
    need_response: bool = True,
    task: Task = MATH,
) -> Iterator[Case | DecidedCase]:
    """`read_cases` over numbered raw lines (from `numbered_lines`)."""
    seen: dict[str, int] = {}
    count = 0
    for number, raw in lines:
        if limit is not None and count >= limit:
            return
        if raw.isspace():
            continue
        try:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise EvalInputError(
                    f"not UTF-8 text ({exc.reason})", path=path, line=number
                ) from None
            case = parse_case_line(
                text,
                path=path,
                line=number,
                fields=fields,
                need_response=need_response,
                task=task,
            )
            if case.id in seen:
                raise EvalInputError(
                    f"duplicate id {quoted(case.id)} (first on line {seen[case.id]})",
                    path=path,
                    line=number,
                )
        except EvalInputError as exc:
            if not skip_bad:
                raise
            case = malformed_line_case(path, number, exc.reason, _unseen(exc.case_id, seen))
        seen[case.id] = number
        count += 1
        yield case
