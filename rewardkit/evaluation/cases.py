"""Where `rewardkit.evaluation.cases` was: its public names, now in `evaluation.inputs.cases`.

Kept so that imports written against it (docs/eval.md names `numbered_lines` here) still work.
"""

from rewardkit.evaluation.inputs.cases import (
    DEFAULT_GOLD_FIELDS,
    DEFAULT_MAX_LINE_BYTES,
    DecidedCase,
    EvalInputError,
    FieldNames,
    MathCase,
    cases_of_lines,
    numbered_lines,
    read_cases,
)

__all__ = [
    "DEFAULT_GOLD_FIELDS",
    "DEFAULT_MAX_LINE_BYTES",
    "DecidedCase",
    "EvalInputError",
    "FieldNames",
    "MathCase",
    "cases_of_lines",
    "numbered_lines",
    "read_cases",
]
