"""Every rule's own examples (comparison rules, normalization steps) run as tests, Fixit-style."""

from __future__ import annotations

import pytest

from rewardkit.math import compare_answers
from rewardkit.math.comparison import RULE_EXAMPLES
from rewardkit.math.guards import symbolic_guard
from rewardkit.math.normalization import STEPS
from rewardkit.math.verdict import REASONS


def _rule_cases() -> list[object]:
    cases = []
    for rule, examples in RULE_EXAMPLES.items():
        for kind, triples in examples.items():
            for index, (answer, gold, policy) in enumerate(triples):
                cases.append(pytest.param(rule, kind == "matches", answer, gold, policy, id=f"{rule}-{kind}-{index}"))
    return cases


@pytest.mark.parametrize(("rule", "expected", "answer", "gold", "policy"), _rule_cases())
@pytest.mark.parametrize("sandbox", [True, False], ids=["sandbox", "in-process"])
def test_rule_example(rule: str, expected: bool, answer: str, gold: str, policy: str, sandbox: bool) -> None:
    verdict = compare_answers(answer, gold, policy=policy, sandbox=sandbox)
    assert (verdict.correct, verdict.reason) == (expected, rule), dict(verdict.detail)


def test_every_rule_has_examples_and_a_documented_reason() -> None:
    for rule, examples in RULE_EXAMPLES.items():
        assert rule in REASONS
        assert examples["matches"] or examples["mismatches"], rule


@pytest.mark.parametrize(
    ("step", "given", "expected"),
    [pytest.param(step, given, expected, id=f"{step.name}-{i}") for step in STEPS for i, (given, expected) in enumerate(step.examples)],
)
def test_normalization_step_example(step: object, given: str, expected: str) -> None:
    assert step.apply(given) == expected  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("latex", "refused"),
    [
        ("9^{9^{9^9}}", "a power tower"),
        ("2^{1000000}", "an exponent above 10000"),
        ("100000!", "a factorial of more than 1000"),
        ("(3!)!", "nested or repeated factorials"),
        ("{" * 30 + "1" + "}" * 30, "nested deeper than 25 levels"),
        ("x" * 500, "longer than 400 characters"),
        ("1e99999", "an exponent above 10000"),
        ("\\binom{100000}{3}", "a binomial coefficient above 10000"),
        ("__import__('os')", "code, not mathematics"),
        ('open("pwned")', "code, not mathematics"),
    ],
)
def test_guard_refuses(latex: str, refused: str) -> None:
    assert symbolic_guard(latex) == refused


@pytest.mark.parametrize("latex", ["e^{-x^2}", "2^{10}", "\\frac{1}{2^{98}}", "5!", "(x+1)^2", "x^{y^{z}}"])
def test_guard_allows_ordinary_expressions(latex: str) -> None:
    assert symbolic_guard(latex) is None
