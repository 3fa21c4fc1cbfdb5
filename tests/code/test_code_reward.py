"""``code_reward`` and ``CodeReward`` (issue 35): the pass fraction or all-or-nothing, the same
extras on every sample, values equal to ``grade_code``'s, batches, process mode, and a
``SANDBOX_ERROR`` raised (recorded as an error), never scored 0.0."""

from __future__ import annotations

import json
import pickle
from typing import Any

import pytest

from rewardkit import calculate_rewards, get_reward
from rewardkit.code import CodeHarnessError, CodeReward, code_reward, grade_code
from rewardkit.code.formats import CodeTestsError
from rewardkit.code.verdict import CodeTag, CodeVerdict, TestResult

ADD = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
MULTIPLY = "```python\na, b = map(int, input().split())\nprint(a * b)\n```"
CRASH = "```python\nraise SystemExit(3)\n```"
TESTS = {"inputs": ["1 2\n", "2 2\n", "0 5\n"], "outputs": ["3\n", "4\n", "5\n"]}
"""Addition's tests; multiplication passes only the second."""
EXTRAS = {"correct", "fraction", "tag", "reason", "passed", "total"}


def test_code_reward_is_the_pass_fraction_with_its_extras() -> None:
    full = code_reward(final_response=ADD, ground_truth=TESTS)
    part = code_reward(final_response=MULTIPLY, ground_truth=json.dumps(TESTS))
    none = code_reward(final_response="no code here", ground_truth=TESTS)
    assert full.reward == 1.0
    assert full.extras["correct"] is True
    assert full.extras["tag"] == ""
    assert part.reward == pytest.approx(1 / 3)
    assert (part.extras["passed"], part.extras["total"], part.extras["tag"]) == (
        1,
        3,
        "WRONG_OUTPUT",
    )
    assert none.reward == 0.0
    assert none.extras["tag"] == "NO_CODE"
    assert none.extras["total"] == 0
    for result in (full, part, none):
        assert set(result.extras) == EXTRAS


def test_values_equal_grade_code() -> None:
    for response in (ADD, MULTIPLY, CRASH):
        verdict = grade_code(response, TESTS)
        result = code_reward(final_response=response, ground_truth=TESTS)
        assert result.reward == verdict.fraction
        assert result.extras["correct"] is verdict.correct
        assert result.extras["reason"] == verdict.reason


def test_all_or_nothing_and_options() -> None:
    strict = CodeReward(all_or_nothing=True, sandbox="bwrap", test_timeout=5.0, memory=256 << 20)
    assert strict(final_response=MULTIPLY, ground_truth=TESTS).reward == 0.0
    assert strict(final_response=MULTIPLY, ground_truth=TESTS).extras["fraction"] == pytest.approx(
        1 / 3
    )
    assert strict(final_response=ADD, ground_truth=TESTS).reward == 1.0
    assert pickle.loads(pickle.dumps(strict)) == strict
    assert strict.parameters == code_reward.parameters == ("final_response", "ground_truth")
    with pytest.raises(ValueError, match="timeout"):
        CodeReward(test_timeout=0)
    with pytest.raises(TypeError, match="backend's name"):
        CodeReward(sandbox=object())  # type: ignore[arg-type]


def test_registered_as_a_builtin() -> None:
    assert get_reward("code_reward") is code_reward


def test_malformed_tests_raise_a_typed_error() -> None:
    with pytest.raises(CodeTestsError):
        code_reward(final_response=ADD, ground_truth={"inputs": ["1 2\n"]})


def _sandbox_failure(*args: Any, **kwargs: Any) -> CodeVerdict:
    test = TestResult(CodeTag.SANDBOX_ERROR.value, 0.0, detail="the worker could not start")
    return CodeVerdict(False, 0.0, CodeTag.SANDBOX_ERROR, (test,), "sandbox failed", "print(1)")


async def test_a_sandbox_error_is_recorded_never_a_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("rewardkit.code.reward.grade_code", _sandbox_failure)
    with pytest.raises(CodeHarnessError) as caught:
        code_reward(final_response=ADD, ground_truth=TESTS)
    assert caught.value.verdict.tag is CodeTag.SANDBOX_ERROR
    results = await calculate_rewards(
        code_reward, [{"final_response": ADD, "ground_truth": TESTS}], on_error="record"
    )
    assert "CodeHarnessError" in results[0].extras["error"]


async def test_a_batch_with_failing_samples_first() -> None:
    samples = [
        {"final_response": ADD, "ground_truth": {"inputs": ["1\n"]}},  # tests that cannot be read
        {"final_response": CRASH, "ground_truth": TESTS},
        {"final_response": ADD, "ground_truth": TESTS},
        {"final_response": MULTIPLY, "ground_truth": TESTS},
    ]
    results = await calculate_rewards(code_reward, samples, on_error="record")
    assert "CodeTestsError" in results[0].extras["error"]
    assert results[1].reward == 0.0
    assert results[1].extras["tag"] == "RUNTIME_ERROR"
    assert [result.reward for result in results[2:]] == [1.0, pytest.approx(1 / 3)]


async def test_process_mode() -> None:
    samples = [{"final_response": r, "ground_truth": TESTS} for r in (CRASH, ADD, MULTIPLY)]
    strict = CodeReward(all_or_nothing=True, sandbox="bwrap")
    loose = await calculate_rewards(code_reward, samples, execution="process", concurrency=2)
    assert [result.reward for result in loose] == [0.0, 1.0, pytest.approx(1 / 3)]
    exact = await calculate_rewards(strict, samples, execution="process", concurrency=2)
    assert [result.reward for result in exact] == [0.0, 1.0, 0.0]
    assert [result.extras["tag"] for result in exact] == ["RUNTIME_ERROR", "", "WRONG_OUTPUT"]
