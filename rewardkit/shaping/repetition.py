"""N-gram repetition penalty: Appendix C.2 of "Demystifying Long Chain-of-Thought Reasoning in
LLMs" (Yeo et al., 2025), as open-r1's ``get_repetition_penalty_reward`` implements it (English:
lower-cased, whitespace-split words)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, ClassVar

from rewardkit.runtime.define.rewards import BaseReward


def _check(ngram_size: Any, max_penalty: Any) -> None:
    if isinstance(ngram_size, bool) or not isinstance(ngram_size, int) or ngram_size < 1:
        raise ValueError(f"ngram_size must be a positive integer, got {ngram_size!r}")
    if (
        isinstance(max_penalty, bool)
        or not isinstance(max_penalty, (int, float))
        or max_penalty > 0
    ):
        raise ValueError(
            f"max_penalty {max_penalty!r} should not be positive (it is the most negative reward)"
        )


def repetition_penalty_score(text: str, ngram_size: int = 3, max_penalty: float = -1.0) -> float:
    """``(1 - distinct n-grams / n-grams) * max_penalty`` over the lower-cased words of ``text``;
    0.0 for an empty text or one with fewer than ``ngram_size`` words (open-r1's formula).

    Text with every n-gram distinct scores 0.0; text repeating one n-gram throughout approaches
    ``max_penalty``.
    """
    _check(ngram_size, max_penalty)
    if text == "":
        return 0.0
    return repeated_fraction(text.lower().split(), ngram_size) * max_penalty


def repeated_fraction(items: Sequence[Hashable], ngram_size: int) -> float:
    """``1 - distinct n-grams / n-grams`` of ``items`` (0.0 when there are fewer than ``ngram_size``)."""
    if len(items) < ngram_size:
        return 0.0
    ngrams = list(zip(*[items[i:] for i in range(ngram_size)]))
    return 1 - len(set(ngrams)) / len(ngrams)


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


class TokenRepetitionPenalty(BaseReward):
    """The same penalty over the completion's token ids (``completion_ids``, which TRL and
    rewardkit's verl managers pass): TRL's ``trl.rewards.get_repetition_penalty_reward``, whose
    n-grams are tokens, not words; ``TokenRepetitionPenalty(ngram_size=3, max_penalty=-1.0)``."""

    name: ClassVar[str] = "token_repetition_penalty_reward"

    def __init__(self, ngram_size: int = 3, max_penalty: float = -1.0) -> None:
        _check(ngram_size, max_penalty)
        self.ngram_size = ngram_size
        self.max_penalty = float(max_penalty)

    def call(self, completion_ids: list[int]) -> float:
        """The penalty (``<= 0``) for the repeated token n-grams of the completion."""
        scaling = repeated_fraction(completion_ids, self.ngram_size)
        return scaling * self.max_penalty if scaling else 0.0

    def __repr__(self) -> str:
        return (
            f"TokenRepetitionPenalty(ngram_size={self.ngram_size}, max_penalty={self.max_penalty})"
        )
