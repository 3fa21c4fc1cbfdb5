"""The grader's result: one frozen record saying whether an answer matched, and which rule decided."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from rewardkit.runtime.define.failures import FailureTag

#: The rule names a verdict's ``reason`` can take (documented in docs/math.md).
REASONS: tuple[str, ...] = (
    "exact",
    "rational",
    "numeric",
    "symbolic",
    "text",
    "choice",
    "set",
    "interval",
    "tuple",
    "matrix",
    "equation",
    "undecided",
    "hedge",
    "guard",
    "timeout",
    "no_answer",
    "bad_gold",
    "crash",
    "overloaded",
)


_UNPRINTABLE = {code: f"\\x{code:02x}" for code in (*range(0x20), 0x7F)} | {0x0A: "\\n", 0x09: "\\t", 0x0D: "\\r"}


def quoted(text: str) -> str:
    """``text`` in single quotes as written (``'\\frac{1}{'``, not Python's ``'\\\\frac{1}{'``), for error texts.

    Backslashes stay single; only line breaks and other control characters are shown escaped, so
    that a message stays on one line.
    """
    return "'" + text.translate(_UNPRINTABLE) + "'"


@dataclass(frozen=True)
class MathVerdict:
    """Whether an answer matched its gold, why (``reason``), and the normalized forms compared."""

    correct: bool
    tag: FailureTag | None
    parsed_answer: str | None
    expected: str | None
    reason: str
    detail: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Freeze the detail mapping too, so a verdict can be cached and shared safely.
        object.__setattr__(self, "detail", MappingProxyType(dict(self.detail)))

    def __reduce__(self) -> tuple[type[MathVerdict], tuple[object, ...]]:
        # A mappingproxy cannot be pickled; verdicts cross process boundaries (eval workers, Ray).
        fields = (self.correct, self.tag, self.parsed_answer, self.expected, self.reason, dict(self.detail))
        return (MathVerdict, fields)
