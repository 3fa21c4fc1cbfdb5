"""The wheel built from this repository installs and works in a fresh virtual environment."""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

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
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
        check=True,
    )
    (built,) = out.glob("rewardkit-*.whl")
    return built


def test_wheel_holds_every_package_and_the_typing_marker(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    for package in ("rewardkit", "rewardkit_lsp", "pytest_rewardkit"):
        assert f"{package}/__init__.py" in names
        assert f"{package}/py.typed" in names
    assert "rewardkit/evaluation/data/math_sample.jsonl" in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "rewardkit = rewardkit.cli:main" in text
    assert "rewardkit = pytest_rewardkit.plugin" in text
    # tests, benchmarks and the editor extension are not shipped
    assert not any(n.startswith(("tests/", "benchmarks/", "vscode-extension/")) for n in names)


def test_wheel_installs_and_runs_in_a_fresh_venv(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", f"{wheel}[lsp,testing]"],
        check=True,
        cwd=tmp_path,
    )
    imports = "; ".join(f"import {name}" for name in PUBLIC_PACKAGES)
    subprocess.run([str(python), "-c", imports], check=True, cwd=tmp_path)
    version = subprocess.run(
        [str(env_dir / "bin" / "rewardkit"), "--version"],
        check=True, capture_output=True, text=True, cwd=tmp_path,
    )
    assert version.stdout.startswith("rewardkit ")
    demo = subprocess.run(
        [str(env_dir / "bin" / "rewardkit"), "eval", "math", "--workers", "1"],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert demo.returncode == 0, demo.stderr
    assert "score" in demo.stdout.lower()
