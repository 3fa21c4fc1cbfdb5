"""MathVerdict's shape, option validation, and the never-raise contract for odd inputs."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
import re
import typing

import pytest

from rewardkit.math import (
    FailureTag,
    MathGraderError,
    MathVerdict,
    compare_answers,
    grade,
    is_equivalent,
)
from rewardkit.math.grading import CompareOptions
from rewardkit.runtime.define.failures import FailureTag as RuntimeFailureTag


def test_failure_tag_is_re_exported() -> None:
    assert FailureTag is RuntimeFailureTag


def test_verdict_is_frozen_with_normalized_forms() -> None:
    verdict = grade("We get \\boxed{\\dfrac{1}{2}}.", "$0.5$")
    assert (verdict.correct, verdict.tag, verdict.reason) == (True, None, "rational")
    assert (verdict.parsed_answer, verdict.expected) == ("\\dfrac{1}{2}", "$0.5$")
    assert verdict.detail["normalized_answer"] == "\\frac{1}{2}"
    assert verdict.detail["normalized_gold"] == "0.5"
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.correct = False  # type: ignore[misc]
    with pytest.raises(TypeError):
        verdict.detail["x"] = "y"  # type: ignore[index]


def test_verdict_pickles_for_other_processes() -> None:
    verdict = compare_answers("\\frac{1}{2}", "0.5")
    assert pickle.loads(pickle.dumps(verdict)) == verdict


def test_tolerance_is_configurable() -> None:
    assert not is_equivalent("3.1416", "\\pi")
    assert is_equivalent("3.1416", "\\pi", tolerance=1e-4)
    assert not is_equivalent("3.1416", "\\pi", tolerance=1e-4, policy="strict")


def test_no_answer_verdict() -> None:
    verdict = grade("I give up.", "5")
    assert (verdict.correct, verdict.tag, verdict.parsed_answer, verdict.reason) == (False, FailureTag.NO_ANSWER, None, "no_answer")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"policy": "loose"}, "policy='loose'"),
        ({"extract": "first"}, "extract='first'"),
        ({"timeout": 0}, "timeout=0"),
    ],
)
def test_bad_options_raise_a_typed_error_naming_them(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(MathGraderError, match=message):
        grade("\\boxed{1}", "1", **kwargs)  # type: ignore[arg-type]


def test_compare_options_are_written_once() -> None:
    # grade and is_equivalent take compare_answers' options; its signature holds their defaults.
    keyword_only = inspect.Parameter.KEYWORD_ONLY
    compare = {
        name: p
        for name, p in inspect.signature(compare_answers).parameters.items()
        if p.kind is keyword_only
    }
    # (both modules postpone annotations: the TypedDict holds ForwardRefs, the signature strings)
    declared = {
        name: getattr(hint, "__forward_arg__", hint)
        for name, hint in CompareOptions.__annotations__.items()
    }
    assert declared == {name: p.annotation for name, p in compare.items()}
    for function, own in ((grade, {"extract": "boxed"}), (is_equivalent, {})):
        parameters = inspect.signature(function).parameters
        shown = {name: p.default for name, p in parameters.items() if p.kind is keyword_only}
        assert shown == {**own, **{name: p.default for name, p in compare.items()}}


@pytest.mark.parametrize("function", [grade, is_equivalent])
def test_unknown_option_is_a_type_error_naming_the_function(function: typing.Any) -> None:
    expected = f"{function.__name__}() got an unexpected keyword argument 'polcy'; did you mean 'policy'?"
    with pytest.raises(TypeError, match=re.escape(expected)):
        function("1", "1", polcy="strict")


@pytest.mark.parametrize(
    "response",
    ["", "\x00\x01\x02", "{" * 5000, "}" * 5000 + "\\boxed{", "\\boxed{" + "{" * 5000 + "}" * 5000 + "}", "x" * 2_000_000 + "\\boxed{1"],
)
def test_hostile_responses_never_raise(response: str) -> None:
    verdict = grade(response, "1")
    assert isinstance(verdict, MathVerdict)
    assert verdict.tag in (FailureTag.NO_ANSWER, FailureTag.WRONG_ANSWER)


@pytest.mark.parametrize("answer", ["1+" * 500_000 + "1", "1," * 500_000, "(" * 300_000 + ")" * 300_000, "1 or " * 200_000])
def test_megabyte_answer_is_decided_without_symbolic_work(answer: str) -> None:
    verdict = compare_answers(answer, "1")
    assert (verdict.correct, verdict.reason) == (False, "guard")


def test_non_string_inputs() -> None:
    assert grade(None, "1").tag is FailureTag.NO_ANSWER  # type: ignore[arg-type]
    assert compare_answers("3", 3).reason == "exact"  # type: ignore[arg-type]
    assert compare_answers("3", None).tag is FailureTag.HARNESS_ERROR  # type: ignore[arg-type]
