"""The set-up scripts of the test command give npm only settings it knows (no warnings of ours)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INSTALL_CODE_SERVER = ROOT / "vscode-extension" / "scripts" / "install-code-server.sh"


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        if os.environ.get("CI") == "true":
            pytest.fail("npm is required in CI (the test command installs code-server with it)")
        pytest.skip("npm is not installed")
    return npm


def test_install_code_server_gives_npm_only_settings_it_knows(tmp_path: Path) -> None:
    script = INSTALL_CODE_SERVER.read_text(encoding="utf-8")
    # Settings the script hands to npm: not in comments, nor in its script shell (a
    # here-document) that sets one for install scripts alone.
    code = re.sub(r"<<'?EOF'?\n.*?\nEOF\n", "", script, flags=re.DOTALL)
    code = "\n".join(line for line in code.splitlines() if not line.lstrip().startswith("#"))
    settings = set(re.findall(r"\b(npm_config_\w+)=", code))
    assert settings >= {"npm_config_yes", "npm_config_script_shell"}
    assert "npm_config_unsafe_perm" not in settings
    environment = {
        **{k: v for k, v in os.environ.items() if not k.lower().startswith("npm_config_")},
        **dict.fromkeys(settings, "true"),
        # npm's user config is the machine's, not ours: leave it out of what is checked.
        "npm_config_userconfig": str(tmp_path / "npmrc"),
    }
    result = subprocess.run(
        [_npm(), "config", "get", "yes"],
        env=environment,
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    assert "Unknown" not in result.stderr, result.stderr
    assert result.stderr.strip() == ""


SYSTEM_PACKAGES = ROOT / ".ci" / "system-packages.sh"
LISTS_LOCK_HELD = (
    "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242 (apt-get)\n"
    "E: Unable to lock directory /var/lib/apt/lists/\n"
)


def _stub(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text(f"#!/usr/bin/env bash\n{body}\n", encoding="utf-8")
    path.chmod(0o755)


def _run_system_packages(
    tmp_path: Path, *, lock_failures: int, holder: str = "", **env: str
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """Run the script for one package against stub apt-get/sudo/lslocks/sleep on PATH (nothing
    is installed): apt-get reports the lists lock held ``lock_failures`` times, then works;
    lslocks shows ``holder``. Returns the run and the apt-get command lines it made."""
    stubs = tmp_path / "bin"
    stubs.mkdir()
    calls = tmp_path / "apt-calls"
    _stub(
        stubs,
        "apt-get",
        f'echo "$*" >> {calls}\n'
        f'if [ "$(grep -c . {calls})" -le {lock_failures} ]; then\n'
        f"  printf '{LISTS_LOCK_HELD}' >&2; exit 100\nfi",
    )
    _stub(stubs, "sudo", 'exec "$@"')  # never the real sudo: its secure_path would find apt-get
    _stub(stubs, "lslocks", f"printf '{holder}'")
    _stub(stubs, "sleep", ":")
    result = subprocess.run(
        ["bash", str(SYSTEM_PACKAGES), "rk-missing-package"],
        env={**os.environ, "PATH": f"{stubs}:{os.environ['PATH']}", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = calls.read_text(encoding="utf-8").splitlines() if calls.exists() else []
    return result, lines


def test_system_packages_waits_for_a_held_package_lists_lock_and_says_so(tmp_path: Path) -> None:
    result, calls = _run_system_packages(tmp_path, lock_failures=2)
    assert result.returncode == 0, result.stderr
    assert (
        "system-packages: Could not get lock /var/lib/apt/lists/lock. It is held by process "
        "4242 (apt-get) Waiting up to 900s for it (REWARDKIT_APT_LOCK_TIMEOUT)"
    ) in result.stderr
    assert [line.split()[-2:] for line in calls] == [["update", "-qq"]] * 3 + [
        ["-qq", "rk-missing-package"]
    ]
    # dpkg's own lock: apt-get waits for it itself, for the time that is left
    assert all(re.match(r"-o DPkg::Lock::Timeout=\d+ ", line) for line in calls), calls


def test_system_packages_names_the_process_holding_dpkgs_lock(tmp_path: Path) -> None:
    holder = "4343 unattended-upgr /var/lib/dpkg/lock-frontend\\n"
    result, calls = _run_system_packages(tmp_path, lock_failures=0, holder=holder)
    assert result.returncode == 0, result.stderr
    assert (
        "system-packages: another package manager is running: process 4343 (unattended-upgr) "
        "holds /var/lib/dpkg/lock-frontend; waiting up to 900s for it"
    ) in result.stderr
    assert len(calls) == 2


def test_system_packages_gives_up_when_the_wait_is_over(tmp_path: Path) -> None:
    result, calls = _run_system_packages(tmp_path, lock_failures=99, REWARDKIT_APT_LOCK_TIMEOUT="0")
    assert result.returncode == 100
    assert "Could not get lock /var/lib/apt/lists/lock" in result.stderr
    assert "system-packages: gave up after waiting 0s for apt/dpkg's lock" in result.stderr
    assert calls == ["-o DPkg::Lock::Timeout=0 update -qq"]


def test_system_packages_rejects_a_lock_timeout_that_is_not_seconds(tmp_path: Path) -> None:
    result, calls = _run_system_packages(
        tmp_path, lock_failures=0, REWARDKIT_APT_LOCK_TIMEOUT="soon"
    )
    assert result.returncode == 2
    assert "REWARDKIT_APT_LOCK_TIMEOUT must be whole seconds, got 'soon'" in result.stderr
    assert calls == []
