"""``rewardkit check --fix`` / ``--diff`` / ``--unsafe-fixes`` in real processes: the golden
files written byte for byte, a second ``--fix`` changing nothing, ``--diff`` exiting 1, files
written back in their own encoding and line endings, libcst loaded only when a fix is asked
for, and the ``rewardkit-fix`` pre-commit hook."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from scratch_checkout import git as _git
from scratch_checkout import pre_commit_try_repo

from .cli_helpers import run_check

GOLDEN = Path(__file__).parent / "fix_golden"
NAMES = sorted(path.name for path in (GOLDEN / "before").glob("*.py"))


@pytest.fixture
def golden_project(tmp_path: Path) -> Path:
    """The golden modules, unfixed, in a project with their configuration."""
    shutil.copy(GOLDEN / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copytree(GOLDEN / "before", tmp_path / "rewards")
    return tmp_path


def _files(project: Path) -> dict[str, bytes]:
    return {name: (project / "rewards" / name).read_bytes() for name in NAMES}


def _golden(folder: str) -> dict[str, bytes]:
    return {name: (GOLDEN / folder / name).read_bytes() for name in NAMES}


def test_fix_writes_the_golden_files_and_a_second_fix_changes_nothing(golden_project: Path):
    first = run_check("--fix", "rewards", cwd=golden_project)
    assert _files(golden_project) == _golden("fixed")
    assert first.returncode == 1, first.stdout + first.stderr  # unsafe fixes leave errors
    assert first.stdout.startswith("Fixed 10 problems in 3 files.\n")
    assert "5 more problems have an unsafe fix, not applied" in first.stdout
    assert "verl_gsm8k.py:21:18: RK101 `solution_str` is not a field" in first.stdout
    assert "RK102" not in first.stdout  # fixed, so no longer reported

    second = run_check("--fix", "rewards", cwd=golden_project)
    assert _files(golden_project) == _golden("fixed")
    assert second.stdout.startswith("No fixes applied.\n")
    assert second.returncode == 1


def test_unsafe_fixes_are_applied_only_when_asked(golden_project: Path):
    result = run_check("--fix", "--unsafe-fixes", "rewards", cwd=golden_project)
    assert _files(golden_project) == _golden("fixed_unsafe")
    assert result.stdout.startswith("Fixed 15 problems in 3 files.\n"), result.stdout
    again = run_check("--fix", "--unsafe-fixes", "rewards", cwd=golden_project)
    assert _files(golden_project) == _golden("fixed_unsafe")
    assert again.stdout.startswith("No fixes applied.\n")


def test_diff_prints_the_change_exits_one_and_writes_nothing(golden_project: Path):
    result = run_check("--diff", "rewards", cwd=golden_project)
    assert result.returncode == 1, result.stderr
    assert _files(golden_project) == _golden("before")
    assert "--- rewards/open_r1_accuracy.py\n+++ rewards/open_r1_accuracy.py\n" in result.stdout
    assert "-def accuracy(completions: str, solution: str) -> float:\n" in result.stdout
    assert "+def accuracy(completion: str, solution: str) -> float:\n" in result.stdout
    assert result.stderr.startswith("Would fix 10 problems in 3 files.\n")
    # applying the diff gives what --fix writes
    patch = shutil.which("patch")
    if patch is not None:
        subprocess.run(
            [patch, "-p0", "-s"], input=result.stdout, text=True, cwd=golden_project, check=True
        )
        assert _files(golden_project) == _golden("fixed")
        clean = run_check("--diff", "rewards", cwd=golden_project)
        assert (clean.returncode, clean.stdout) == (0, "")


def test_unsafe_fixes_need_fix_or_diff(golden_project: Path):
    result = run_check("--unsafe-fixes", "rewards", cwd=golden_project)
    assert result.returncode == 2
    assert "--unsafe-fixes applies with --fix or --diff" in result.stderr


def test_stdin_gets_the_fixed_code_and_the_report_goes_to_stderr(golden_project: Path):
    source = (GOLDEN / "before" / "agentfly_search.py").read_text(encoding="utf-8")
    result = run_check(
        "--fix",
        "-",
        "--stdin-filename",
        "rewards/agentfly_search.py",
        cwd=golden_project,
        stdin=source,
    )
    assert result.stdout == (GOLDEN / "fixed" / "agentfly_search.py").read_text(encoding="utf-8")
    assert "Fixed 5 problems in 1 file." in result.stderr
    assert "rewards/agentfly_search.py:26:5: RK201" in result.stderr


def test_a_fixed_file_keeps_its_encoding_and_line_endings(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[tool.rewardkit]\ntask_fields = ["answer"]\n')
    body = (
        "from rewardkit import reward\r\n\r\n@reward\r\ndef qa(final_respone, answer):\r\n"
        "    # réponse attendue\r\n    return float(final_respone == answer)\r\n"
    )
    latin = tmp_path / "latin.py"
    latin.write_bytes(("# -*- coding: latin-1 -*-\r\n" + body).encode("latin-1"))
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbf" + body.replace("qa", "qa_bom").encode("utf-8"))
    result = run_check("--fix", "latin.py", "bom.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    fixed = body.replace("final_respone", "final_response")
    assert latin.read_bytes() == ("# -*- coding: latin-1 -*-\r\n" + fixed).encode("latin-1")
    assert bom.read_bytes() == b"\xef\xbb\xbf" + fixed.replace("qa", "qa_bom").encode("utf-8")


def test_json_fixes_carry_their_edits_and_applicability(golden_project: Path):
    result = run_check("--format", "json", "rewards/verl_gsm8k.py", cwd=golden_project)
    items = json.loads(result.stdout)
    fixes = {item["message"][:14]: item["fixes"] for item in items if item["fixes"]}
    [unsafe] = fixes["`solution_str`"]
    assert unsafe["applicability"] == "unsafe"
    assert unsafe["edits"][0]["new_text"] == "solution"
    [display] = fixes["`ground_truth`"]
    assert display["applicability"] == "display"


PROBE = """
import sys
from rewardkit.cli import main
status = main(sys.argv[1:])
print("LIBCST" if "libcst" in sys.modules else "NO-LIBCST", file=sys.stderr)
"""

BLOCK_LIBCST = """
import sys
class NoLibcst:
    def find_spec(self, name, path=None, target=None):
        if name == "libcst" or name.startswith("libcst."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, NoLibcst())
from rewardkit.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _python(code: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True, check=False
    )


@pytest.mark.parametrize("output_format", ["text", "github", "sarif"])
def test_a_plain_check_never_imports_libcst(golden_project: Path, output_format: str):
    plain = _python(
        PROBE, "check", "--no-cache", "--format", output_format, "rewards", cwd=golden_project
    )
    assert plain.stderr.strip().splitlines()[-1] == "NO-LIBCST"
    fixing = _python(PROBE, "check", "--diff", "rewards", cwd=golden_project)
    assert fixing.stderr.strip().splitlines()[-1] == "LIBCST"


def test_without_libcst_fix_names_the_extra_to_install(golden_project: Path):
    result = _python(BLOCK_LIBCST, "check", "--fix", "rewards", cwd=golden_project)
    assert result.returncode == 2
    checkout = Path(__file__).resolve().parents[2]
    assert (
        f'applying fixes needs libcst, which is not installed: pip install "{checkout}[fix]"'
        in result.stderr
    )
    assert _files(golden_project) == _golden("before")
    plain = _python(BLOCK_LIBCST, "check", "rewards", cwd=golden_project)
    assert plain.returncode == 1  # checking works without it
    as_json = _python(BLOCK_LIBCST, "check", "--format", "json", "rewards", cwd=golden_project)
    assert as_json.returncode == 1
    assert all(fix["edits"] == [] for item in json.loads(as_json.stdout) for fix in item["fixes"])


@pytest.mark.slow
def test_the_pre_commit_fix_hook_fixes_and_fails_then_passes(tmp_path: Path) -> None:
    source = (
        "from rewardkit import reward\n\n@reward\ndef qa(final_respone):\n"
        "    score = float(bool(final_respone))\n    return {'score': score}  # kept\n"
    )
    user_repo, command, environment = pre_commit_try_repo(
        tmp_path, "rewardkit-fix", {"my_reward.py": source}
    )
    fixed = subprocess.run(
        command, cwd=user_repo, env=environment, capture_output=True, text=True, check=False
    )
    assert fixed.returncode == 1, fixed.stdout + fixed.stderr  # files were modified by this hook
    assert "Fixed 2 problems in 1 file." in fixed.stdout
    assert (user_repo / "my_reward.py").read_text(encoding="utf-8") == (
        "from rewardkit import reward\n\n@reward\ndef qa(final_response):\n"
        "    score = float(bool(final_response))\n    return {'score': score, 'reward': score}"
        "  # kept\n"
    )
    _git("add", "-A", cwd=user_repo)
    passed = subprocess.run(
        command, cwd=user_repo, env=environment, capture_output=True, text=True, check=False
    )
    assert passed.returncode == 0, passed.stdout + passed.stderr
