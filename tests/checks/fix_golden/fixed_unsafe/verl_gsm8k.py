"""GSM8K rewards ported from verl's `reward_score/gsm8k.py` (its naming kept)."""

import re

from rewardkit import reward

_SOLUTION_CLIP_CHARS = 300


def extract_solution(solution_str: str, method: str = "strict") -> str | None:
    """The final number after `####` (strict) or the last number (flexible)."""
    solution_str = solution_str[-_SOLUTION_CLIP_CHARS:]
    if method == "strict":
        found = re.findall(r"#### (\-?[0-9\.\,]+)", solution_str)
        return found[-1].replace(",", "") if found else None
    numbers = re.findall(r"(\-?[0-9\.\,]+)", solution_str)
    return numbers[-1] if numbers else None


@reward(name="gsm8k_strict")
def gsm8k_strict(solution, ground_truth, method="strict"):
    # verl hands the decoded response over as `solution_str`
    answer = extract_solution(solution_str=solution, method=method)
    if answer is None:
        return {
            "score": 0.0,  # no `####` line
            "reward": 0.0,
            "formatted": False,
        }
    return {
        "score": float(answer == ground_truth),
        "reward": float(answer == ground_truth),
        "formatted": True,
    }


@reward(name="gsm8k_format")
def gsm8k_format(final_response: str) -> dict:
    """1.0 when the response ends with a `####` answer line."""
    lines = [line for line in final_response.splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    return {"format": float(last.startswith("####")), "reward": float(last.startswith("####")), "lines": len(lines)}
