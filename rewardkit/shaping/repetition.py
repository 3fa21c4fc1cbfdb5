"""N-gram repetition penalty: Appendix C.2 of "Demystifying Long Chain-of-Thought Reasoning in
LLMs" (Yeo et al., 2025), as open-r1's ``get_repetition_penalty_reward`` implements it (English:
lower-cased, whitespace-split words)."""

from __future__ import annotations

from typing import Any, ClassVar

from rewardkit.rewards import BaseReward


def _check(ngram_size: Any, max_penalty: Any) -> None:
    if isinstance(ngram_size, bool) or not isinstance(ngram_size, int) or ngram_size < 1:
        raise ValueError(f"ngram_size must be a positive integer, got {ngram_size!r}")
    if isinstance(max_penalty, bool) or not isinstance(max_penalty, (int, float)) or max_penalty > 0:
        raise ValueError(f"max_penalty {max_penalty!r} should not be positive (it is the most negative reward)")


def repetition_penalty_score(text: str, ngram_size: int = 3, max_penalty: float = -1.0) -> float:
    """``(1 - distinct n-grams / n-grams) * max_penalty`` over the lower-cased words of ``text``;
    0.0 for an empty text or one with fewer than ``ngram_size`` words (open-r1's formula).

    Text with every n-gram distinct scores 0.0; text repeating one n-gram throughout approaches
    ``max_penalty``.
    """
    _check(ngram_size, max_penalty)
    if text == "":
        return 0.0
    words = text.lower().split()
    if len(words) < ngram_size:
        return 0.0
    ngrams = list(zip(*[words[i:] for i in range(ngram_size)]))
    scaling = 1 - len(set(ngrams)) / len(ngrams)
    return scaling * max_penalty


class RepetitionPenalty(BaseReward):
    """The n-gram repetition penalty of ``final_response`` (``repetition_penalty_score``);
    ``RepetitionPenalty(ngram_size=3, max_penalty=-1.0)`` (open-r1's defaults)."""

    name: ClassVar[str] = "repetition_penalty_reward"

    def __init__(self, ngram_size: int = 3, max_penalty: float = -1.0) -> None:
        _check(ngram_size, max_penalty)
        self.ngram_size = ngram_size
        self.max_penalty = float(max_penalty)

    def call(self, final_response: str) -> float:
        """The penalty (``<= 0``) for the repeated n-grams of the response."""
        return repetition_penalty_score(final_response, self.ngram_size, self.max_penalty)

    def __repr__(self) -> str:
        return f"RepetitionPenalty(ngram_size={self.ngram_size}, max_penalty={self.max_penalty})"
