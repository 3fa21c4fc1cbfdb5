"""Hostile inputs in every mode of the grader, each call within twice its budget (issue 27, item 11).

The modes: the sandbox and in-process (``sandbox=False``), each under ``lenient`` and ``strict``.
The budget is the grader's own: CPU seconds (``timeout``), never wall time, so that the test holds
on a busy machine (load makes a call slower, not more expensive). A call's cost is measured the
same way: the CPU time of the calling thread (extraction, the fast path, and in-process the
symbolic work) plus the CPU time the sandbox's workers charged to the call's tasks
(``SymbolicSandbox.cpu_seconds``). Bombs whose arguments are expressions
(``\\binom{10^9}{5 \\cdot 10^8}``, ``\\Gamma(10^{10})``) are refused before sympy in every mode; as a
gold, such an input is a ``HARNESS_ERROR`` (``bad_gold``), not the model's wrong answer.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from hostile_corpus import EVALUATION_BOMBS, GOLDS, RELATION_BOMBS, hostile_responses

from rewardkit.math import FailureTag, MathVerdict, compare_answers, grade
from rewardkit.math.reward import MathHarnessError, math_reward
from rewardkit.math.sandbox import default_sandbox
from rewardkit.math.symbolic import warm_symbolic

BUDGET = 1.0  # the default timeout: CPU seconds of symbolic work
MODES = [
    pytest.param(sandbox, policy, id=f"{'sandbox' if sandbox else 'in-process'}-{policy}")
    for sandbox in (True, False)
    for policy in ("lenient", "strict")
]
EXPRESSION_BOMBS = EVALUATION_BOMBS[EVALUATION_BOMBS.index("\\binom{10^9}{5 \\cdot 10^8}") :]


@pytest.fixture(scope="module", autouse=True)
def _warm_in_process() -> None:
    # In-process, the first symbolic call imports sympy and builds the parser's tables (about a
    # second of CPU, once per process): a cold start, not the cost of an answer.
    warm_symbolic()


def _cost(call: Callable[[], MathVerdict]) -> tuple[MathVerdict, float]:
    """The verdict and the CPU seconds it cost: this thread's plus the workers' for its tasks."""
    sandbox = default_sandbox()
    thread_before, workers_before = time.thread_time(), sandbox.cpu_seconds()
    verdict = call()
    return verdict, (time.thread_time() - thread_before) + (sandbox.cpu_seconds() - workers_before)


@pytest.mark.parametrize(("sandbox", "policy"), MODES)
def test_every_hostile_input_is_an_ordinary_verdict_within_twice_the_budget(sandbox: bool, policy: str) -> None:
    over_budget, odd = [], []
    for response in hostile_responses():
        for gold in GOLDS:
            verdict, cost = _cost(lambda: grade(response, gold, extract="auto", policy=policy, timeout=BUDGET, sandbox=sandbox))  # noqa: B023
            if cost > 2 * BUDGET:
                over_budget.append((response[:80], gold, round(cost, 2), verdict.reason))
            if verdict.tag is FailureTag.HARNESS_ERROR:  # some entries are real mathematics (31337 + 1): right or wrong, never ours
                odd.append((response[:80], gold, verdict.tag, verdict.reason))
    assert over_budget == []
    assert odd == []


@pytest.mark.parametrize("bomb", EXPRESSION_BOMBS)
@pytest.mark.parametrize(("sandbox", "policy"), MODES)
def test_an_expression_bomb_is_refused_before_sympy_in_every_mode(bomb: str, sandbox: bool, policy: str) -> None:
    as_answer, cost = _cost(lambda: compare_answers(bomb, "x+1", policy=policy, timeout=BUDGET, sandbox=sandbox))
    assert (as_answer.correct, as_answer.tag, as_answer.reason) == (False, FailureTag.WRONG_ANSWER, "guard")
    assert cost <= 2 * BUDGET
    as_gold, cost = _cost(lambda: compare_answers("x+1", bomb, policy=policy, timeout=BUDGET, sandbox=sandbox))
    assert (as_gold.correct, as_gold.tag, as_gold.reason) == (False, FailureTag.HARNESS_ERROR, "bad_gold")
    assert f"gold '{bomb}' cannot be checked: " in as_gold.detail["error"]
    assert "refused before symbolic work" in as_gold.detail["error"]
    assert cost <= 2 * BUDGET
    assert compare_answers(bomb, bomb, policy=policy, sandbox=sandbox).reason == "exact"  # the same text still matches


@pytest.mark.parametrize(("answer", "gold"), RELATION_BOMBS)
@pytest.mark.parametrize(("sandbox", "policy"), MODES)
def test_relations_compared_by_their_solutions_stay_within_twice_the_budget(
    answer: str, gold: str, sandbox: bool, policy: str
) -> None:
    """Factoring and solving (issue 34) are bounded: degrees above 8 are undecided, not solved."""
    verdict, cost = _cost(lambda: compare_answers(answer, gold, policy=policy, sandbox=sandbox))
    assert verdict.tag in (None, FailureTag.WRONG_ANSWER), dict(verdict.detail)
    assert cost <= 2 * BUDGET


def test_math_reward_reports_a_bomb_gold_as_a_harness_error() -> None:
    with pytest.raises(MathHarnessError, match="binomial coefficient"):
        math_reward(final_response="\\boxed{5}", answer="\\binom{10^9}{5 \\cdot 10^8} + x")


def test_the_workers_cpu_is_charged_to_the_calling_thread() -> None:
    # The measure above is not blind: a symbolic comparison charges the worker's CPU to this thread.
    sandbox = default_sandbox()
    before = sandbox.cpu_seconds()
    assert compare_answers("\\sqrt{34} + 3\\sqrt{10} + x - x", "\\sqrt{10} \\cdot 3 + \\sqrt{34}").correct
    assert sandbox.cpu_seconds() > before
