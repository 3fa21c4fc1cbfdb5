"""A corpus of hostile eval input lines: each entry is one JSONL line (bytes) that once broke a
run (a traceback, exit 1, lost results), with what a run must do with it instead.

`FINISHES`: graded like any other case (the text kept, escaped where it leaves the process).
`MALFORMED`: exit 2 naming file:line, or a `HARNESS_ERROR` case `line:N` under `--skip-bad`.
"""

from __future__ import annotations

import json

LONE_SURROGATE = "\\udc80"
"""A JSON escape for a lone surrogate: valid JSON, but not encodable as UTF-8 text."""


def _line(**fields: str) -> bytes:
    """A JSON object line whose values are given as JSON source text (escapes kept as written)."""
    return ("{" + ", ".join(f'"{name}": {value}' for name, value in fields.items()) + "}").encode()


FINISHES: dict[str, bytes] = {
    # issue 18, item 1: a lone surrogate in the response, the gold or the id.
    "surrogate-in-response": _line(
        id='"s-response"', response=f'"so {LONE_SURROGATE} \\\\boxed{{2}}"', gold='"2"'
    ),
    "surrogate-inside-the-box": _line(
        id='"s-answer"', response=f'"\\\\boxed{{{LONE_SURROGATE}}}"', gold='"2"'
    ),
    "surrogate-in-gold": _line(
        id='"s-gold"', response='"\\\\boxed{2}"', gold=f'"2{LONE_SURROGATE}"'
    ),
    "surrogate-in-id": _line(id=f'"id-{LONE_SURROGATE}"', response='"\\\\boxed{3}"', gold='"3"'),
    "high-surrogate-alone": _line(id='"s-high"', response='"\\ud800 \\\\boxed{4}"', gold='"4"'),
}

DIGITS = 5000
DEPTH = 100_000

MALFORMED: dict[str, tuple[bytes, str]] = {
    # issue 18, item 4: more digits than Python converts (4,300), as gold, id, or anywhere.
    "huge-integer-gold": (
        _line(id='"big-gold"', response='"\\\\boxed{1}"', gold="9" * DIGITS),
        "longer than 4,300 digits",
    ),
    "huge-integer-id": (
        _line(id="1" * DIGITS, response='"\\\\boxed{1}"', gold='"1"'),
        "longer than 4,300 digits",
    ),
    "huge-integer-elsewhere": (
        _line(id='"big-extra"', response='"\\\\boxed{1}"', gold='"1"', score="7" * DIGITS),
        "longer than 4,300 digits",
    ),
    # issue 18, item 5: nesting deeper than the interpreter's recursion limit.
    "deep-array-nesting": (
        _line(id='"deep"', response='"\\\\boxed{1}"', gold='"1"', extra="[" * DEPTH + "]" * DEPTH),
        "nested too deeply",
    ),
    "deep-object-nesting": (
        _line(
            id='"deep-object"',
            response='"\\\\boxed{1}"',
            gold='"1"',
            extra='{"a": ' * DEPTH + "1" + "}" * DEPTH,
        ),
        "nested too deeply",
    ),
    # issue 27, item 15: an id of the wrong type was "missing id field 'id'", its key listed.
    "id-true": (
        _line(id="true", response='"\\\\boxed{1}"', gold='"1"'),
        "the id field 'id' is true",
    ),
    "id-null": (
        _line(id="null", response='"\\\\boxed{1}"', gold='"1"'),
        "the id field 'id' is null",
    ),
    "id-array": (
        _line(id="[1]", response='"\\\\boxed{1}"', gold='"1"'),
        "the id field 'id' is an array",
    ),
    "id-empty": (
        _line(id='""', response='"\\\\boxed{1}"', gold='"1"'),
        "the id field 'id' is an empty string",
    ),
}


def ordinary_line(case_id: str, answer: int = 1) -> bytes:
    """A well-formed case that passes."""
    return json.dumps(
        {"id": case_id, "response": rf"so \boxed{{{answer}}}", "gold": str(answer)}
    ).encode()
