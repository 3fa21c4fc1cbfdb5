"""A real editor: headless Neovim (Debian's ``neovim``) runs the server and reads the diagnostics back."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lsp_engine_view import expected_shapes

HERE = Path(__file__).parent
SCRIPT = HERE / "nvim" / "check_diagnostics.lua"

SAMPLE = """from rewardkit import reward


@reward(name="qa")
def qa_reward(final_respone: str, answer: str) -> float:
    if "🎯" in answer: return "hit"
    return float(final_respone == answer)
"""
"""A misspelled field (RK102) and, after an emoji, a string return (RK202)."""


def _nvim() -> str:
    nvim = shutil.which("nvim")
    if nvim is None:
        if os.environ.get("CI") == "true":
            pytest.fail(
                "nvim is not installed (apt-get install neovim); CI must run the real-editor test"
            )
        pytest.skip("nvim is not installed (apt-get install neovim)")
    return nvim


def _environment(tmp_path: Path, **extra: str) -> dict[str, str]:
    home = tmp_path / "nvim-home"
    return {
        **os.environ,
        "REWARDKIT_PYTHON": sys.executable,
        "REWARDKIT_ROOT": str(tmp_path),
        **{
            f"XDG_{kind}_HOME": str(home / kind.lower())
            for kind in ("DATA", "STATE", "CACHE", "CONFIG")
        },
        **extra,
    }


def _run_neovim(nvim: str, sample: Path, env: dict[str, str]) -> list[str]:
    completed = subprocess.run(
        [nvim, "--headless", "--clean", "-n", "-c", f"luafile {SCRIPT}", str(sample)],
        capture_output=True,
        text=True,
        env=env,
        cwd=sample.parent,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, f"stdout:\n{completed.stdout}\nstderr:\n{completed.stderr}"
    return completed.stdout.splitlines()


def test_neovim_shows_the_servers_diagnostics_and_hover(tmp_path: Path):
    nvim = _nvim()
    (tmp_path / "pyproject.toml").write_text(
        '[tool.rewardkit]\ntask_fields = ["answer"]\n', encoding="utf-8"
    )
    sample = tmp_path / "sample.py"
    sample.write_text(SAMPLE, encoding="utf-8")
    env = _environment(
        tmp_path, REWARDKIT_HOVER="5:{}".format(SAMPLE.splitlines()[4].index("answer") + 2)
    )
    lines = _run_neovim(nvim, sample, env)
    shown = sorted(line for line in lines if line.startswith("sample.py:"))

    expected = []
    text_lines = SAMPLE.splitlines()
    for code, message, line, utf16_column, _, _ in expected_shapes(SAMPLE, sample):
        # Neovim stores byte columns: it converted the server's UTF-16 column back to bytes.
        prefix = text_lines[line].encode("utf-16-le")[: 2 * utf16_column].decode("utf-16-le")
        expected.append(
            f"sample.py:{line + 1}:{len(prefix.encode())}: [rewardkit {code}] {message}"
        )
    assert {"RK102", "RK202"} <= {e.split("[rewardkit ")[1].split("]")[0] for e in expected}
    assert shown == sorted(expected)

    hover = [line for line in lines if line.startswith("HOVER ")]
    assert hover, lines
    assert "answer" in hover[0]
    assert "pyproject.toml" in hover[0]


def test_neovim_without_file_watching_sees_a_changed_pyproject_on_save(tmp_path: Path):
    """Neovim 0.7 declares no file watching: a changed pyproject is noticed at the next save."""
    nvim = _nvim()
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.rewardkit]\ntask_fields = ["answer"]\n', encoding="utf-8")
    sample = tmp_path / "sample.py"
    sample.write_text(SAMPLE, encoding="utf-8")
    env = _environment(
        tmp_path,
        REWARDKIT_RECONFIGURE=f'{pyproject}=[tool.rewardkit]\\ntask_fields = ["question"]\\n',
    )
    lines = _run_neovim(nvim, sample, env)
    before = [line for line in lines if line.startswith("sample.py:")]
    after = [line for line in lines if line.startswith("AFTER ")]
    assert not any("RK101" in line for line in before)
    assert any("RK101" in line and "`answer`" in line for line in after), lines
