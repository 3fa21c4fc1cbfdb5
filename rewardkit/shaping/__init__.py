"""Built-in shaping rewards: format, tag count, reasoning steps, repetition and length.

Each is defined from its published formula (cited in its docstring) as a pure scoring function
(``*_score``, testable alone) and a reward on top of it: plain ``@reward`` functions for the
formulas without parameters, ``BaseReward`` classes (instances carry their parameters and
pickle by value) for those with. All are registered built-ins, imported on first use.
"""

from rewardkit.shaping.format import (
    reasoning_steps_reward,
    reasoning_steps_score,
    tag_count_reward,
    tag_count_score,
    think_answer_format_reward,
    think_answer_format_score,
)
from rewardkit.shaping.length import (
    CosineScaledReward,
    SoftOverlongPunishment,
    cosine_scaled_score,
    len_reward,
    len_reward_scores,
    open_r1_len_reward,
    soft_overlong_punishment_score,
)
from rewardkit.shaping.repetition import (
    RepetitionPenalty,
    TokenRepetitionPenalty,
    repetition_penalty_score,
)

__all__ = [
    "CosineScaledReward",
    "RepetitionPenalty",
    "SoftOverlongPunishment",
    "TokenRepetitionPenalty",
    "cosine_scaled_score",
    "len_reward",
    "len_reward_scores",
    "open_r1_len_reward",
    "reasoning_steps_reward",
    "reasoning_steps_score",
    "repetition_penalty_score",
    "soft_overlong_punishment_score",
    "tag_count_reward",
    "tag_count_score",
    "think_answer_format_reward",
    "think_answer_format_score",
]
