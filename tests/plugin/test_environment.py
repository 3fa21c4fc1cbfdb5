"""The README's check of which pytest has the plugin tells the two cases apart: the pytest of
rewardkit's environment lists the plugin's options; a pytest from another environment prints
nothing for it and ignores golden files."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
GOLDEN = "[[pair]]\nid = 'half'\ngiven = '0.5'\ngold = '\\frac12'\n"


def readme_check_command() -> str:
    (command,) = set(re.findall(r"`(pytest --help \| grep rewardkit)`", README.read_text()))
    return command


def run_with_first_on_path(
    bin_dir: Path, command: str, cwd: Path, *, other_environment: bool = False
) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    environment.pop("VIRTUAL_ENV", None)
    if other_environment:
        # Another environment has no path to rewardkit: not the PYTHONPATH a development
        # checkout may set (which would also find the checkout's *.egg-info and its plugin).
        environment.pop("PYTHONPATH", None)
    return subprocess.run(
        ["sh", "-c", command], cwd=cwd, env=environment, capture_output=True, text=True, check=False
    )


def test_the_check_finds_the_plugin_in_rewardkits_environment(tmp_path: Path) -> None:
    result = run_with_first_on_path(Path(sys.executable).parent, readme_check_command(), tmp_path)
    assert result.returncode == 0, result.stderr
    assert "--rewardkit-regen" in result.stdout


@pytest.mark.slow
def test_a_pytest_from_another_environment_ignores_golden_files_and_the_check_shows_it(
    tmp_path: Path,
) -> None:
    other = tmp_path / "other-env"
    venv.EnvBuilder(with_pip=True).create(other)
    subprocess.run(
        [str(other / "bin" / "python"), "-m", "pip", "install", "-q", "pytest"],
        check=True,
        capture_output=True,
    )
    project = tmp_path / "project"
    project.mkdir()
    (project / "golden_math.toml").write_text(GOLDEN, encoding="utf-8")

    check = run_with_first_on_path(
        other / "bin", readme_check_command(), project, other_environment=True
    )
    assert check.returncode == 1  # grep found nothing
    assert check.stdout == ""
    ignored = run_with_first_on_path(
        other / "bin", "pytest -p no:cacheprovider", project, other_environment=True
    )
    assert ignored.returncode == 5, ignored.stdout  # pytest's "no tests ran"
    assert "no tests ran" in ignored.stdout

    collected = run_with_first_on_path(
        Path(sys.executable).parent, "pytest -p no:cacheprovider", project
    )
    assert collected.returncode == 0, collected.stdout
    assert "golden_math.toml: 1 passed" in collected.stdout
