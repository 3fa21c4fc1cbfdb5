"""Why a graded case did not pass: one tag per non-passing case, shared by graders and the eval runner."""

from __future__ import annotations

from enum import Enum


class FailureTag(str, Enum):
    """The single reason a case did not pass.

    ``ADAPTER_ERROR`` and ``HARNESS_ERROR`` are our side's failures (the model endpoint,
    the harness or a bad gold) and are excluded from the score's denominator.
    """

    NO_ANSWER = "NO_ANSWER"
    """Nothing could be extracted from the response (no box, truncated reasoning)."""
    WRONG_ANSWER = "WRONG_ANSWER"
    """An answer was extracted and did not match the gold (including hedges and timeouts)."""
    ADAPTER_ERROR = "ADAPTER_ERROR"
    """The model endpoint failed (transport, auth, rate limit) after retries."""
    HARNESS_ERROR = "HARNESS_ERROR"
    """Our side failed: an unparseable gold, a malformed input line, a crashed worker."""

    def __str__(self) -> str:
        return self.value
