"""Habits users bring from ruff, and ``--explain`` on a terminal or a pipe (issue 37.10), through
the real ``rewardkit check``."""

from __future__ import annotations

import errno
import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from .cli_helpers import BAD, GOOD, run_check


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.rewardkit]\ntask_fields = ["answer"]\n', encoding="utf-8"
    )
    (tmp_path / "bad.py").write_text(BAD, encoding="utf-8")
    (tmp_path / "good.py").write_text(GOOD.replace("'qa'", "'qa_good'"), encoding="utf-8")
    return tmp_path


def test_exit_zero_reports_the_errors_and_exits_0(project: Path) -> None:
    plain = run_check(cwd=project)
    assert plain.returncode == 1
    zero = run_check("--exit-zero", cwd=project)
    assert zero.returncode == 0, zero.stderr
    assert zero.stdout == plain.stdout
    again = run_check("--exit-zero", cwd=project)  # answered by the run cache: the same
    assert (again.returncode, again.stdout) == (0, plain.stdout)
    assert run_check(cwd=project).returncode == 1  # the cache keeps the two apart
    # 2 still means the check could not run, as ruff's --exit-zero
    assert run_check("--exit-zero", "missing.py", cwd=project).returncode == 2


def test_statistics_count_the_problems_per_rule(project: Path) -> None:
    listed = run_check(cwd=project)
    result = run_check("--statistics", cwd=project)
    assert result.returncode == 1, result.stderr
    assert result.stdout != listed.stdout  # not the cached list of problems
    lines = result.stdout.splitlines()
    assert lines[-1] == "Found 3 problems (3 errors, 0 warnings)."
    rows = [line.split("\t") for line in lines[:-1]]
    assert [(count, code) for count, code, _ in rows] == [
        ("1", "RK101"),
        ("1", "RK102"),
        ("1", "RK201"),
    ]
    names = {code: name for _, code, name in rows}
    assert names["RK101"].endswith("unknown-field")
    assert names["RK102"] == "[*] misspelled-predefined-field"  # a safe rename exists
    as_json = run_check("--statistics", "--output-format", "json", cwd=project)
    items = json.loads(as_json.stdout)
    assert [(i["code"], i["count"]) for i in items] == [("RK101", 1), ("RK102", 1), ("RK201", 1)]
    assert {i["code"]: i["fixable"] for i in items}["RK102"] is True
    quiet = run_check("--statistics", "--quiet", "good.py", cwd=project)
    assert (quiet.returncode, quiet.stdout) == (0, "")


def test_output_format_is_format(project: Path) -> None:
    assert (
        run_check("--output-format", "json", cwd=project).stdout
        == run_check("--format=json", "--no-cache", cwd=project).stdout
        == run_check("--output-format=json", "--no-cache", cwd=project).stdout
    )
    wrong = run_check("--output-format", "concise", cwd=project)
    assert wrong.returncode == 2
    assert "invalid choice: 'concise'" in wrong.stderr


def test_explain_piped_is_plain_text(tmp_path: Path) -> None:
    result = run_check("--explain", "RK206", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert text.startswith("RK206: a return that can give `None`")
    for markup in ("```", "**", "###"):
        assert markup not in text
    assert "Severity: error." in text
    assert "    def boxed(final_response, answer):" in text  # code indented, kept whole
    assert all(len(line) <= 88 for line in text.splitlines() if not line.startswith("    "))


def _on_a_terminal(*args: str, cwd: Path) -> str:
    """What ``rewardkit check ARGS`` writes to a terminal (a pseudo-terminal, 100 columns)."""
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": "100", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "rewardkit", "check", *args],
        cwd=cwd,
        stdout=follower,
        stderr=subprocess.PIPE,
        env=env,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError as error:  # EIO: the child closed the terminal
            if error.errno != errno.EIO:
                raise
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert process.wait(timeout=120) == 0, process.stderr.read() if process.stderr else ""
    if process.stderr:
        process.stderr.close()
    return b"".join(chunks).decode()


def test_explain_on_a_terminal_renders_the_markdown(tmp_path: Path) -> None:
    shown = _on_a_terminal("--explain", "RK206", cwd=tmp_path)
    assert "\x1b[" in shown  # styled
    for markup in ("```", "**", "###"):
        assert markup not in shown
    assert "RK206: a return that can give" in shown
    assert "boxed" in shown
    assert "NOT_APPLICABLE" in shown
