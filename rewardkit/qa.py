"""SQuAD-style QA grading (answer normalization, token F1, exact match) and ``qa_f1_reward``.

Follows the official SQuAD v1.1 / HotpotQA evaluation scripts: lower-case, drop punctuation
and the articles a/an/the, collapse whitespace, then compare bags of tokens. As in HotpotQA,
a yes/no/noanswer prediction or gold scores zero unless both sides are equal.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rewardkit.runtime.define.rewards import reward

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)
_CLOSED_ANSWERS = frozenset({"yes", "no", "noanswer"})


def normalize_answer(text: str) -> str:
    """SQuAD normalization: lower-case, no punctuation, no articles, single spaces."""
    lowered = text.lower()
    without_punctuation = "".join(ch for ch in lowered if ch not in _PUNCTUATION)
    without_articles = _ARTICLES.sub(" ", without_punctuation)
    return " ".join(without_articles.split())


@dataclass(frozen=True)
class QAScores:
    """Token-level precision, recall, F1 and exact match of one prediction against one gold."""

    f1: float
    precision: float
    recall: float
    em: float


def _score_one(prediction: str, gold: str) -> QAScores:
    normalized_prediction = normalize_answer(prediction)
    normalized_gold = normalize_answer(gold)
    em = float(normalized_prediction == normalized_gold)
    closed = normalized_prediction in _CLOSED_ANSWERS or normalized_gold in _CLOSED_ANSWERS
    if closed and normalized_prediction != normalized_gold:
        return QAScores(0.0, 0.0, 0.0, 0.0)
    prediction_tokens = normalized_prediction.split()
    gold_tokens = normalized_gold.split()
    overlap = sum((Counter(prediction_tokens) & Counter(gold_tokens)).values())
    if overlap == 0:
        return QAScores(0.0, 0.0, 0.0, em)
    precision = overlap / len(prediction_tokens)
    recall = overlap / len(gold_tokens)
    return QAScores(2 * precision * recall / (precision + recall), precision, recall, em)


def qa_scores(prediction: str, gold: str | Sequence[str]) -> QAScores:
    """Score ``prediction`` against a gold answer, or the best of several acceptable golds."""
    if not isinstance(prediction, str):
        raise TypeError(f"qa_scores: prediction must be a str, got {type(prediction).__name__}")
    golds = [gold] if isinstance(gold, str) else list(gold)
    if not golds or not all(isinstance(item, str) for item in golds):
        raise TypeError(f"qa_scores: gold must be a str or a non-empty sequence of str, got {gold!r}")
    return max((_score_one(prediction, item) for item in golds), key=lambda s: (s.f1, s.em))


def f1_score(prediction: str, gold: str | Sequence[str]) -> tuple[float, float, float]:
    """``(f1, precision, recall)`` of ``prediction`` against ``gold``, as AgentFly's helper returns."""
    scores = qa_scores(prediction, gold)
    return scores.f1, scores.precision, scores.recall


def em_score(prediction: str, gold: str | Sequence[str]) -> float:
    """1.0 when ``prediction`` equals ``gold`` after normalization, else 0.0."""
    return qa_scores(prediction, gold).em


@reward(name="qa_f1_reward")
def qa_f1_reward(final_response: str, answer: str | Sequence[str], trajectory: Any = None) -> dict[str, float]:
    """Built-in QA reward: token F1 of the final response against the answer (or answers).

    ``trajectory`` is accepted for AgentFly compatibility and not used.
    """
    scores = qa_scores(final_response, answer)
    return {
        "reward": scores.f1,
        "f1": scores.f1,
        "em": scores.em,
        "precision": scores.precision,
        "recall": scores.recall,
    }
