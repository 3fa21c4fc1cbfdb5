"""`EvalOptions`: the options of one evaluation run, written once.

`run_math_eval(data, **keywords)` takes them as keywords (each keyword is a field here, with
the same default), or whole as `options=EvalOptions(...)`; the CLI builds one from its
arguments, and a task (`rewardkit.evaluation.tasks`) reads the ones it grades with. The defaults
are the math task's; `EvalOptions.for_task(CODE, ...)` starts from another task's
(`run_code_eval` does when given no options).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from rewardkit.evaluation.errors import EvalConfigError, ray_extra_missing
from rewardkit.evaluation.inputs.cases import (
    DEFAULT_GOLD_FIELDS,
    DEFAULT_MAX_LINE_BYTES,
    FieldNames,
)
from rewardkit.evaluation.main.generation import ChatEndpoint
from rewardkit.evaluation.main.pool import DEFAULT_WORKER_MEMORY
from rewardkit.evaluation.option_names import option
from rewardkit.evaluation.scoring import CaseResult
from rewardkit.evaluation.tasks import MATH, TASKS, Task
from rewardkit.evaluation.worker.grading import GradeOptions, Grader

_Function = TypeVar("_Function", bound=Callable[..., Any])

EXECUTORS = ("local", "ray")
SANDBOXES = ("auto", "bwrap", "wasm", "none")
"""The code task's sandbox backends (`none`: trusted code only, by name, with a warning)."""


@dataclass(frozen=True)
class EvalOptions:
    """How a run grades, where it runs and what it writes (`run_math_eval`'s keywords).

    `validate()` refuses out-of-range or contradictory options; `run_math_eval` calls it before
    opening any file, so messages name options as the caller spells them (CLI or Python)."""

    policy: str | None = "lenient"
    extract: str = "boxed"
    timeout: float = 1.0
    """Seconds per case (math), per test (code)."""
    sandbox: str = "auto"
    """Where the code task runs programs (`SANDBOXES`)."""
    memory: int | None = None
    """Bytes a program of the code task may use (None: the grader's default, 1 GiB)."""
    fields: FieldNames = field(default_factory=FieldNames)
    limit: int | None = None
    skip_bad: bool = False
    workers: int | None = None
    executor: str = "local"
    ray_address: str | None = None
    output: str | Path | None = None
    resume: bool = False
    overwrite: bool = False
    force_resume: bool = False
    report: str | Path | None = None
    html: str | Path | None = None
    generation: ChatEndpoint | None = None
    concurrency: int = 8
    grader: Grader | None = None
    chunk_size: int | None = None
    on_result: Callable[[CaseResult], None] | None = None
    progress: bool = False
    worker_memory: int | None = DEFAULT_WORKER_MEMORY
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES

    @classmethod
    def for_task(cls, task: Task | str, **fields: Any) -> EvalOptions:
        """Options with `task`'s defaults (`Task.defaults`: the code task's extract mode,
        per-test timeout, ...) and `fields` replacing them."""
        task = TASKS[task] if isinstance(task, str) else task
        return cls(**{**task.defaults, **fields})

    @classmethod
    def of(
        cls,
        options: EvalOptions | None,
        keywords: Mapping[str, Any],
        *,
        caller: str,
        task: Task = MATH,
    ) -> EvalOptions:
        """`options` (default: `task`'s defaults) with `keywords` replacing fields; an unknown
        keyword is a `TypeError` naming `caller`, as Python's own would be. `fields=None` is the
        default field names (as `run_math_eval` always took it)."""
        names = {item.name for item in dataclasses.fields(cls)}
        for name in keywords:
            if name not in names:
                raise TypeError(f"{caller}() got an unexpected keyword argument {name!r}")
        base = options if options is not None else cls.for_task(task)
        if "fields" in keywords and keywords["fields"] is None:
            keywords = {**keywords, "fields": FieldNames()}
        return dataclasses.replace(base, **keywords)

    @property
    def grading(self) -> GradeOptions:
        """The options a grader call takes (what worker processes need of these)."""
        return GradeOptions(
            policy=self.policy or "",
            extract=self.extract,
            timeout=self.timeout,
            sandbox=self.sandbox,
            memory=self.memory,
        )

    def resolved(self, task: Task) -> EvalOptions:
        """These options as `task` reads its records: the default gold field names are the
        task's own (`tests` for code)."""
        if self.fields.gold != DEFAULT_GOLD_FIELDS or task.gold_fields == DEFAULT_GOLD_FIELDS:
            return self
        return dataclasses.replace(
            self, fields=dataclasses.replace(self.fields, gold=task.gold_fields)
        )

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

    def validate(self, task: Task = MATH) -> None:
        """Refuse options out of range or contradicting each other, or that `task` does not
        take (`EvalConfigError`)."""
        _validate_grading(self, task)
        _validate_execution(self)
        _validate_outputs(self)
        if self.limit is not None and self.limit < 0:
            raise EvalConfigError(f"{option('limit')} must be >= 0, got {self.limit}")
        if self.worker_memory is not None and self.worker_memory < 0:
            raise EvalConfigError(f"worker memory must be >= 0 bytes, got {self.worker_memory}")
        if self.max_line_bytes < 1:
            raise EvalConfigError(
                f"{option('max_line_bytes')} must be at least 1 byte, got {self.max_line_bytes}"
            )


def _other_task_hint(task: Task) -> str:
    """Advice for options made with another task's defaults (`EvalOptions()` is math's)."""
    if task is MATH:
        return ""
    return (
        f" (EvalOptions() holds the math task's defaults; "
        f"EvalOptions.for_task({task.name!r}, ...) starts from the {task.name} task's)"
    )


def _validate_grading(options: EvalOptions, task: Task) -> None:
    if task.policies and options.policy not in task.policies:
        raise EvalConfigError(
            f"policy must be one of {', '.join(task.policies)}, got {options.policy!r}"
        )
    if not task.policies and options.policy is not None:
        raise EvalConfigError(
            f"the {task.name} task has no policy, got {options.policy!r}" + _other_task_hint(task)
        )
    if options.extract not in task.extract_modes:
        raise EvalConfigError(
            f"extract must be one of {', '.join(task.extract_modes)}, got {options.extract!r}"
            + _other_task_hint(task)
        )
    if not options.timeout > 0:
        raise EvalConfigError(
            f"timeout must be a positive number of seconds, got {options.timeout!r}"
        )
    _validate_sandbox(options, task)


def _validate_sandbox(options: EvalOptions, task: Task) -> None:
    """`sandbox` and `memory` are the options of tasks that run model code."""
    if not task.runs_code:
        for name, default in (("sandbox", "auto"), ("memory", None)):
            if getattr(options, name) != default:
                raise EvalConfigError(
                    f"{option(name)} is an option of tasks that run code (rewardkit eval code); "
                    f"the {task.name} task runs none"
                )
        return
    if options.sandbox not in SANDBOXES:
        raise EvalConfigError(
            f"sandbox must be one of {', '.join(SANDBOXES)}, got {options.sandbox!r}"
        )
    if options.memory is not None and options.memory < 16 << 20:
        raise EvalConfigError(
            f"{option('memory')} must be at least 16M (bytes a program may use), "
            f"got {options.memory}"
        )


def _validate_execution(options: EvalOptions) -> None:
    workers, executor = options.workers, options.executor
    if workers is not None and workers < 0:
        raise EvalConfigError(f"workers must be >= 0 (0 grades in this process), got {workers}")
    if executor not in EXECUTORS:
        raise EvalConfigError(f"executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    if executor == "ray" and importlib.util.find_spec("ray") is None:
        # before any output is opened: a missing extra is a usage error, not a traceback mid-run
        raise EvalConfigError(ray_extra_missing())


def _validate_outputs(options: EvalOptions) -> None:
    output, resume, overwrite = option("output"), option("resume"), option("overwrite")
    if options.resume and options.output is None:
        raise EvalConfigError(f"{resume} needs {output}, the results file it continues")
    if options.overwrite and options.output is None:
        raise EvalConfigError(f"{overwrite} needs {output}, the results file it replaces")
    if options.resume and options.overwrite:
        raise EvalConfigError(
            f"{resume} continues the results file and {overwrite} replaces it: choose one"
        )
    if options.force_resume and not options.resume:
        raise EvalConfigError(f"{option('force_resume')} goes with {resume}")


def option_keywords(function: _Function | None = None, *, task: Task = MATH) -> Any:
    """Show `EvalOptions`' fields as `function`'s keywords in place of its `**keywords` (for
    `help()` and `inspect.signature`), with `task`'s defaults, so the keywords are written once,
    in `EvalOptions`. Used bare (`@option_keywords`, the math task) or as
    `@option_keywords(task=CODE)`."""
    if function is None:
        return lambda inner: option_keywords(inner, task=task)
    signature = inspect.signature(function)
    parameters = [
        parameter
        for parameter in signature.parameters.values()
        if parameter.kind is not inspect.Parameter.VAR_KEYWORD
    ]
    defaults = EvalOptions.for_task(task)
    for item in dataclasses.fields(EvalOptions):
        parameters.append(
            inspect.Parameter(
                item.name,
                inspect.Parameter.KEYWORD_ONLY,
                default=getattr(defaults, item.name),
                annotation=item.type,
            )
        )
    function.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    return function
