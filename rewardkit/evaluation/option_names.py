"""How a message names an option: `--gold-field` for the command line, the argument of
`run_math_eval` for Python callers.

Errors of a run are raised far from the CLI (a worker process parsing a line, the results
file's check), and their advice must name what the reader can change. Library code calls
`option("gold_field")`; the CLI runs `run_math_eval` inside `command_line_names()`. Worker
processes are forked inside it and inherit the choice.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

_COMMAND_LINE = {
    "output": "--output",
    "resume": "--resume",
    "overwrite": "--overwrite",
    "force_resume": "--force-resume",
    "id_field": "--id-field",
    "response_field": "--response-field",
    "gold_field": "--gold-field",
    "tests_field": "--tests-field",
    "question_field": "--question-field",
    "executor_ray": "--executor ray",
    "max_line_bytes": "--max-line-size",
    "limit": "--limit",
    "workers": "--workers",
    "sandbox": "--sandbox",
    "memory": "--memory",
    "worker_memory": "--worker-memory",
}

_PYTHON = {
    "output": "output=...",
    "resume": "resume=True",
    "overwrite": "overwrite=True",
    "force_resume": "force_resume=True",
    "id_field": "fields=FieldNames(id=...)",
    "response_field": "fields=FieldNames(response=...)",
    "gold_field": "fields=FieldNames(gold=(...,))",
    "tests_field": "fields=FieldNames(gold=(...,))",
    "question_field": "fields=FieldNames(question=...)",
    "executor_ray": 'executor="ray"',
    "max_line_bytes": "max_line_bytes=...",
    "limit": "limit=...",
    "workers": "workers=...",
    "sandbox": "sandbox=...",
    "memory": "memory=...",
    "worker_memory": "worker_memory=...",
}

_names = [_PYTHON]


def option(name: str) -> str:
    """The option `name` (a `run_math_eval` argument) as the reader of the message writes it."""
    return _names[-1][name]


def option_with(name: str, value: object) -> str:
    """The option `name` given `value`: `--workers 64`, or `workers=64`."""
    if _names[-1] is _COMMAND_LINE:
        return f"{_COMMAND_LINE[name]} {value}"
    return f"{name}={value!r}"


@contextlib.contextmanager
def command_line_names() -> Iterator[None]:
    """Within it, messages name options as `rewardkit eval math` spells them."""
    _names.append(_COMMAND_LINE)
    try:
        yield
    finally:
        _names.pop()
