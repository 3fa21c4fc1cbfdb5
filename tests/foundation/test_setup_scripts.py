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
