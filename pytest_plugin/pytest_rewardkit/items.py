"""pytest collection of golden files: one test item per case, located at its file and line."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from pytest_rewardkit.checking import (
    GoldenCaseFailure,
    check_pair,
    reward_mismatches,
    reward_reason,
    reward_report,
    user_traceback,
)
from pytest_rewardkit.golden_files import GoldenFileError, PairCase, RewardCase, read_golden_file
from pytest_rewardkit.graders import PairGrader, UnknownGraderError, policy_problem, resolve_grader
from pytest_rewardkit.regen import new_expect, rewrite_expect
from pytest_rewardkit.summary import FAILURE_REASON_PROPERTY
from rewardkit.testing.calling import (
    RewardCaller,
    RewardLookupError,
    fields_problem,
    resolve_reward,
)

REGEN_REASON = "expect rewritten by --rewardkit-regen (review the diff)"


def display_path(config: pytest.Config, path: Path) -> str:
    """``path`` as pytest shows it: relative to the folder pytest was invoked from."""
    base = config.invocation_params.dir
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return Path(os.path.relpath(path, base)).as_posix()


@contextlib.contextmanager
def importable_from(folder: Path) -> Iterator[None]:
    """Let ``module:attr`` names resolve modules next to the golden file, as pytest's default
    import mode does for test modules (their folder goes first on ``sys.path``)."""
    entry = str(folder)
    added = entry not in sys.path
    if added:
        sys.path.insert(0, entry)
    try:
        yield
    finally:
        if added and entry in sys.path:
            sys.path.remove(entry)


def import_path_hint(spec: str | None, folder: Path, where: str) -> str:
    """A hint when the module a ``module:attr`` name starts with is on no import path (a module
    at the project root while the golden file sits in ``tests/``), else ``""``."""
    if not spec or (":" not in spec and "." not in spec):
        return ""
    top = spec.partition(":")[0].split(".")[0]
    try:
        with importable_from(folder):
            if not top or importlib.util.find_spec(top) is not None:
                return ""
    except (ImportError, ValueError):
        return ""
    shown = Path(where).parent.as_posix()
    return (
        f"; {top!r} is on neither sys.path nor the golden file's folder ({shown}): for a module "
        'at the project root, set pythonpath = ["."] under [tool.pytest.ini_options] in '
        "pyproject.toml (pytest.ini: pythonpath = .)"
    )


_Resolved = TypeVar("_Resolved")


def _resolve_for_case(
    case: PairCase | RewardCase,
    where: str,
    key: str,
    resolve: Callable[[str | None], _Resolved],
    refusal: type[Exception],
    check: tuple[str, Callable[[_Resolved], str | None]],
) -> _Resolved:
    """The case's ``key`` resolved (the golden file's folder importable), then checked by
    ``check``'s function: a refusal is a ``GoldenFileError`` at the line of the key concerned."""
    label = f"[[{'pair' if isinstance(case, PairCase) else 'reward'}]] {case.id!r}"
    spec = getattr(case, key)
    try:
        with importable_from(case.path.parent):
            resolved = resolve(spec)
    except refusal as exc:
        hint = import_path_hint(spec, case.path.parent, where)
        raise GoldenFileError(where, case.line_of(key), f"{label}: {exc}{hint}") from None
    check_key, problem_of = check
    problem = problem_of(resolved)
    if problem is not None:
        raise GoldenFileError(where, case.line_of(check_key), f"{label}: {problem}")
    return resolved


def resolve_pair_grader(case: PairCase, where: str) -> PairGrader:
    """The case's grader, or a ``GoldenFileError`` at the line of its ``grader`` (or ``policy``)."""
    policy_check = ("policy", lambda grader: policy_problem(grader, case.policy))
    return _resolve_for_case(
        case, where, "grader", resolve_grader, UnknownGraderError, policy_check
    )


def resolve_case_reward(case: RewardCase, where: str) -> Any:
    """The case's reward, or a ``GoldenFileError`` at the line of its ``reward`` (or ``fields``,
    when they do not fit the reward: a misspelt field would otherwise be dropped)."""
    fields_check = ("fields", lambda reward: fields_problem(reward, case.fields))
    return _resolve_for_case(case, where, "reward", resolve_reward, RewardLookupError, fields_check)


def run_reward_case(
    case: RewardCase, reward: Any, *, location: str, regen: bool, shown_path: str
) -> Any:
    """Call the case's reward and compare; with ``regen``, rewrite a differing ``expect`` and fail."""
    __tracebackhide__ = True
    with RewardCaller() as caller:
        try:
            result = caller(reward, case.fields)
        except Exception as exc:
            report = reward_report(case, location=location, result=None, problems=[], error=exc)
            raise GoldenCaseFailure(
                report,
                f"reward raised {type(exc).__name__}",
                f"reward raised {type(exc).__name__}: {exc}",
            ) from None
    problems = reward_mismatches(case.expect, result, case.tolerance)
    if problems and regen and case.xfail is None:  # a known failure keeps its reviewed value
        value = new_expect(case, result)
        rewrite_expect(case, value)
        report = (
            f"--rewardkit-regen rewrote 'expect' of golden reward case {case.id!r} at {location}\n"
            f"  before : {case.expect!r}\n  after  : {value!r}\n"
            f"  review the change (e.g. `git diff {shown_path}`), then run without --rewardkit-regen"
        )
        raise GoldenCaseFailure(
            report,
            REGEN_REASON,
            f"expect rewritten: {case.expect!r} -> {value!r} (review the diff)",
        )
    if problems:
        report = reward_report(case, location=location, result=result, problems=problems)
        raise GoldenCaseFailure(report, reward_reason(problems), "; ".join(problems))
    return result


@dataclass(frozen=True)
class CaseCrash:
    """Where and why a case failed, in the shape of pytest's ``ReprFileLocation``: pytest's
    short summary and JUnit XML show ``message`` instead of the first line of the report."""

    path: str
    lineno: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.lineno}: {self.message}"


@dataclass(frozen=True)
class FailureReport:
    """A golden case's failure as pytest prints it (a ``TerminalRepr`` by duck typing): the
    full report, plus ``reprcrash`` for the one-line views."""

    report: str
    reprcrash: CaseCrash

    def toterminal(self, tw: Any) -> None:
        for line in self.report.splitlines():
            tw.line(line)

    def __str__(self) -> str:
        return self.report


class GoldenFile(pytest.File):
    """A ``golden_*.toml``/``golden_*.jsonl`` file; malformed ones are collection errors."""

    def collect(self) -> Iterator[pytest.Item]:
        shown = display_path(self.config, self.path)
        regen = bool(self.config.getoption("rewardkit_regen", False))
        golden, problems = read_golden_file(self.path, display=shown, allow_missing_expect=regen)
        items: list[pytest.Item] = []
        for case in golden.cases:  # every problem of the file at once, each at its own line
            try:
                items.append(self._item(case, shown))
            except GoldenFileError as exc:
                problems.extend(exc.problems)
        if problems:
            raise GoldenFileError.of(shown, problems)
        yield from items

    def _item(self, case: PairCase | RewardCase, shown: str) -> pytest.Item:
        if isinstance(case, PairCase):
            grader = resolve_pair_grader(case, shown)
            return GoldenPairItem.from_parent(
                self, name=case.id, case=case, grader=grader, shown=shown
            )
        reward = resolve_case_reward(case, shown)
        return GoldenRewardItem.from_parent(
            self, name=case.id, case=case, reward=reward, shown=shown
        )

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:  # type: ignore[override]
        if isinstance(excinfo.value, GoldenFileError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class _GoldenItem(pytest.Item):
    """One golden case as a test; failures print the case's report, not a traceback."""

    case: PairCase | RewardCase

    def __init__(self, *, case: PairCase | RewardCase, shown: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.shown = shown
        self.location_text = f"{shown}:{case.line}"
        # pytest-lsp's pytest_runtest_call wrapper fails on items without ``funcargs``
        # (it returns before yielding); golden cases have no fixtures to offer it.
        self.funcargs: dict[str, Any] = {}
        if case.xfail is not None:
            self.add_marker(pytest.mark.xfail(reason=case.xfail, strict=True))

    def reportinfo(self) -> tuple[Path, int, str]:
        return (
            self.path,
            self.case.line - 1,
            f"{self.shown}:{self.case.line} [{self.case.kind}] {self.case.id}",
        )

    def check_case(self) -> None:
        """Check the case; a failure raises ``GoldenCaseFailure``."""
        raise NotImplementedError

    def runtest(self) -> None:
        try:
            self.check_case()
        except GoldenCaseFailure as failure:  # its reason goes in the JUnit XML's properties
            self.user_properties.append((FAILURE_REASON_PROPERTY, failure.reason))
            raise failure from None

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:  # type: ignore[override]
        if isinstance(excinfo.value, GoldenCaseFailure):
            failure = excinfo.value
            crash = CaseCrash(self.shown, self.case.line, failure.headline)
            # --tb=line: pytest prints the crash line after the report; one line is the point.
            brief = self.config.getoption("tbstyle", "auto") == "line"
            return FailureReport("" if brief else failure.report, crash)
        return super().repr_failure(excinfo)


class GoldenPairItem(_GoldenItem):
    """An answer pair checked with its grader."""

    case: PairCase

    def __init__(self, *, grader: PairGrader, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.grader = grader

    def check_case(self) -> None:
        try:
            check_pair(self.case, self.grader, location=self.location_text)
        except GoldenCaseFailure:
            raise
        except Exception as exc:
            raised = f"grader {self.grader.name!r} raised {type(exc).__name__}: {exc}"
            report = f"golden pair {self.case.id!r} failed at {self.location_text}: {raised}"
            trace = user_traceback(exc)
            report += f"\n{trace}" if trace else ""
            raise GoldenCaseFailure(report, f"grader raised {type(exc).__name__}", raised) from None


class GoldenRewardItem(_GoldenItem):
    """A reward case: the reward called with the case's fields, compared with ``expect``."""

    case: RewardCase

    def __init__(self, *, reward: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reward = reward

    def check_case(self) -> None:
        run_reward_case(
            self.case,
            self.reward,
            location=self.location_text,
            regen=bool(self.config.getoption("rewardkit_regen", False)),
            shown_path=self.shown,
        )
