"""A team's reward: a correct boxed answer scores 1, halved when the response runs too long."""

from rewardkit import reward
from rewardkit.math import grade


@reward(name="concise_math")
def concise_math(final_response: str, answer: str, max_length: int = 2000) -> dict:
    correct = grade(final_response, answer).correct
    too_long = len(final_response) > max_length
    score = float(correct) * (0.5 if too_long else 1.0)
    return {"reward": score, "correct": correct, "too_long": too_long}
