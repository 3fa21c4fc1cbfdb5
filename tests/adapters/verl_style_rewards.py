"""Rewards written the verl/TinyZero/search-r1 way, as those projects write them: plain functions
``compute_score(solution_str, ground_truth, method="strict", format_score=..., score=1.0)`` whose
returns are ``0``, ``score`` or ``format_score`` (no extras, no annotations), plus one annotated
the way the issue quotes them (``score: float = 1.0``, ``-> float``). The countdown's equation is
evaluated with ``ast`` (TinyZero calls ``eval``; untrusted text never reaches ``eval`` here)."""

from __future__ import annotations

import ast
import operator
import re
import string

from rewardkit import reward

# -- TinyZero's multiply ------------------------------------------------------------------------


def _multiply_answer(solution_str):
    if "Assistant:" not in solution_str:
        return None
    solution_str = solution_str.split("Assistant:", 1)[1]
    matches = list(re.finditer(r"<answer>(.*?)</answer>", solution_str))
    if not matches:
        return None
    final_answer = matches[-1].group(1).strip()
    try:
        int(final_answer)
    except ValueError:
        return None
    return final_answer


def multiply_score(solution_str, ground_truth, method="strict", format_score=0.1, score=1.0):
    answer = _multiply_answer(solution_str)
    if answer is None:
        return 0
    else:
        if int(answer) == int(ground_truth):
            return score
        else:
            return format_score


# -- TinyZero's countdown -------------------------------------------------------------------------

_OPERATORS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


def _countdown_equation(solution_str):
    if "Assistant:" in solution_str:
        solution_str = solution_str.split("Assistant:", 1)[1]
    elif "<|im_start|>assistant" in solution_str:
        solution_str = solution_str.split("<|im_start|>assistant", 1)[1]
    else:
        return None
    matches = list(re.finditer(r"<answer>(.*?)</answer>", solution_str))
    return matches[-1].group(1).strip() if matches else None


def _uses_each_number_once(equation, available):
    numbers = sorted(int(n) for n in re.findall(r"\d+", equation))
    return numbers == sorted(available)


def _evaluate(node):
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    raise ValueError("not an arithmetic expression")


def countdown_score(solution_str, ground_truth, method="strict", format_score=0.1, score=1.0):
    target = ground_truth["target"]
    numbers = ground_truth["numbers"]
    equation = _countdown_equation(solution_str)
    if equation is None:
        return 0
    if not _uses_each_number_once(equation, numbers):
        return format_score
    try:
        result = _evaluate(ast.parse(equation, mode="eval"))
        if abs(result - target) < 1e-5:
            return score
        else:
            return format_score
    except (SyntaxError, ValueError, ZeroDivisionError):
        return format_score


# -- search-r1's exact match and substring exact match ------------------------------------------


def _normalize_answer(s):
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def _em_check(prediction, golden_answers):
    if isinstance(golden_answers, str):
        golden_answers = [golden_answers]
    prediction = _normalize_answer(prediction)
    return int(any(_normalize_answer(golden) == prediction for golden in golden_answers))


def _subem_check(prediction, golden_answers):
    if isinstance(golden_answers, str):
        golden_answers = [golden_answers]
    prediction = _normalize_answer(prediction)
    return int(any(_normalize_answer(golden) in prediction for golden in golden_answers))


def _search_answer(solution_str):
    matches = list(re.finditer(r"<answer>(.*?)</answer>", solution_str, re.DOTALL))
    if len(matches) <= 1:  # the prompt holds one <answer> example; the model's is the second
        return None
    return matches[-1].group(1).strip()


def compute_score_em(solution_str, ground_truth, method="strict", format_score=0.0, score=1.0):
    answer = _search_answer(solution_str)
    if answer is None:
        return 0
    else:
        if _em_check(answer, ground_truth["target"]):
            return score
        else:
            return format_score


def compute_score_subem(solution_str, ground_truth, method="strict", format_score=0.0, score=1.0):
    answer = _search_answer(solution_str)
    if answer is None:
        return 0
    else:
        if _subem_check(answer, ground_truth["target"]):
            return score
        else:
            return format_score


# -- annotated, as the issue quotes them; and decorated -----------------------------------------


def annotated_em(
    solution_str: str, ground_truth: dict, format_score: float = 0.0, score: float = 1.0
) -> float:
    answer = _search_answer(solution_str)
    return (
        score if answer is not None and _em_check(answer, ground_truth["target"]) else format_score
    )


@reward(name="verl_style_decorated", auto_register=False)
def decorated(solution_str, ground_truth, format_score=0.1, score=1.0):  # rewardkit: ignore[RK101]
    answer = _multiply_answer(solution_str)
    return 0 if answer is None else score if int(answer) == int(ground_truth) else format_score


def returns_a_parameter(solution_str, ground_truth, bonus):
    """No annotation, no default: ``bonus`` could be anything the caller passes."""
    return bonus if solution_str == ground_truth else 0.0
