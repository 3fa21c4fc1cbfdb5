"""The tasks `rewardkit eval` grades (`rewardkit eval NAME`): one `Task` per kind of response.

A run is the same for every task (input, worker and main sides, results file, reports, exit
statuses); a task names itself, its shipped sample and default grader, the outcomes its cases
can end in, the options it takes and their defaults, and says how the CLI presents it. Two
tasks: `math` (an answer against a gold) and `code` (a program against a data set's tests).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

OUR_SIDE = ("ADAPTER_ERROR", "HARNESS_ERROR")
"""The outcomes every task has that are our side's failures (the endpoint, the harness)."""


@dataclass(frozen=True)
class Task:
    """One kind of evaluation: its name on the command line, in reports and in the results
    file's metadata (a resumed run must be of the same task)."""

    name: str
    help: str
    """One line for `rewardkit eval --help`."""
    description: str
    """The task's own `--help` text."""
    input_help: str
    """What a line of the input holds."""
    sample: str
    """The file in `rewardkit/evaluation/data/` graded when no input is given."""
    default_grader: str
    """The grader used unless `grader=` replaces it, as reports name it."""
    policies: tuple[str, ...]
    """The values `policy` may take (the first is the default; none: the task has no policy)."""
    extract_modes: tuple[str, ...]
    """The values `extract` may take (the first is the default)."""
    tags: tuple[str, ...] = ("NO_ANSWER", "WRONG_ANSWER", *OUR_SIDE)
    """The failure tags a case can end with, in the order tables and reports show them."""
    excluded: tuple[str, ...] = OUR_SIDE
    """The tags that are our side's failures: left out of the score's denominator."""
    gold: str = "gold"
    """What a case is graded against, as messages name it (`gold`, `tests`)."""
    gold_fields: tuple[str, ...] = ("gold", "answer")
    """The fields tried for it, in order, when none is named."""
    defaults: Mapping[str, Any] = field(default_factory=dict, compare=False)
    """`EvalOptions` fields whose default differs for this task (`EvalOptions.for_task`)."""
    raw_lines: bool = True
    """Workers grade raw lines of a file (parsing each themselves, the fast path for
    microsecond grades); False: the main process parses cases and sends them."""
    runs_code: bool = False
    """Its grader runs model code in a sandbox (`--sandbox`, `--memory`)."""
    generation: bool = True
    """It can ask a chat endpoint for responses (`--model`) and grade with a served reward
    (`--reward-url`)."""

    @property
    def prog(self) -> str:
        """The command, as messages start: `rewardkit eval math`."""
        return f"rewardkit eval {self.name}"

    def sample_path(self) -> Path:
        """The shipped sample's path."""
        data = resources.files("rewardkit.evaluation").joinpath("data", self.sample)
        return Path(str(data))


MATH = Task(
    name="math",
    help="grade MATH-style responses against gold answers",
    description="Grade MATH-style responses (final answer in \\boxed{}) against gold answers. "
    "With no file, grades the sample shipped with rewardkit.",
    input_help="JSONL with an id, a response and a gold answer per line (default: the shipped "
    "sample)",
    sample="math_sample.jsonl",
    default_grader="rewardkit.math.grade",
    policies=("lenient", "strict"),
    extract_modes=("boxed", "auto"),
)

CODE_TAGS = (
    "NO_CODE",
    "SYNTAX_ERROR",
    "RUNTIME_ERROR",
    "WRONG_OUTPUT",
    "TIMEOUT",
    "MEMORY_LIMIT",
    "SANDBOX_ERROR",
)
"""`rewardkit.code.CodeTag`'s values, in its order (a test holds them equal)."""

CODE = Task(
    name="code",
    help="run the programs of responses against their tests, in a sandbox",
    description="Run the program in each response (its last ```python block) against the "
    "case's tests (stdin/stdout, fn_name calls, HumanEval check, MBPP asserts) inside a "
    "sandbox. With no file, grades the sample shipped with rewardkit.",
    input_help="JSONL with an id, a response and a tests object per line (default: the shipped "
    "sample)",
    sample="code_sample.jsonl",
    default_grader="rewardkit.code.grade_code",
    policies=(),
    extract_modes=("last", "first", "raw"),
    tags=(*CODE_TAGS, *OUR_SIDE),
    excluded=("SANDBOX_ERROR", *OUR_SIDE),
    gold="tests",
    gold_fields=("tests",),
    defaults={"policy": None, "extract": "last", "timeout": 10.0, "worker_memory": None},
    raw_lines=False,
    runs_code=True,
    generation=False,
)

TASKS: dict[str, Task] = {task.name: task for task in (MATH, CODE)}
"""Every task, by name (the CLI offers them in this order)."""
