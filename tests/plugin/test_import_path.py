"""A golden file in ``tests/`` naming a reward module at the project root (docs/plugin.md)."""

from __future__ import annotations

import pytest

ROOT_REWARDS = """
from rewardkit import reward

@reward(name="root_exact", auto_register=False)
def exact(final_response: str, answer: str) -> float:
    return float(final_response.strip() == answer)
"""

GOLDEN = """[[reward]]
id = "exact-match"
reward = "root_rewards_37:exact"
fields = { final_response = "42", answer = "42" }
expect = 1.0
"""

INI = "[pytest]\nasyncio_default_fixture_loop_scope = function\n"


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """``root_rewards_37.py`` at the root, ``tests/golden_rewards.toml`` naming it."""
    pytester.makepyfile(root_rewards_37=ROOT_REWARDS)
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "golden_rewards.toml").write_text(GOLDEN, encoding="utf-8")
    return pytester


def test_a_root_module_is_not_importable_without_pythonpath(project: pytest.Pytester) -> None:
    project.makeini(INI)
    result = project.runpytest("-p", "no:cacheprovider", "tests")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        [
            "tests/golden_rewards.toml:3: [[][[]reward]] 'exact-match': cannot resolve "
            "'root_rewards_37:exact': cannot import 'root_rewards_37' *; 'root_rewards_37' is on "
            "neither sys.path nor the golden file's folder (tests): for a module at the project "
            'root, set pythonpath = [[]"."[]] under [[]tool.pytest.ini_options[]] in pyproject.toml '
            "(pytest.ini: pythonpath = .)"
        ]
    )


@pytest.mark.parametrize(
    ("config_file", "text"),
    [
        ("pytest.ini", INI + "pythonpath = .\n"),
        (
            "pyproject.toml",
            '[tool.pytest.ini_options]\nasyncio_default_fixture_loop_scope = "function"\n'
            'pythonpath = ["."]\n',
        ),
    ],
    ids=["pytest.ini", "pyproject.toml"],
)
def test_pythonpath_at_the_root_imports_it(
    project: pytest.Pytester, config_file: str, text: str
) -> None:
    (project.path / config_file).write_text(text, encoding="utf-8")
    result = project.runpytest("-p", "no:cacheprovider", "tests")
    result.assert_outcomes(passed=1)
    # from inside tests/ too: pythonpath is taken from the config file's folder
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(project.path / "tests")
        result = project.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_python_dash_m_pytest_puts_the_folder_it_runs_in_on_sys_path(
    project: pytest.Pytester,
) -> None:
    # What docs/plugin.md says: `python -m pytest` from the root imports it without pythonpath.
    project.makeini(INI)
    result = project.runpytest_subprocess("-p", "no:cacheprovider", "tests")  # python -m pytest
    result.assert_outcomes(passed=1)
