"""Run golden cases and explain failures: both sides, normalized forms, the verdict, the
rule that decided it, and ``file:line`` of the case."""

from __future__ import annotations

import math
import traceback
from collections.abc import Mapping
from typing import Any

from pytest_rewardkit.golden_files import PairCase, RewardCase
from pytest_rewardkit.graders import PairGrader, PairVerdict


class GoldenCaseFailure(AssertionError):
    """A golden case did not hold. ``report`` is the full text; ``reason`` groups it in the
    summary; ``headline`` (default: ``reason``) is the one line of pytest's short summary."""

    def __init__(self, report: str, reason: str, headline: str | None = None) -> None:
        super().__init__(report)
        self.report = report
        self.reason = reason
        self.headline = headline or reason


# Frames of the harness between the test and the reward (or grader) it calls.
_HARNESS_MODULES = (
    "pytest_rewardkit.",
    "rewardkit.testing.",
    "rewardkit.runtime.batch.calculate",
    "rewardkit.runtime.batch.pull",
    "rewardkit.runtime.run.execution",
    "rewardkit.runtime.run.reward_threads",
    "rewardkit.runtime.define.rewards",
    "asyncio.",
    "concurrent.",
)


def user_traceback(error: BaseException) -> str:
    """The traceback of ``error`` from the first frame outside the harness (the reward's or
    grader's own code); empty when the harness raised it (its message says what is wrong)."""
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_globals.get("__name__", "").startswith(_HARNESS_MODULES):
        tb = tb.tb_next
    if tb is None:
        return ""
    return "".join(traceback.format_exception(type(error), error, tb)).rstrip()


def show(text: str) -> str:
    """Answer text as written (LaTeX reads better unquoted); quoted when whitespace would hide."""
    if text and text == text.strip() and "\n" not in text and len(text) <= 500:
        return text
    shown = repr(text)
    return shown if len(shown) <= 500 else f"{shown[:400]}... ({len(text):,} characters)"


def _equivalence(flag: bool) -> str:
    return "equivalent" if flag else "NOT equivalent"


def pair_reason(expected: bool, verdict: PairVerdict) -> str:
    """The summary's grouping key for a failed pair."""
    direction = (
        "graded NOT equivalent, expected equivalent"
        if expected
        else "graded equivalent, expected NOT equivalent"
    )
    return f"{direction} (rule: {verdict.reason})"


def pair_report(
    *,
    title: str,
    location: str,
    given: str,
    gold: str,
    expected: bool,
    verdict: PairVerdict,
    grader: PairGrader,
    policy: str | None,
    note: str | None = None,
) -> str:
    """The failure text of an answer pair that named ``policy`` (None: none); the report shows
    the policy in effect (the grader's default when none was named), or none for a grader
    that has no policies."""
    in_effect = grader.policy_in_effect(policy)
    graded_by = f"grader: {grader.name}" + ("" if in_effect is None else f", policy: {in_effect}")
    lines = [
        f"{title} failed at {location}",
        f"  expected : {_equivalence(expected)}",
        f"  verdict  : {_equivalence(verdict.equivalent)} ({graded_by})",
        f"  rule     : {verdict.reason}",
    ]
    if verdict.tag:
        lines.append(f"  tag      : {verdict.tag}")
    lines += [
        f"  given    : {show(given)}",
        f"    normalized: {show(verdict.normalized_given) if verdict.normalized_given is not None else '(not reported)'}",
        f"  gold     : {show(gold)}",
        f"    normalized: {show(verdict.normalized_gold) if verdict.normalized_gold is not None else '(not reported)'}",
    ]
    for key, value in verdict.detail.items():
        lines.append(f"  {key:<9}: {value}")
    if note:
        lines.append(f"  note     : {note}")
    return "\n".join(lines)


def check_pair(case: PairCase, grader: PairGrader, *, location: str | None = None) -> PairVerdict:
    """Grade a pair; raise ``GoldenCaseFailure`` when the verdict differs from ``equivalent``."""
    __tracebackhide__ = True
    verdict = grader(case.given, case.gold, case.policy)
    if verdict.equivalent != case.equivalent:
        report = pair_report(
            title=f"golden pair {case.id!r}",
            location=location or case.location,
            given=case.given,
            gold=case.gold,
            expected=case.equivalent,
            verdict=verdict,
            grader=grader,
            policy=case.policy,
            note=case.note,
        )
        raise GoldenCaseFailure(report, pair_reason(case.equivalent, verdict))
    return verdict


def _close(expected: Any, actual: Any, tolerance: float) -> bool:
    numbers = (int, float)
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected == actual
    if isinstance(expected, numbers) and isinstance(actual, numbers):
        return math.isclose(float(expected), float(actual), rel_tol=0.0, abs_tol=tolerance)
    if isinstance(expected, str):
        return str(actual) == expected if isinstance(actual, str) else False
    if isinstance(expected, list) and isinstance(actual, (list, tuple)):
        return len(expected) == len(actual) and all(
            _close(e, a, tolerance) for e, a in zip(expected, actual)
        )
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        return set(expected) == set(actual) and all(
            _close(expected[k], actual[k], tolerance) for k in expected
        )
    return bool(expected == actual)


def reward_mismatches(
    expect: float | Mapping[str, Any] | None, result: Any, tolerance: float
) -> list[str]:
    """What differs between ``expect`` and a ``RewardResult`` (empty: the case holds)."""
    if expect is None:
        return ["no expected value yet (add 'expect', or run with --rewardkit-regen)"]
    wanted = expect if isinstance(expect, Mapping) else {"reward": expect}
    problems: list[str] = []
    if not _close(wanted["reward"], result.reward, tolerance):
        problems.append(
            f"reward: expected {wanted['reward']!r}, got {result.reward!r} (tolerance {tolerance:g})"
        )
    for key, value in wanted.items():
        if key == "reward":
            continue
        if key not in result.extras:
            problems.append(
                f"extras[{key!r}]: expected {value!r}, missing (extras keys: {sorted(result.extras)})"
            )
        elif not _close(value, result.extras[key], tolerance):
            problems.append(f"extras[{key!r}]: expected {value!r}, got {result.extras[key]!r}")
    return problems


def _fields_text(fields: Mapping[str, Any]) -> list[str]:
    if not fields:
        return ["  fields   : (none)"]
    lines = ["  fields   :"]
    for key, value in fields.items():
        lines.append(f"    {key} = {show(value) if isinstance(value, str) else repr(value)}")
    return lines


def reward_report(
    case: RewardCase,
    *,
    location: str,
    result: Any | None,
    problems: list[str],
    error: BaseException | None = None,
) -> str:
    """The failure text of a reward case."""
    lines = [f"golden reward case {case.id!r} failed at {location}", f"  reward   : {case.reward}"]
    lines += _fields_text(case.fields)
    lines.append(f"  expected : {case.expect!r}")
    if result is not None:
        lines.append(f"  got      : reward {result.reward!r}, extras {dict(result.extras)!r}")
    for problem in problems:
        lines.append(f"  mismatch : {problem}")
    if case.note:
        lines.append(f"  note     : {case.note}")
    if error is not None:
        lines.append(f"  raised   : {type(error).__name__}: {error}")
        trace = user_traceback(error)
        if trace:
            lines.append(trace)
    return "\n".join(lines)


def reward_reason(problems: list[str]) -> str:
    """The summary's grouping key for a reward case whose values differ."""
    if any(p.startswith("reward:") for p in problems):
        return "reward value differs"
    if problems and problems[0].startswith("no expected"):
        return "no expected value"
    return "extras differ"
