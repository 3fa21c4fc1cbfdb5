"""The wheel built from this repository installs and works in a fresh virtual environment."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
from scratch_checkout import copy_project

ROOT = Path(__file__).resolve().parents[2]
PUBLIC_PACKAGES = [
    "rewardkit",
    "rewardkit.math",
    "rewardkit.checks",
    "rewardkit.evaluation",
    "rewardkit.adapters",
    "rewardkit.testing",
    "rewardkit_lsp",
    "pytest_rewardkit.plugin",
]


@pytest.fixture(scope="module")
def wheel_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The wheel pip builds from the checkout (build isolation, as a user's install does) and
    the build's verbose output, where the build backend prints its warnings."""
    out = tmp_path_factory.mktemp("dist")
    source = copy_project(tmp_path_factory.mktemp("checkout") / "rewardkit")
    # Byte-compiling off (as some CI images set) makes setuptools say so; that is not ours.
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(out), str(source)],
        check=False,
        capture_output=True,
        text=True,
        env=environment,
    )
    log = build.stdout + build.stderr
    assert build.returncode == 0, log
    (built,) = out.glob("rewardkit-*.whl")
    return built, log


@pytest.fixture(scope="module")
def wheel(wheel_build: tuple[Path, str]) -> Path:
    return wheel_build[0]


def test_the_wheel_builds_without_a_warning(wheel_build: tuple[Path, str]) -> None:
    """E.g. setuptools' deprecation of `project.license` as a table: the build is warning-free."""
    warnings = [
        line.strip()
        for line in wheel_build[1].splitlines()
        if re.search(r"warn|deprecat", line, re.I)
    ]
    assert warnings == []


def test_the_wheel_carries_the_license(wheel: Path) -> None:
    archive = zipfile.ZipFile(wheel)
    (metadata,) = (n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
    headers = archive.read(metadata).decode().split("\n\n", 1)[0].splitlines()
    assert "License-Expression: MIT" in headers
    assert not any(h.startswith("License: ") for h in headers)  # the deprecated form
    (license_file,) = (n for n in archive.namelist() if n.endswith(".dist-info/licenses/LICENSE"))
    assert archive.read(license_file) == (ROOT / "LICENSE").read_bytes()


def test_wheel_holds_every_package_and_the_typing_marker(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    for package in ("rewardkit", "rewardkit_lsp", "pytest_rewardkit"):
        assert f"{package}/__init__.py" in names
        assert f"{package}/py.typed" in names
    assert "rewardkit/evaluation/data/math_sample.jsonl" in names
    for katex in ("katex.min.js", "katex.min.css", "LICENSE", "fonts/KaTeX_Main-Regular.woff2"):
        assert f"rewardkit/evaluation/data/katex/{katex}" in names  # the HTML report's KaTeX
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "rewardkit = rewardkit.cli:main" in text
    assert "rewardkit = pytest_rewardkit.plugin" in text
    # tests, benchmarks and the editor extension are not shipped
    assert not any(n.startswith(("tests/", "benchmarks/", "vscode-extension/")) for n in names)


def _user_environment() -> dict[str, str]:
    """A user's shell: none of this test session's Python or pip settings (a ``PYTHONPATH`` to
    this checkout would make pip take rewardkit as installed already and skip the wheel)."""
    return {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("PYTHON", "PIP_", "VIRTUAL_ENV"))
    }


def test_wheel_installs_and_runs_in_a_fresh_venv(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    user = _user_environment()
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", f"{wheel}[lsp,testing]"],
        check=True,
        cwd=tmp_path,
        env=user,
    )
    imports = "; ".join(f"import {name}" for name in PUBLIC_PACKAGES)
    subprocess.run([str(python), "-c", imports], check=True, cwd=tmp_path, env=user)
    version = subprocess.run(
        [str(env_dir / "bin" / "rewardkit"), "--version"],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=user,
    )
    assert version.stdout.startswith("rewardkit ")
    demo = subprocess.run(
        [str(env_dir / "bin" / "rewardkit"), "eval", "math", "--workers", "1", "--html", "r.html"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=user,
    )
    assert demo.returncode == 0, demo.stderr
    assert "score" in demo.stdout.lower()
    assert 'id="report-katex"' in (tmp_path / "r.html").read_text(encoding="utf-8")
    _the_missing_extras_hint_works_as_written(env_dir, wheel, tmp_path, user)


def _the_missing_extras_hint_works_as_written(
    env_dir: Path, wheel: Path, cwd: Path, user: dict[str, str]
) -> None:
    """rewardkit is not on PyPI: the hint for a missing extra names the wheel this environment
    was installed from, and running it as printed installs the extra (``client``: httpx)."""
    command = [
        str(env_dir / "bin" / "rewardkit"),
        "eval",
        "math",
        "--reward-url",
        "http://127.0.0.1:9",
    ]
    missing = subprocess.run(
        command, capture_output=True, text=True, cwd=cwd, env=user, timeout=120
    )
    assert missing.returncode == 2, missing.stderr
    expected = f'pip install "rewardkit[client] @ {wheel.resolve().as_uri()}"'
    assert f"needs the client extra: {expected}" in missing.stderr
    pip = shlex.split(expected)
    subprocess.run(
        [str(env_dir / "bin" / "python"), "-m", *pip, "-q"], check=True, cwd=cwd, env=user
    )
    probe = [str(env_dir / "bin" / "python"), "-c", "import httpx, rewardkit.serve.client"]
    subprocess.run(probe, check=True, cwd=cwd, env=user)


@pytest.mark.slow
def test_the_editable_install_of_the_test_command_prints_no_setuptools_notice(
    tmp_path: Path,
) -> None:
    """Issue 26 item 18: `.ci/test-all`'s `pip install -q -e` printed setuptools' "Editable
    installation ... folders in your working directory with the same name as your package"
    (a BuildBackendWarning pip 25+ shows even with -q). The script's PYTHONWARNINGS hides it."""
    script = (ROOT / ".ci" / "test-all").read_text(encoding="utf-8")
    (setting,) = re.findall(r'^PYTHONWARNINGS="([^"]+)" \\$', script, re.M)
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = str(env_dir / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True)
    source = copy_project(tmp_path / "rewardkit")
    environment = {**os.environ, "PYTHONWARNINGS": setting}
    install = subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-deps", "-e", str(source)],
        capture_output=True,
        text=True,
        env=environment,
    )
    assert install.returncode == 0, install.stderr
    output = install.stdout + install.stderr
    assert "Editable installation" not in output
    assert "BuildBackendWarning" not in output
