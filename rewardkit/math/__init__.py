"""rewardkit's math answer grader: correct on the hard cases, safe, bounded in time, and fast.

Pipeline: extraction -> normalization -> representation -> comparison (see docs/math.md).
"""

from rewardkit.math.extraction import extract_answer, extract_boxed, unwrap_gold
from rewardkit.math.grading import (
    MAX_GOLD_LENGTH,
    MAX_RESPONSE_LENGTH,
    MathGraderError,
    compare_answers,
    grade,
    is_equivalent,
)
from rewardkit.math.normalization import normalize
from rewardkit.math.prm800k import (
    are_equal_under_sympy,
    count_unknown_letters_in_expr,
    grade_answer,
    should_allow_eval,
    split_tuple,
)
from rewardkit.math.sandbox import warm_up
from rewardkit.math.verdict import MathVerdict
from rewardkit.runtime.define.failures import FailureTag

__all__ = [
    "MAX_GOLD_LENGTH",
    "MAX_RESPONSE_LENGTH",
    "FailureTag",
    "MathGraderError",
    "MathVerdict",
    "are_equal_under_sympy",
    "compare_answers",
    "count_unknown_letters_in_expr",
    "extract_answer",
    "extract_boxed",
    "grade",
    "grade_answer",
    "is_equivalent",
    "normalize",
    "should_allow_eval",
    "split_tuple",
    "unwrap_gold",
    "warm_up",
]


def __getattr__(name: str) -> object:
    # math_reward needs the runtime's @reward; import it lazily so the grader works on its own.
    if name in ("math_reward", "MathHarnessError"):
        from rewardkit.math import reward

        return getattr(reward, name)
    raise AttributeError(f"module 'rewardkit.math' has no attribute {name!r}")
