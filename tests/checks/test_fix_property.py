"""The fix-safety property (issue 33.4): a safe fix either leaves a reward unchanged or makes
it return what its author evidently meant (the score its dict carried), never a constant, a
stale value or a new exception; and a second ``--fix`` changes nothing.

Generated reward modules (the patterns that once broke safe fixes, mutated, and the rule
examples with misspelled names: :mod:`tests.checks.fix_programs`) are fixed by the real CLI on
files and run on sample inputs before and after. Here on a fixed seed and a few examples;
``benchmarks/fix_safety.py`` runs many more on random seeds.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings

from .fix_programs import HELPERS, check_fixes, report, reward_modules

SEED = 33


@seed(SEED)
@settings(
    max_examples=3,
    deadline=None,
    database=None,
    phases=["generate"],
    suppress_health_check=list(HealthCheck),
)
@given(modules=reward_modules(rewards=12, examples=6))
def test_safe_fixes_keep_what_generated_rewards_compute(
    tmp_path_factory: pytest.TempPathFactory, modules: dict[str, str]
) -> None:
    findings = check_fixes(tmp_path_factory.mktemp("fix_property"), modules)
    assert not findings, report(findings)


# The issue's own cases, always in the run whatever the generator draws.
ISSUE_CASES = """

@reward
def stale(final_response, answer):
    result = {"score": 0.0, "n": len(final_response)}
    if final_response.strip() == answer:
        result["score"] = 1.0
    return result


@reward
def walrus(final_response, answer):
    return {"acc": (s := float(final_response == answer)), "score": s}


@reward
def twice(final_response, answer):
    return {"score": JUDGE.verdict, "calls": tuple(CALLS)}


@reward
def local_math(final_response, answer):
    math = MATH
    return {"score": math.judge(final_response)}


@reward
def by_locals(final_response, answr):
    return {"reward": float(locals()["answr"] == final_response)}


@reward
def by_eval(final_response, answr):
    return {"reward": float(eval("answr") == final_response)}


@reward
def by_vars(final_response, answr):
    return {"reward": float(vars()["answr"] == final_response)}


@reward
def by_keyword(final_response, answr, depth=1):
    if depth:
        return by_keyword(final_response=final_response.strip(), answr=answr, depth=0).reward
    return float(answr == final_response)


@reward
def by_f_string(final_response, answr):
    return {"reward": float(answr == final_response), "why": f"{answr=}"}


@reward
def by_nonlocal(final_response, answr):
    def strip():
        nonlocal answr
        answr = answr.strip()
    strip()
    return float(answr == final_response)


@reward
def verl_misspelled(solution_sr, answer):
    return float(solution_sr.strip() == answer.strip())


@reward
def fixable(final_respone, answr):
    ok = float(final_respone == answr)
    return {"n": len(answr), "score": ok}
"""


def test_safe_fixes_keep_what_the_issue_s_rewards_compute(tmp_path: Path) -> None:
    modules = {"issue.py": HELPERS + ISSUE_CASES}
    findings = check_fixes(tmp_path, modules)
    assert not findings, report(findings)
    fixed = (tmp_path / "issue.py").read_text(encoding="utf-8")
    assert fixed != modules["issue.py"]  # the fixable ones were fixed
    assert 'return {"n": len(answer), "score": ok, "reward": ok}' in fixed
    assert "def verl_misspelled(final_response, answer):" in fixed
    assert "def by_locals(final_response, answr):" in fixed
