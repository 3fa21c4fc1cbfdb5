"""Every rule's VALID/INVALID examples, run through the real engine (Fixit's model)."""

from __future__ import annotations

import pytest

from rewardkit.checks import (
    RULES,
    Rule,
    Severity,
    apply_fix,
    check_source,
    rule_for_code,
)
from rewardkit.checks.codes import RULE_CODES
from rewardkit.checks.fixes import TRANSFORM_KINDS
from rewardkit.checks.rules.base import Invalid, Valid
from rewardkit.checks.transforms import TRANSFORMS


def _source(example: str | Valid | Invalid) -> str:
    return example if isinstance(example, str) else example.code


VALID = [(rule, index, source) for rule in RULES for index, source in enumerate(rule.VALID)]
INVALID = [(rule, index, example) for rule in RULES for index, example in enumerate(rule.INVALID)]


@pytest.mark.parametrize(
    ("rule", "index", "source"), VALID, ids=lambda v: getattr(v, "code", str(v))[:8]
)
def test_valid_examples_produce_no_diagnostics(rule: type[Rule], index: int, source) -> None:
    assert check_source(_source(source), None, rule.example_config(source)) == []


@pytest.mark.parametrize(
    ("rule", "index", "example"), INVALID, ids=lambda v: getattr(v, "code", str(v))[:8]
)
def test_invalid_examples_are_flagged_at_their_line(rule: type[Rule], index: int, example) -> None:
    config = rule.example_config(example)
    diagnostics = check_source(example.code, None, config)
    mine = [d for d in diagnostics if d.code == rule.code]
    assert mine, f"{rule.code} not reported for:\n{example.code}\ngot {diagnostics}"
    assert mine[0].line == example.line
    assert mine[0].severity is rule.severity
    assert all(d.code == rule.code for d in diagnostics), diagnostics
    if example.expected_fix is not None:
        assert mine[0].fixes, "the example promises a fix"
        fixed = apply_fix(example.code, mine[0].fixes[0])
        assert fixed == example.expected_fix
        # The fix really fixes: the rule no longer fires on the fixed text.
        assert not [d for d in check_source(fixed, None, config) if d.code == rule.code]


def test_every_invalid_example_of_a_rule_with_a_fix_shows_the_fix() -> None:
    for rule in RULES:
        for example in rule.INVALID:
            if rule.TRANSFORM is not None:
                assert example.expected_fix is not None, f"{rule.code}:\n{example.code}"
            else:
                assert example.expected_fix is None, f"{rule.code} has no fix to show"


@pytest.mark.parametrize(
    ("rule", "index", "example"), INVALID, ids=lambda v: getattr(v, "code", str(v))[:8]
)
def test_a_rules_fixes_apply_the_transform_it_names(rule: type[Rule], index: int, example) -> None:
    diagnostics = check_source(example.code, None, rule.example_config(example))
    kinds = {fix.transform.kind for d in diagnostics for fix in d.fixes if fix.transform}
    assert kinds == ({rule.TRANSFORM} if rule.TRANSFORM else set())


def test_the_transforms_are_the_ones_rules_name() -> None:
    named = {rule.TRANSFORM for rule in RULES} - {None}
    assert named == set(TRANSFORM_KINDS) == set(TRANSFORMS)


def test_every_rule_documents_itself() -> None:
    codes = [rule.code for rule in RULES]
    assert codes == sorted(codes)
    assert len(set(codes)) == len(codes)
    for rule in RULES:
        assert rule.__doc__
        assert rule.summary
        assert isinstance(rule.severity, Severity)
        assert rule_for_code(rule.code) is rule
        if rule.code not in ("RK901", "RK902"):  # notes about huge inputs: no small example
            assert rule.VALID, rule.code
            assert rule.INVALID, rule.code


def test_the_code_list_configuration_validates_against_is_the_rules() -> None:
    assert tuple(rule.code for rule in RULES) == RULE_CODES


def test_diagnostic_columns_are_code_points() -> None:
    source = (
        'from rewardkit import reward\n\n@reward\ndef émoji(final_response, label="😀😀", *, trajectroy):\n'
        "    return 1.0\n"
    )
    [diagnostic] = check_source(source)
    assert diagnostic.code == "RK102"
    line = source.splitlines()[3]
    assert line[diagnostic.column : diagnostic.end_column] == "trajectroy"
