"""Length rewards: DAPO's soft overlong punishment, open-r1's cosine length scaling and its
``len_reward`` (Kimi 1.5's length penalty over a GRPO group)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

from rewardkit.runtime.define.group_rewards import group_reward
from rewardkit.runtime.define.results import RewardResult
from rewardkit.runtime.define.rewards import BaseReward


def _count(value: Any, what: str, *, positive: bool = False) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < (1 if positive else 0):
        raise ValueError(
            f"{what} must be a {'positive' if positive else 'non-negative'} integer, got {value!r}"
        )
    return value


# -- DAPO ----------------------------------------------------------------------------------


def soft_overlong_punishment_score(length: int, max_length: int, cache: int) -> float:
    """DAPO's soft overlong punishment, Eq. (13) of "DAPO: An Open-Source LLM Reinforcement
    Learning System at Scale" (Yu et al., 2025), for a completion of ``length`` tokens::

        0                                   if length <= max_length - cache
        ((max_length - cache) - length) / cache   if max_length - cache < length <= max_length
        -1                                  if length > max_length

    A penalty only (never a bonus for short completions), growing linearly over the last
    ``cache`` tokens before ``max_length``. TRL's ``get_soft_overlong_punishment`` computes the same.
    """
    _count(length, "length")
    if length <= max_length - cache:
        return 0.0
    if length <= max_length:
        return (max_length - cache - length) / cache
    return -1.0


class SoftOverlongPunishment(BaseReward):
    """DAPO's soft overlong punishment of ``completion_length`` (tokens; the TRL, verl and
    OpenRLHF adapters fill it). Defaults are DAPO's: ``max_completion_length=20480`` (the
    generation limit) and ``soft_punish_cache=4096``."""

    name: ClassVar[str] = "soft_overlong_punishment_reward"

    def __init__(self, max_completion_length: int = 20480, soft_punish_cache: int = 4096) -> None:
        _count(max_completion_length, "max_completion_length", positive=True)
        _count(soft_punish_cache, "soft_punish_cache")
        if soft_punish_cache > max_completion_length:
            raise ValueError(
                f"soft_punish_cache ({soft_punish_cache}) cannot exceed max_completion_length ({max_completion_length})"
            )
        self.max_completion_length = max_completion_length
        self.soft_punish_cache = soft_punish_cache

    def call(self, completion_length: int) -> float:
        """The punishment (``<= 0``) for a completion of ``completion_length`` tokens."""
        return soft_overlong_punishment_score(
            completion_length, self.max_completion_length, self.soft_punish_cache
        )

    def __repr__(self) -> str:
        return (
            f"SoftOverlongPunishment(max_completion_length={self.max_completion_length}, "
            f"soft_punish_cache={self.soft_punish_cache})"
        )


# -- correctness, for the rewards that scale it --------------------------------------------


def graded_correct(final_response: str, answer: str) -> bool | None:
    """Whether the response's last ``\\boxed{}`` matches ``answer`` (rewardkit's math grader);
    ``None`` when the gold itself cannot be parsed (open-r1 skips such examples). Other grader
    failures raise ``MathHarnessError``, as ``math_reward`` does."""
    from rewardkit.math.grading import grade
    from rewardkit.math.reward import MathHarnessError
    from rewardkit.runtime.define.failures import FailureTag

    verdict = grade(final_response, answer)
    if verdict.tag is FailureTag.HARNESS_ERROR:
        if verdict.reason == "bad_gold":
            return None
        raise MathHarnessError(verdict)
    return verdict.correct


# -- open-r1: cosine scaling ---------------------------------------------------------------


def cosine_scaled_score(
    length: int,
    correct: bool,
    *,
    max_len: int = 1000,
    min_value_wrong: float = -1.0,
    max_value_wrong: float = -0.5,
    min_value_correct: float = 0.5,
    max_value_correct: float = 1.0,
    cap: bool = True,
) -> float:
    """open-r1's ``get_cosine_scaled_reward`` (after Yeo et al., 2025, "Demystifying Long
    Chain-of-Thought Reasoning in LLMs")::

        min_value + 0.5 * (max_value - min_value) * (1 + cos(pi * length / max_len))

    with ``(min_value, max_value)`` = ``(min_value_correct, max_value_correct)`` for a correct
    answer (shorter scores higher) and ``(max_value_wrong, min_value_wrong)`` for a wrong one
    (longer is penalised less). ``cap`` (default, as TRL does): ``length`` is capped at
    ``max_len``, where the paper's schedule ends; open-r1's uncapped cosine (``cap=False``) turns
    back up past it, so a correct answer of twice ``max_len`` scores the maximum again.
    """
    _count(length, "length")
    _count(max_len, "max_len", positive=True)
    cosine = math.cos((min(length, max_len) if cap else length) / max_len * math.pi)
    if correct:
        low, high = min_value_correct, max_value_correct
    else:
        low, high = max_value_wrong, min_value_wrong
    return low + 0.5 * (high - low) * (1.0 + cosine)


Grader = Literal["rewardkit", "open-r1", "trl"]
LengthUnit = Literal["chars", "tokens"]


def correct_by(grader: Grader, final_response: str, answer: str) -> bool | None:
    """Correctness by ``grader``: rewardkit's math grader (``graded_correct``) or open-r1's or
    TRL's math_verify grading (``rewardkit.shaping.peer_graders``); ``None``: a gold that does
    not parse."""
    if grader == "rewardkit":
        return graded_correct(final_response, answer)
    from rewardkit.shaping.peer_graders import peer_correct

    return peer_correct(final_response, answer, grader)


class CosineScaledReward(BaseReward):
    """open-r1's cosine-scaled correctness reward of ``final_response`` against ``answer``.

    Defaults are ``get_cosine_scaled_reward``'s values with rewardkit's choices: correctness from
    rewardkit's math grader, length in characters capped at ``max_len``, a gold that cannot be
    parsed makes the sample not applicable. ``grader``, ``length`` (``"tokens"``: the
    ``completion_length`` TRL and rewardkit's verl managers pass), ``cap`` and ``bad_gold`` (a
    number to score instead) change each; ``CosineScaledReward.open_r1()`` and
    ``CosineScaledReward.trl(max_len)`` are open-r1's and TRL's exact rewards."""

    name: ClassVar[str] = "cosine_scaled_reward"
    extra_keys: ClassVar[Mapping[str, type]] = {"correct": bool, "length": int}

    def __init__(
        self,
        *,
        max_len: int = 1000,
        min_value_wrong: float = -1.0,
        max_value_wrong: float = -0.5,
        min_value_correct: float = 0.5,
        max_value_correct: float = 1.0,
        grader: Grader = "rewardkit",
        length: LengthUnit = "chars",
        cap: bool = True,
        bad_gold: float | None = None,
    ) -> None:
        _count(max_len, "max_len", positive=True)
        if grader not in ("rewardkit", "open-r1", "trl"):
            raise ValueError(f"grader must be 'rewardkit', 'open-r1' or 'trl', got {grader!r}")
        if length not in ("chars", "tokens"):
            raise ValueError(f"length must be 'chars' or 'tokens', got {length!r}")
        self.options = {
            "max_len": max_len,
            "min_value_wrong": float(min_value_wrong),
            "max_value_wrong": float(max_value_wrong),
            "min_value_correct": float(min_value_correct),
            "max_value_correct": float(max_value_correct),
            "cap": bool(cap),
        }
        self.grader: Grader = grader
        self.length: LengthUnit = length
        self.bad_gold = None if bad_gold is None else float(bad_gold)

    @classmethod
    def open_r1(cls, *, max_len: int = 1000, **values: float) -> CosineScaledReward:
        """open-r1's ``get_cosine_scaled_reward`` exactly: its math_verify grading, characters,
        no cap, 1.0 for a gold that does not parse."""
        return cls(
            max_len=max_len, grader="open-r1", length="chars", cap=False, bad_gold=1.0, **values
        )

    @classmethod
    def trl(cls, max_len: int, **values: float) -> CosineScaledReward:
        """TRL's ``trl.rewards.get_cosine_scaled_reward`` exactly: its math_verify grading, tokens
        (``completion_length``), capped, not applicable (TRL's ``None``) for a gold that does not parse."""
        return cls(max_len=max_len, grader="trl", length="tokens", cap=True, **values)

    def call(self, final_response: str, answer: str, completion_length: int | None = None) -> Any:
        """The cosine-scaled reward, with ``correct`` and ``length`` as extras."""
        if self.length == "tokens":
            if completion_length is None:
                raise ValueError(
                    "length='tokens' needs completion_length, which TRL and rewardkit's verl reward "
                    "managers pass; use length='chars' elsewhere"
                )
            size = completion_length
        else:
            size = len(final_response)
        correct = correct_by(self.grader, final_response, answer)
        if correct is None:
            if self.bad_gold is None:
                return RewardResult.not_applicable("the gold answer cannot be parsed")
            return {"reward": self.bad_gold, "correct": None, "length": size}
        score = cosine_scaled_score(size, correct, **self.options)  # type: ignore[arg-type]
        return {"reward": score, "correct": correct, "length": size}

    def __repr__(self) -> str:
        settings = {
            **self.options,
            "grader": self.grader,
            "length": self.length,
            "bad_gold": self.bad_gold,
        }
        return f"CosineScaledReward({', '.join(f'{k}={v!r}' for k, v in settings.items())})"


# -- open-r1: len_reward (a group reward) ---------------------------------------------------


def len_reward_scores(lengths: Sequence[int], correct: Sequence[bool]) -> list[float]:
    """Kimi 1.5's length reward (Kimi Team, 2025, "Kimi k1.5", Sec. 2.3.3) as open-r1's
    ``len_reward`` computes it over one group: ``lambda = 0.5 - (len - min_len) / (max_len -
    min_len)``, the reward ``lambda`` for a correct answer and ``min(0, lambda)`` for a wrong one;
    all 0.0 when every length is the same."""
    if len(lengths) != len(correct):
        raise ValueError(f"{len(lengths)} lengths but {len(correct)} correctness values")
    if not lengths:
        return []
    shortest, longest = min(lengths), max(lengths)
    if shortest == longest:
        return [0.0] * len(lengths)
    rewards = []
    for length, is_correct in zip(lengths, correct):
        value = 0.5 - (length - shortest) / (longest - shortest)
        rewards.append(float(value if is_correct else min(0, value)))
    return rewards


@group_reward(name="len_reward", over="group")
def len_reward(final_response: list[str], answer: list[str]) -> list[float]:
    """open-r1's ``len_reward`` over a group (the completions of one prompt): shorter correct
    answers score up to 0.5, longer wrong ones down to -0.5 (``len_reward_scores``). Lengths in
    characters; correctness from rewardkit's math grader, a gold it cannot parse counting as
    correct (as in open-r1, "to avoid penalizing")."""
    correct = [graded_correct(response, gold) for response, gold in zip(final_response, answer)]
    flags = [True if value is None else value for value in correct]
    return len_reward_scores([len(response) for response in final_response], flags)


@group_reward(name="open_r1_len_reward", over="batch")
def open_r1_len_reward(final_response: list[str], answer: list[str]) -> list[float]:
    """open-r1's ``len_reward`` exactly: lengths ranked over every completion of the call (under
    TRL, the whole batch of several prompts, not each prompt's group), correctness by open-r1's
    math_verify grading, a gold that does not parse counting as correct. ``len_reward`` is the
    per-group reading of the same formula."""
    from rewardkit.shaping.peer_graders import peer_correct

    correct = [
        peer_correct(response, gold, "open-r1") for response, gold in zip(final_response, answer)
    ]
    flags = [True if value is None else value for value in correct]
    return len_reward_scores([len(response) for response in final_response], flags)


__all__ = [
    "CosineScaledReward",
    "SoftOverlongPunishment",
    "cosine_scaled_score",
    "graded_correct",
    "len_reward",
    "len_reward_scores",
    "open_r1_len_reward",
    "soft_overlong_punishment_score",
]
