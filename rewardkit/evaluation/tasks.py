"""The tasks `rewardkit eval` grades (`rewardkit eval NAME`): one `Task` per kind of response.

A run is the same for every task (input, worker and main sides, results file, reports, exit
statuses); a task names itself, its shipped sample and default grader, and says how the CLI
presents it. One task today: `math`.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path


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
    """The values `policy` may take (the first is the default)."""
    extract_modes: tuple[str, ...]
    """The values `extract` may take (the first is the default)."""

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

TASKS: dict[str, Task] = {task.name: task for task in (MATH,)}
"""Every task, by name (the CLI offers them in this order)."""
