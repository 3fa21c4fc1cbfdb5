"""What the ``golden`` and ``reward_case`` fixtures give: golden checks and reward calls from Python tests."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_rewardkit.checking import GoldenCaseFailure, check_pair, pair_reason, pair_report
from pytest_rewardkit.golden_files import PairCase, RewardCase
from pytest_rewardkit.graders import PairVerdict, policy_problem, resolve_grader
from pytest_rewardkit.items import (
    display_path,
    resolve_case_reward,
    resolve_pair_grader,
    run_reward_case,
)
from rewardkit.testing.calling import RewardCaller, resolve_reward


def _caller_location(config: pytest.Config | None, depth: int) -> str:
    frame = sys._getframe(depth + 1)
    filename = frame.f_code.co_filename
    if config is not None and os.path.isabs(filename):
        filename = display_path(config, Path(filename))
    return f"{filename}:{frame.f_lineno}"


class GoldenChecker:
    """Golden checks from Python tests, with the same failure report as golden files."""

    def __init__(self, config: pytest.Config | None = None) -> None:
        self.config = config

    def __repr__(self) -> str:
        return "<golden: assert_equivalent, assert_not_equivalent, check>"

    def _assert(
        self,
        given: str,
        gold: str,
        expected: bool,
        policy: str | None,
        grader: str | None,
        note: str | None,
    ) -> PairVerdict:
        __tracebackhide__ = True
        pair_grader = resolve_grader(grader)
        problem = policy_problem(pair_grader, policy)
        if problem is not None:
            raise ValueError(problem)
        verdict = pair_grader(given, gold, policy)
        if verdict.equivalent != expected:
            report = pair_report(
                title="golden check",
                location=_caller_location(self.config, 2),
                given=given,
                gold=gold,
                expected=expected,
                verdict=verdict,
                grader=pair_grader,
                policy=policy,
                note=note,
            )
            raise GoldenCaseFailure(report, pair_reason(expected, verdict))
        return verdict

    def assert_equivalent(
        self,
        given: str,
        gold: str,
        *,
        policy: str | None = None,
        grader: str | None = None,
        note: str | None = None,
    ) -> PairVerdict:
        """Fail unless ``given`` grades as equivalent to ``gold``; return the verdict."""
        __tracebackhide__ = True
        return self._assert(given, gold, True, policy, grader, note)

    def assert_not_equivalent(
        self,
        given: str,
        gold: str,
        *,
        policy: str | None = None,
        grader: str | None = None,
        note: str | None = None,
    ) -> PairVerdict:
        """Fail if ``given`` grades as equivalent to ``gold``; return the verdict."""
        __tracebackhide__ = True
        return self._assert(given, gold, False, policy, grader, note)

    def check(self, case: PairCase | RewardCase) -> None:
        """Check a case loaded with ``golden_params`` (a pair, or a reward case)."""
        __tracebackhide__ = True
        where = display_path(self.config, case.path) if self.config is not None else str(case.path)
        location = f"{where}:{case.line}"
        if isinstance(case, PairCase):
            check_pair(case, resolve_pair_grader(case, where), location=location)
            return
        regen = self.config is not None and bool(self.config.getoption("rewardkit_regen", False))
        run_reward_case(
            case, resolve_case_reward(case, where), location=location, regen=regen, shown_path=where
        )


class RewardCaseRunner:
    """Call any reward (object, registered name or ``module:attr``) with fields; get its ``RewardResult``.

    ``reward_case(reward, **fields)`` works in sync and async tests (async rewards are
    awaited); in an async test, ``await reward_case.acall(reward, **fields)`` stays on its loop.
    """

    def __init__(self) -> None:
        self._caller = RewardCaller()

    def __call__(self, reward: Any, /, **fields: Any) -> Any:
        return self._caller(resolve_reward(reward), fields)

    async def acall(self, reward: Any, /, **fields: Any) -> Any:
        """Await the reward on the running event loop (in its execution mode, under its timeout)."""
        from rewardkit.runtime.run.execution import SampleFailure

        try:
            return await self._caller.runner(resolve_reward(reward)).run(fields, 0)
        except SampleFailure as failure:
            error = failure.error
        raise error

    def close(self) -> None:
        self._caller.close()
