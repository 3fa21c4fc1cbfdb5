"""The README's plugin example (examples/plugin/) runs green as written, and the README text embeds it."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugin"
README = Path(__file__).resolve().parents[2] / "README.md"
FILES = ("golden_answers.toml", "my_rewards.py", "test_my_rewards.py")


def test_the_example_passes_in_a_real_pytest_run(pytester: pytest.Pytester) -> None:
    for name in FILES:
        shutil.copy(EXAMPLE / name, pytester.path / name)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    # A fixed seed: the example's hack search and contract are then the same every run.
    result = pytester.runpytest("-v", "--hypothesis-seed=0", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=9)
    result.stdout.fnmatch_lines(
        [
            "*golden_answers.toml::half-as-decimal PASSED*",
            "*golden_answers.toml::too-long-halves PASSED*",
            "*test_my_rewards.py::test_concise_math_contract PASSED*",
            "*= rewardkit golden cases =*",
            "golden_answers.toml: 6 passed",
        ]
    )


@pytest.mark.parametrize("name", ["golden_answers.toml", "test_my_rewards.py"])
def test_the_readme_section_embeds_the_example_verbatim(name: str) -> None:
    assert (EXAMPLE / name).read_text() in README.read_text()


@pytest.mark.parametrize("document", ["README.md", "docs/plugin.md"])
def test_the_documented_failure_report_is_what_pytest_prints(
    document: str, pytester: pytest.Pytester
) -> None:
    text = (README.parent / document).read_text(encoding="utf-8")
    (report,) = re.findall(r"```text\n(golden pair 'third' failed at .*?)```", text, re.DOTALL)
    pytester.makefile(
        ".toml",
        golden_math="[[pair]]\n"
        'id = "third"\n'
        "given = '0.3333'\n"
        "gold = '\\frac13'\n"
        'note = "labelled equivalent by mistake"\n',
    )
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(report.rstrip("\n").splitlines(), consecutive=True)
