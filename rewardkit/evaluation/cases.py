"""Reading evaluation inputs: one JSONL line becomes one `MathCase`, or a typed error naming file:line.

Cases keep their line number so every later message (a malformed line, a bad gold, a crash)
can point back at the place in the input that caused it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from rewardkit.failures import FailureTag

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


def parse_case_line(
    raw: str, *, path: str, line: int, fields: FieldNames, need_response: bool = True
) -> MathCase | DecidedCase:
    """Turn one JSONL line into a case; raise `EvalInputError` naming `path:line` if it is malformed.

    A line whose error field is set (a generation failure recorded by whoever produced the
    file) becomes an `ADAPTER_ERROR` case rather than a malformed line.
    """
    record = load_json_line(raw, path=path, line=line)
    if not isinstance(record, dict):
        raise EvalInputError(
            f"expected a JSON object, got {type(record).__name__}", path=path, line=line
        )
    case_id = _as_text(record.get(fields.id))
    if case_id is None or case_id == "":
        raise EvalInputError(
            f"missing id field {fields.id!r} (choose another with --id-field); keys: {sorted(record)}",
            path=path,
            line=line,
        )
    gold_value: object = None
    for name in fields.gold:
        if name in record:
            gold_value = record[name]
            break
    else:
        raise EvalInputError(
            f"case {case_id!r}: missing gold field {' or '.join(map(repr, fields.gold))} (choose one with --gold-field)",
            path=path,
            line=line,
        )
    gold = _as_text(gold_value)
    if gold is None:
        raise EvalInputError(
            f"case {case_id!r}: gold must be a string or a number, got {type(gold_value).__name__}",
            path=path,
            line=line,
        )
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
            gold=gold,
        )
    if not need_response:
        if question is None:
            raise EvalInputError(
                f"case {case_id!r}: generation needs a string question field {fields.question!r} (choose another with --question-field)",
                path=path,
                line=line,
            )
        return MathCase(id=case_id, response="", gold=gold, line=line, question=question)
    response = record.get(fields.response)
    if not isinstance(response, str):
        found = "missing" if fields.response not in record else f"a {type(response).__name__}"
        raise EvalInputError(
            f"case {case_id!r}: response field {fields.response!r} must be a string, it is {found} "
            "(choose another with --response-field)",
            path=path,
            line=line,
        )
    return MathCase(id=case_id, response=response, gold=gold, line=line, question=question)


def read_cases(
    path: str | Path,
    *,
    fields: FieldNames | None = None,
    skip_bad: bool = False,
    limit: int | None = None,
    need_response: bool = True,
) -> Iterator[MathCase | DecidedCase]:
    """Yield the cases of a JSONL file lazily, in file order, skipping blank lines.

    A malformed line raises `EvalInputError` (file:line), or with `skip_bad` becomes a
    `HARNESS_ERROR` case whose id is `line:N`. Duplicate ids are malformed too: resuming a run
    relies on ids being unique. `limit` counts cases, not lines.
    """
    fields = fields or FieldNames()
    name = str(path)
    seen: dict[str, int] = {}
    count = 0
    try:
        handle = open(path, encoding="utf-8")  # noqa: SIM115 - closed in finally, generator
    except OSError as exc:
        raise EvalInputError(f"cannot read input: {exc.strerror or exc}", path=name) from None
    try:
        for number, raw in enumerate(handle, start=1):
            if limit is not None and count >= limit:
                return
            if not raw.strip():
                continue
            try:
                case = parse_case_line(
                    raw, path=name, line=number, fields=fields, need_response=need_response
                )
                if case.id in seen:
                    raise EvalInputError(
                        f"duplicate id {case.id!r} (first on line {seen[case.id]})",
                        path=name,
                        line=number,
                    )
            except EvalInputError as exc:
                if not skip_bad:
                    raise
                case = DecidedCase(
                    id=f"line:{number}",
                    tag=FailureTag.HARNESS_ERROR,
                    error=f"malformed input line {name}:{number}: {exc.reason}",
                    line=number,
                )
            seen[case.id] = number
            count += 1
            yield case
    except UnicodeDecodeError as exc:
        raise EvalInputError(f"not UTF-8 text ({exc.reason})", path=name) from None
    finally:
        handle.close()
