"""Without hypothesis, ``rewardkit.testing`` names the extra that installs it, and that extra exists."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]

# A fresh interpreter in which ``import hypothesis`` fails as it does when it is not installed.
WITHOUT_HYPOTHESIS = textwrap.dedent(
    """
    import importlib.abc
    import sys

    class NoHypothesis(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "hypothesis" or name.startswith("hypothesis."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, NoHypothesis())
    import rewardkit.testing  # the golden-file side imports without hypothesis
    from rewardkit.testing import latex_numbers
    """
)


def test_import_without_hypothesis_names_the_testing_extra() -> None:
    result = subprocess.run(
        [sys.executable, "-c", WITHOUT_HYPOTHESIS],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert result.returncode == 1
    last_line = result.stderr.strip().splitlines()[-1]
    assert last_line == (
        "ImportError: rewardkit.testing.latex_numbers needs hypothesis: "
        f'pip install "{ROOT}[testing]"'
    )


def test_the_extra_the_message_names_installs_hypothesis() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    testing = project["optional-dependencies"]["testing"]
    assert any(requirement.startswith("hypothesis") for requirement in testing)
