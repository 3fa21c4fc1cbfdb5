"""rewardkit's code grader: a response's program run against a data set's tests, only inside a sandbox.

Pipeline: extraction -> test formats -> a syntax check on the host -> sandboxed runs
(``rewardkit.code.sandbox``) -> comparison on the host (see docs/code.md).
"""

from rewardkit.code.extraction import extract_code
from rewardkit.code.formats import CodeTestsError, parse_tests
from rewardkit.code.grading import CodeGraderError, grade_code, grade_code_async
from rewardkit.code.verdict import CodeTag, CodeVerdict, TestResult

__all__ = [
    "CodeGraderError",
    "CodeTag",
    "CodeTestsError",
    "CodeVerdict",
    "TestResult",
    "extract_code",
    "grade_code",
    "grade_code_async",
    "parse_tests",
]
