"""The README's two pre-commit snippets work as written, in real pre-commit.

Both name the user's rewardkit checkout as ``/path/to/rewardkit`` (rewardkit is on no package
index, and pip runs in pre-commit's cache where no relative path can name it): that
placeholder, and nothing else, is replaced with a copy of this checkout.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from scratch_checkout import copy_project, git, required_tool

ROOT = Path(__file__).resolve().parents[2]
PLACEHOLDER = "/path/to/rewardkit"
BAD = "from rewardkit import reward\n\n@reward\ndef qa(final_respone):\n    return {'score': 1.0}\n"
FIXED = (
    "from rewardkit import reward\n\n@reward\ndef qa(final_response):\n    return {'reward': 1.0}\n"
)


def readme_snippets() -> tuple[str, str]:
    """The local hook and the remote form, as the README gives them."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Static checks", 1)[1].split("\n## ", 1)[0]
    local, remote = re.findall(r"```yaml\n(.*?)```", section, flags=re.DOTALL)
    return local, remote


def with_checkout(snippet: str, checkout: Path) -> str:
    assert snippet.count(PLACEHOLDER) == 1
    return snippet.replace(PLACEHOLDER, str(checkout))


def user_repository(path: Path, config: str) -> Path:
    """A git repository with a bad reward module, a file that is not Python, and ``config``."""
    path.mkdir()
    git("init", "-q", cwd=path)
    (path / "my_reward.py").write_text(BAD, encoding="utf-8")
    (path / "notes.txt").write_text("not python\n", encoding="utf-8")
    (path / ".pre-commit-config.yaml").write_text(config, encoding="utf-8")
    git("add", "-A", cwd=path)
    return path


def pre_commit(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PRE_COMMIT_HOME": str(home)}
    environment.pop("VIRTUAL_ENV", None)
    return subprocess.run(
        [required_tool("pre-commit"), *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_readme_gives_a_local_hook_and_the_remote_form() -> None:
    local, remote = (yaml.safe_load(snippet) for snippet in readme_snippets())
    (local_repo,) = local["repos"]
    assert local_repo["repo"] == "local"
    (hook,) = local_repo["hooks"]
    assert hook["language"] == "python"
    assert hook["additional_dependencies"] == [PLACEHOLDER]
    # The local hook is the one the repository publishes, plus how to install it.
    published_hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert [h["id"] for h in published_hooks] == ["rewardkit-check", "rewardkit-fix"]
    published = published_hooks[0]
    assert {k: v for k, v in hook.items() if k != "additional_dependencies"} == {
        k: v for k, v in published.items() if k != "description"
    }
    (remote_repo,) = remote["repos"]
    assert remote_repo["repo"] == PLACEHOLDER
    assert [h["id"] for h in remote_repo["hooks"]] == [published["id"]]


@pytest.mark.slow
def test_the_readme_local_hook_installs_rewardkit_from_the_checkout_and_runs(
    tmp_path: Path,
) -> None:
    required_tool("git")
    checkout = copy_project(tmp_path / "rewardkit")
    local, _ = readme_snippets()
    user_repo = user_repository(tmp_path / "user-repo", with_checkout(local, checkout))
    home = tmp_path / "pre-commit-home"

    failed = pre_commit("run", "--all-files", "--color", "never", cwd=user_repo, home=home)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "my_reward.py:4:8: RK102" in failed.stdout
    assert "my_reward.py:5:5: RK201" in failed.stdout
    assert "notes.txt" not in failed.stdout

    (user_repo / "my_reward.py").write_text(FIXED, encoding="utf-8")
    git("add", "-A", cwd=user_repo)
    passed = pre_commit("run", "--all-files", "--color", "never", cwd=user_repo, home=home)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "rewardkit check" in passed.stdout
    assert "Passed" in passed.stdout


def test_the_readme_remote_form_gets_its_rev_from_autoupdate(tmp_path: Path) -> None:
    """``pre-commit autoupdate`` writes the commit (rewardkit has no tags yet) and finds the
    hook at that commit; running the hook from a repository at a commit is
    tests/checks/test_precommit.py's."""
    required_tool("git")
    clone = copy_project(tmp_path / "rewardkit")
    git("init", "-q", cwd=clone)
    git("add", "-A", cwd=clone)
    git("commit", "-q", "-m", "snapshot", cwd=clone)
    head = git("rev-parse", "HEAD", cwd=clone).strip()
    _, remote = readme_snippets()
    user_repo = user_repository(tmp_path / "user-repo", with_checkout(remote, clone))
    home = tmp_path / "pre-commit-home"

    update = pre_commit("autoupdate", "--color", "never", cwd=user_repo, home=home)
    assert update.returncode == 0, update.stdout + update.stderr
    config = yaml.safe_load((user_repo / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    assert config["repos"][0]["rev"] == head
    validate = pre_commit("validate-config", cwd=user_repo, home=home)
    assert validate.returncode == 0, validate.stdout + validate.stderr
