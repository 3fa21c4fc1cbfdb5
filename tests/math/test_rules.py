"""Every rule's own examples (comparison rules, normalization steps) run as tests, Fixit-style."""

from __future__ import annotations

import pytest

from rewardkit.math import compare_answers
from rewardkit.math.comparison import STRICT_RULES
from rewardkit.math.guards import symbolic_guard
from rewardkit.math.normalization import STEPS
from rewardkit.math.rule_examples import RULE_EXAMPLES
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
        ("2^{1000000}", "an exponent above 10,000"),
        ("100000!", "a factorial of more than 1,000"),
        ("(((3!)!)!)!", "a factorial of more than 1,000"),  # (720!)!
        ("1000!!", "a factorial of more than 1,000"),
        # Issue 27, item 11: arguments that are expressions are bounded too.
        ("\\binom{10^9}{5 \\cdot 10^8}", "a binomial coefficient with an argument above 10,000"),
        ("\\Gamma(10^{10})", "a Gamma function of more than 1,000"),
        ("(10^{10})!", "a factorial of more than 1,000"),
        ("(x - x + 10^{10})!", "a factorial of more than 1,000"),
        ("(\\frac{1}{1-0.999999999})!", "a factorial of more than 1,000"),
        ("\\lfloor 10^{9} \\rfloor!", "a factorial of more than 1,000"),
        ("x^{9999 \\cdot 9999}", "an exponent above 10,000"),
        ("(10^{1000})^{10000}", "a number of more than 100,000 digits"),
        ("{" * 30 + "1" + "}" * 30, "nested deeper than 25 levels"),
        ("x" * 500, "longer than 400 characters"),
        ("1e99999", "an exponent above 10,000"),
        ("\\binom{100000}{3}", "a binomial coefficient with an argument above 10,000"),
        ("__import__('os')", "code, not mathematics"),
        ('open("pwned")', "code, not mathematics"),
    ],
)
def test_guard_refuses(latex: str, refused: str) -> None:
    assert symbolic_guard(latex) == refused


@pytest.mark.parametrize(
    "latex",
    [
        "e^{-x^2}", "2^{10}", "\\frac{1}{2^{98}}", "5!", "(x+1)^2", "x^{y^{z}}",
        # Issue 24, group 8: small factorials are computed, not refused.
        "4!\\,3!", "(3!)!", "\\frac{n!}{k!(n-k)!}", "\\binom{n}{k}", "\\Gamma(\\frac{\\pi}{12})", "e^{\\frac{1}{x+1}}", "\\binom{2024}{2}",
    ],
)
def test_guard_allows_ordinary_expressions(latex: str) -> None:
    assert symbolic_guard(latex) is None


STRICT_ONLY_REJECTIONS = (
    # (answer, gold, reason, strict_rule): lenient accepts each of these, strict says why it does not.
    ("\\frac{2}{4}", "\\frac12", "rational", "not_reduced"),
    ("2\\frac{2}{4}", "\\frac52", "rational", "not_reduced"),
    ("2^{10}", "1024", "rational", "not_an_integer"),
    ("\\sqrt9", "3", "rational", "not_an_integer"),
    ("6.283185", "2\\pi", "numeric", "decimal_for_irrational"),
    ("1, 2", "(1,2)", "tuple", "brackets"),
    ("(1,2)", "\\begin{pmatrix}1\\\\2\\end{pmatrix}", "matrix", "tuple_for_vector"),
)


@pytest.mark.parametrize(("answer", "gold", "reason", "strict_rule"), STRICT_ONLY_REJECTIONS)
@pytest.mark.parametrize("sandbox", [True, False], ids=["sandbox", "in-process"])
def test_strict_only_rejections_say_which_strict_rule(
    answer: str, gold: str, reason: str, strict_rule: str, sandbox: bool
) -> None:
    assert compare_answers(answer, gold, policy="lenient", sandbox=sandbox).correct
    verdict = compare_answers(answer, gold, policy="strict", sandbox=sandbox)
    assert (verdict.correct, verdict.reason, verdict.detail.get("strict_rule")) == (False, reason, strict_rule)
    assert strict_rule in STRICT_RULES


def test_plain_wrong_answers_carry_no_strict_rule() -> None:
    for policy in ("strict", "lenient"):
        verdict = compare_answers("\\frac{2}{4}", "\\frac13", policy=policy)
        assert (verdict.correct, verdict.reason) == (False, "rational")
        assert "strict_rule" not in verdict.detail
