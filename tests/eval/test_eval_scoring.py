"""The scoring rule and the one-tag-per-non-pass rule, on hand-made results and on real grading."""

from __future__ import annotations

from pathlib import Path

import pytest
from eval_helpers import write_jsonl

from rewardkit.evaluation import CaseResult, run_math_eval, summarize
from rewardkit.evaluation.scoring import make_detail
from rewardkit.runtime.define.failures import FailureTag


def result(case_id: str, tag: FailureTag | None, reason: str = "exact") -> CaseResult:
    return CaseResult(id=case_id, passed=tag is None, tag=tag, detail=make_detail(reason=reason))


def test_score_excludes_our_side_failures_from_the_denominator() -> None:
    results = [
        result("a", None),
        result("b", None),
        result("c", None),
        result("d", FailureTag.WRONG_ANSWER),
        result("e", FailureTag.NO_ANSWER, "no_answer"),
        result("f", FailureTag.ADAPTER_ERROR, "generation_error"),
        result("g", FailureTag.HARNESS_ERROR, "bad_gold"),
        result("h", FailureTag.HARNESS_ERROR, "crash"),
    ]
    summary = summarize(results)
    assert summary.n == 8
    assert summary.scored == 5  # 8 cases - 1 ADAPTER_ERROR - 2 HARNESS_ERROR
    assert summary.score == pytest.approx(3 / 5)
    assert summary.failure_counts == {
        "NO_ANSWER": 1,
        "WRONG_ANSWER": 1,
        "ADAPTER_ERROR": 1,
        "HARNESS_ERROR": 2,
    }
    assert summary.reasons_by_outcome["HARNESS_ERROR"] == {"bad_gold": 1, "crash": 1}
    assert sum(summary.reason_counts.values()) == summary.n


def test_our_side_failures_never_move_the_score() -> None:
    base = [result("a", None), result("b", FailureTag.WRONG_ANSWER)]
    noisy = [*base, *(result(f"x{i}", FailureTag.HARNESS_ERROR, "crash") for i in range(5))]
    noisy += [result(f"y{i}", FailureTag.ADAPTER_ERROR, "generation_error") for i in range(7)]
    assert summarize(base).score == summarize(noisy).score == 0.5


def test_score_is_undefined_when_nothing_could_be_scored() -> None:
    assert summarize([]).score is None
    assert summarize([result("a", FailureTag.ADAPTER_ERROR, "generation_error")]).score is None


def test_a_result_passes_xor_carries_one_tag() -> None:
    with pytest.raises(ValueError, match="passes xor"):
        CaseResult(id="a", passed=True, tag=FailureTag.WRONG_ANSWER, detail={})
    with pytest.raises(ValueError, match="passes xor"):
        CaseResult(id="a", passed=False, tag=None, detail={})


def test_each_tag_comes_from_real_grading(tmp_path: Path) -> None:
    rows = [
        {"id": "pass", "response": r"So $\boxed{\frac{1}{2}}$.", "gold": "0.5"},
        {"id": "no-answer", "response": "The reasoning was cut off before the", "gold": "3"},
        {"id": "wrong", "response": r"$\boxed{4}$", "gold": "3"},
        {"id": "hedge", "response": r"$\boxed{3 \text{ or } 4}$", "gold": "3"},
        {"id": "bad-gold", "response": r"$\boxed{2}$", "gold": ""},
        {"id": "endpoint", "response": None, "gold": "2", "error": "HTTP 503 from the endpoint"},
    ]
    run = run_math_eval(write_jsonl(tmp_path / "in.jsonl", rows), workers=0)
    outcomes = {r.id: r.outcome for r in run.results}
    assert outcomes == {
        "pass": "PASS",
        "no-answer": "NO_ANSWER",
        "wrong": "WRONG_ANSWER",
        "hedge": "WRONG_ANSWER",
        "bad-gold": "HARNESS_ERROR",
        "endpoint": "ADAPTER_ERROR",
    }
    by_id = {r.id: r for r in run.results}
    assert by_id["hedge"].reason == "hedge"
    assert "503" in by_id["endpoint"].detail["error"]
    assert run.score == pytest.approx(1 / 4)  # 1 passed / (6 - 1 ADAPTER - 1 HARNESS)
