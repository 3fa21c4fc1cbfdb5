"""Fixtures of the VS Code extension tests: npm, the packaged `.vsix`, code-server and Chromium.

Each runs the real tool as a subprocess (see `vscode_harness` for skip-or-fail rules).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from headless_chromium import CHROMIUM
from vscode_harness import (
    ARTIFACTS,
    EXTENSION_DIR,
    FAKE_PYTHON_EXTENSION,
    INSTALL_SCRIPT,
    missing,
    require_executable,
    run,
    run_install_script,
)


@pytest.fixture(scope="session")
def npm() -> str:
    """npm on PATH (Node 20 from the machine)."""
    require_executable("node", "install Node.js 20")
    return require_executable("npm", "install Node.js 20 with npm")


@pytest.fixture(scope="session")
def npm_ci(npm: str) -> subprocess.CompletedProcess[str]:
    """`npm ci` in vscode-extension/ (once per session): the locked dependencies."""
    return run([npm, "ci"], cwd=EXTENSION_DIR, timeout=600)


@pytest.fixture(scope="session")
def vsix(
    npm_ci: subprocess.CompletedProcess[str], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """The extension packaged by `npx --yes @vscode/vsce package` (its prepublish step builds)."""
    npx = require_executable("npx", "install Node.js 20 with npm")
    out = tmp_path_factory.mktemp("vsix") / "rewardkit.vsix"
    run(
        [npx, "--yes", "@vscode/vsce", "package", "--out", str(out)], cwd=EXTENSION_DIR, timeout=600
    )
    assert out.is_file(), f"vsce reported success but wrote no {out}"
    return out


@pytest.fixture(scope="session")
def fake_python_extension_vsix(
    npm_ci: subprocess.CompletedProcess[str], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """`tests/vscode/fake-python-extension` packaged: stands in for ms-python.python offline."""
    npx = require_executable("npx", "install Node.js 20 with npm")
    source = tmp_path_factory.mktemp("fake-python-extension")
    shutil.copytree(FAKE_PYTHON_EXTENSION, source, dirs_exist_ok=True)
    out = source / "fake-python.vsix"
    # vsce from the extension's locked devDependencies (npx finds it there).
    run(
        [npx, "--prefix", str(EXTENSION_DIR), "vsce", "package", "--no-dependencies", "--skip-license",
         "--allow-missing-repository", "--out", str(out)],
        cwd=source,
        timeout=300,
    )  # fmt: skip
    return out


@pytest.fixture(scope="session")
def code_server() -> Path:
    """code-server installed (idempotently) by the extension's install script; its executable."""
    require_executable("npm", "install Node.js 20 with npm")
    completed = run_install_script(timeout=900)
    if completed.returncode != 0:
        missing(
            f"code-server could not be installed by {INSTALL_SCRIPT.name}:\n{completed.stderr[-3000:]}"
        )
    executable = Path(completed.stdout.strip().splitlines()[-1])
    assert executable.is_file(), f"the install script named {executable}, which does not exist"
    return executable


@pytest.fixture(scope="session")
def chromium() -> Path:
    """Debian's Chromium (`apt-get install chromium`), driven by Python playwright."""
    if not CHROMIUM.is_file():
        missing(f"{CHROMIUM} is missing (apt-get install -y chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing("the Python package playwright is not installed (pip install playwright)")
    return CHROMIUM


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """`test-artifacts/vscode/` at the repository root: screenshots and logs kept after the run."""
    path = ARTIFACTS / "vscode"
    shutil.rmtree(path, ignore_errors=True)  # no stale screenshots from an earlier run
    path.mkdir(parents=True)
    return path


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Keep each test's call report on its item, so fixtures can save logs when it failed."""
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.rep_call = report  # type: ignore[attr-defined]
