"""Accuracy and format rewards ported from open-r1 (TRL's GRPOTrainer passes `completions`;
its datasets name the gold column `solution`), written for rewardkit."""

from __future__ import annotations

import re

from rewardkit import reward

THINK_FORMAT = re.compile(r"^<think>\n.*?\n</think>\n<answer>\n.*?\n</answer>$", re.DOTALL)


def normalise(text: str) -> str:
    return " ".join(text.lower().split())


@reward(name="accuracy")
def accuracy(completion: str, solution: str) -> float:
    """1.0 when the completion's answer block equals the gold solution."""

    def answer_block(completions: str) -> str:  # its own `completions`: not the parameter
        match = re.search(r"<answer>(.*?)</answer>", completions, re.DOTALL)
        return match.group(1) if match else ""

    def gold() -> str:
        return normalise(solution)

    candidates = [answer_block(completions) for completions in (completion,)]
    # a closure over the parameter
    matches = lambda: normalise(candidates[0]) == gold()  # noqa: E731
    print(f"scored {completion[:20]!r}")
    return float(matches())


@reward(name="think_format")
def think_format(completion: str, solution: str = "") -> dict:
    """The format reward of open-r1: the response is a think block then an answer block."""
    ok = bool(THINK_FORMAT.match(completion))
    return dict(
        format=1.0 if ok else 0.0,
        reward=1.0 if ok else 0.0,
        length=len(completion),
    )
