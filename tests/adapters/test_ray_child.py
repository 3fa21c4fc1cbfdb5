"""The Ray tests' child run (``ray_child``): a child that dies mid-test, as a Ray driver does a
minute after its cluster is killed, fails that module's remaining Ray tests only; the run goes
on and reports."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

CONFTEST = """
import os
import pytest
from ray_child import CHILD, RayChild

def pytest_configure(config):
    RayChild.register(config)

@pytest.fixture(scope="module")
def ray_session():
    assert os.environ.get(CHILD), "a Ray fixture is set up in the child run only"
    yield "a cluster"
"""

TESTS = """
import os
from ray_child import CHILD

def test_runs_in_the_child(ray_session):
    print("in the child")
    assert os.environ.get(CHILD)

def test_a_failure_keeps_its_traceback(ray_session):
    assert ray_session == "another cluster"

def test_the_cluster_is_lost(ray_session):
    print("Failed to connect to GCS within 60 seconds.", flush=True)
    os._exit(1)  # what a Ray driver does when its cluster has gone

def test_queued_behind_the_lost_one(ray_session):
    pass

def test_without_ray_runs_here():
    assert not os.environ.get(CHILD)
"""


def test_a_lost_child_fails_its_ray_tests_and_the_run_reports(pytester: pytest.Pytester) -> None:
    shutil.copy(HERE / "ray_child.py", pytester.path / "ray_child.py")
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_ray_module=TESTS)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "-rA")
    result.assert_outcomes(passed=2, failed=3)
    result.stdout.fnmatch_lines(
        [
            "*_ test_a_failure_keeps_its_traceback _*",
            "*assert 'a cluster' == 'another cluster'",
            "*_ test_the_cluster_is_lost _*",
            "the child pytest running the Ray tests of test_ray_module.py ended (exit 1) before "
            "this test finished: was its Ray cluster lost? Its output ends:",
            "*Failed to connect to GCS within 60 seconds.",
            "*_ test_queued_behind_the_lost_one _*",
            "the child pytest running the Ray tests of test_ray_module.py ended (exit 1)*",
        ]
    )
    result.stdout.fnmatch_lines(["*Captured stdout call*", "in the child"])
    result.stdout.fnmatch_lines(["PASSED test_ray_module.py::test_without_ray_runs_here"])


def test_a_ray_test_last_in_its_module_lets_the_next_module_set_up(
    pytester: pytest.Pytester,
) -> None:
    # The module fixture an earlier test set up here is torn down after the Ray test, as
    # pytest's own teardown phase does: the next module's test then sets up cleanly.
    shutil.copy(HERE / "ray_child.py", pytester.path / "ray_child.py")
    pytester.makeconftest(
        CONFTEST
        + """
@pytest.fixture(scope="module")
def model():
    yield "a model"
    print("model torn down")
"""
    )
    pytester.makepyfile(
        test_first="def test_plain(model):\n    pass\n\n"
        "def test_ray_last(ray_session):\n    pass\n",
        test_second="def test_plain_again(model):\n    pass\n",
    )
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "-s")
    result.assert_outcomes(passed=3)
    assert result.stdout.str().count("model torn down") == 2
