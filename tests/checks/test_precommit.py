"""The real ``pre-commit try-repo`` runs the ``rewardkit-check`` hook of this repository.

``try-repo`` installs the source repository's committed HEAD, so the test copies the working tree
into a temporary git repository and commits it there (it works before the project's own commit).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from scratch_checkout import copy_project
from scratch_checkout import git as _git
from scratch_checkout import required_tool as _tool

BAD = "from rewardkit import reward\n\n@reward\ndef qa(final_respone):\n    return {'score': 1.0}\n"
FIXED = (
    "from rewardkit import reward\n\n@reward\ndef qa(final_response):\n    return {'reward': 1.0}\n"
)


@pytest.mark.slow
def test_pre_commit_hook_fails_on_a_bad_reward_and_passes_on_the_fixed_one(tmp_path: Path) -> None:
    _tool("git")
    pre_commit = _tool("pre-commit")
    hook_source = tmp_path / "rewardkit-src"
    copy_project(hook_source)
    assert (hook_source / ".pre-commit-hooks.yaml").is_file()
    _git("init", "-q", cwd=hook_source)
    _git("add", "-A", cwd=hook_source)
    _git("commit", "-q", "-m", "snapshot", cwd=hook_source)

    user_repo = tmp_path / "user-repo"
    user_repo.mkdir()
    _git("init", "-q", cwd=user_repo)
    module = user_repo / "my_reward.py"
    module.write_text(BAD, encoding="utf-8")
    (user_repo / "notes.txt").write_text("not python\n", encoding="utf-8")
    _git("add", "-A", cwd=user_repo)

    environment = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    environment.pop("VIRTUAL_ENV", None)
    command = [
        pre_commit,
        "try-repo",
        str(hook_source),
        "rewardkit-check",
        "--all-files",
        "--color",
        "never",
    ]

    failed = subprocess.run(
        command, cwd=user_repo, env=environment, capture_output=True, text=True, check=False
    )
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "my_reward.py:4:8: RK102" in failed.stdout
    assert "my_reward.py:5:5: RK201" in failed.stdout
    assert "notes.txt" not in failed.stdout

    module.write_text(FIXED, encoding="utf-8")
    _git("add", "-A", cwd=user_repo)
    passed = subprocess.run(
        command, cwd=user_repo, env=environment, capture_output=True, text=True, check=False
    )
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout
