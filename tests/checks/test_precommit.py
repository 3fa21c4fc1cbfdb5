"""The real ``pre-commit try-repo`` runs the ``rewardkit-check`` hook of this repository
(``tests/checks/test_fix_cli.py`` runs ``rewardkit-fix``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from scratch_checkout import git as _git
from scratch_checkout import pre_commit_try_repo

BAD = "from rewardkit import reward\n\n@reward\ndef qa(final_respone):\n    return {'score': 1.0}\n"
FIXED = (
    "from rewardkit import reward\n\n@reward\ndef qa(final_response):\n    return {'reward': 1.0}\n"
)


@pytest.mark.slow
def test_pre_commit_hook_fails_on_a_bad_reward_and_passes_on_the_fixed_one(tmp_path: Path) -> None:
    user_repo, command, environment = pre_commit_try_repo(
        tmp_path, "rewardkit-check", {"my_reward.py": BAD, "notes.txt": "not python\n"}
    )
    module = user_repo / "my_reward.py"

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
