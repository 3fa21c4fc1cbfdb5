"""Run the tests that use a Ray fixture in a child pytest, one per test module (a pytest plugin
the adapters' conftest imports).

A Ray driver ends its whole process (exit 1, no summary) a minute after its cluster dies, and
verl's reward managers must run in the driver. So a Ray killed from outside takes only the
child with it: the child sends each phase's report back (pytest's own report serialization, as
pytest-xdist does), and a test the child did not finish fails here with the child's output. Ray
lives as long as the child, that is its module's tests.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

RAY_FIXTURES = frozenset({"ray_session"})
"""Tests using one of these fixtures run in the child."""
CHILD = "RK_RAY_TESTS_CHILD"
"""Set in the child run: the file its reports go to (one JSON line each)."""
CHILD_TIMEOUT = 1800


def uses_ray(item: pytest.Item) -> bool:
    """True when ``item`` uses a Ray fixture."""
    return not RAY_FIXTURES.isdisjoint(getattr(item, "fixturenames", ()))


def _module(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


class RayChild:
    """The plugin: in the main run, runs each module's Ray tests in a child and replays the
    child's reports; in the child (``CHILD`` set), writes every report to that file."""

    name = "rewardkit-ray-child"

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.reports: dict[str, list[Any]] = {}
        self.ended: dict[str, tuple[str, str]] = {}  # module -> (how the child ended, its output)

    @classmethod
    def register(cls, config: pytest.Config) -> None:
        """Register the plugin once (from a conftest's ``pytest_configure``)."""
        if not config.pluginmanager.has_plugin(cls.name):
            config.pluginmanager.register(cls(config), cls.name)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> bool | None:
        """In the main run, a Ray test's reports come from its module's child run."""
        if os.environ.get(CHILD) or not uses_ray(item):
            return None
        if _module(item) not in self.ended:
            self._run_child(item)
        item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        for report in self._reports(item):
            item.ihook.pytest_runtest_logreport(report=report)
        # What this run set up for earlier tests (their module's fixtures) and the next test does
        # not share is torn down here, as pytest's own teardown phase would have done.
        teardown = pytest.CallInfo.from_call(
            lambda: item.session._setupstate.teardown_exact(nextitem), when="teardown"
        )
        if teardown.excinfo is not None:
            report = pytest.TestReport.from_item_and_call(item, teardown)
            item.ihook.pytest_runtest_logreport(report=report)
        item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """In the child run, send every report to the main run as it is made."""
        path = os.environ.get(CHILD)
        if path:
            data = self.config.hook.pytest_report_to_serializable(config=self.config, report=report)
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(data) + "\n")

    def _run_child(self, item: pytest.Item) -> None:
        """Run the Ray tests of ``item``'s module in one child pytest; keep their reports."""
        module = _module(item)
        nodeids = [i.nodeid for i in item.session.items if uses_ray(i) and _module(i) == module]
        with tempfile.TemporaryDirectory(prefix="rk-ray-child-") as folder:
            reports, output = Path(folder) / "reports.jsonl", Path(folder) / "output.txt"
            # tee-sys, not fd capture: what Ray prints as it ends the process reaches the output.
            command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
            with output.open("wb") as sink:
                child = subprocess.Popen(
                    [*command, "--capture=tee-sys", *nodeids],
                    cwd=self.config.rootpath,
                    env={**os.environ, CHILD: str(reports)},
                    stdout=sink,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
                try:
                    how = f"exit {child.wait(timeout=CHILD_TIMEOUT)}"
                except subprocess.TimeoutExpired:
                    os.killpg(child.pid, signal.SIGKILL)  # the child and the Ray it started
                    child.wait()
                    how = f"killed after {CHILD_TIMEOUT} s"
            lines = reports.read_text(encoding="utf-8").splitlines() if reports.exists() else []
            self.ended[module] = (how, output.read_text(encoding="utf-8", errors="replace")[-4000:])
        hook = self.config.hook
        for line in lines:
            report = hook.pytest_report_from_serializable(config=self.config, data=json.loads(line))
            self.reports.setdefault(report.nodeid, []).append(report)

    def _reports(self, item: pytest.Item) -> list[Any]:
        """The child's reports of ``item``; a phase it did not finish (its Ray was lost) fails."""
        reports = self.reports.pop(item.nodeid, [])
        if any(report.when == "teardown" for report in reports):
            return reports
        how, output = self.ended[_module(item)]
        message = (
            f"the child pytest running the Ray tests of {_module(item)} ended ({how}) before "
            f"this test finished: was its Ray cluster lost? Its output ends:\n{output}"
        )
        lost = pytest.TestReport(
            nodeid=item.nodeid,
            location=item.location,
            keywords=dict.fromkeys(item.keywords, 1),
            outcome="failed",
            longrepr=message,
            when="teardown" if any(report.when == "call" for report in reports) else "call",
            sections=[],
            duration=0.0,
        )
        return [*reports, lost]
