"""`rewardkit eval`: grade model responses in batch, with typed failures, reports, workers and Ray.

The batch API is importable for training loops::

    from rewardkit.evaluation import run_math_eval, run_code_eval
    run = run_math_eval("responses.jsonl", workers=0)   # 0: grade in this process
    run.score, run.summary.failure_counts
    run_code_eval("programs.jsonl", sandbox="auto")     # programs against their tests

Its options are `EvalOptions`' fields, as keywords or whole: `run_math_eval(path, options=...)`.

Inside, a run is split along its process boundary: `inputs/` (the file, its blocks, cases),
`worker/` (grading blocks, in worker processes or this one), `main/` (executors, the pool,
results file, reports); `tasks` names what is graded (`math`, `code`), `runner` runs the
steps every task shares.
"""

from rewardkit.evaluation.errors import EvalOutputError, Interrupted
from rewardkit.evaluation.inputs.cases import (
    CodeCase,
    EvalInputError,
    FieldNames,
    MathCase,
    read_cases,
)
from rewardkit.evaluation.main.generation import AdapterError, ChatClient, ChatEndpoint
from rewardkit.evaluation.main.report import SCHEMA_VERSION
from rewardkit.evaluation.options import EvalOptions
from rewardkit.evaluation.runner import (
    EvalConfigError,
    EvalRun,
    run_code_eval,
    run_math_eval,
    sample_path,
)
from rewardkit.evaluation.scoring import CaseResult, Summary, summarize
from rewardkit.evaluation.worker.grading import GradeOptions

__all__ = [
    "SCHEMA_VERSION",
    "AdapterError",
    "CaseResult",
    "ChatClient",
    "ChatEndpoint",
    "CodeCase",
    "EvalConfigError",
    "EvalInputError",
    "EvalOptions",
    "EvalOutputError",
    "EvalRun",
    "FieldNames",
    "GradeOptions",
    "Interrupted",
    "MathCase",
    "Summary",
    "read_cases",
    "run_code_eval",
    "run_math_eval",
    "sample_path",
    "summarize",
]
