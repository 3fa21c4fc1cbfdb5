"""``rewardkit check`` as users run it: a subprocess, real files, every format and exit code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BAD = (
    "from rewardkit import reward\n"
    "\n"
    "@reward(name='qa')\n"
    "def qa(final_respone, answr):\n"
    "    return {'score': 1.0}\n"
)
GOOD = (
    "from rewardkit import reward\n"
    "\n"
    "@reward(name='qa')\n"
    "def qa(final_response, answer):\n"
    "    return {'reward': float(final_response == answer)}\n"
)
WARN_ONLY = (
    "import time\nfrom rewardkit import reward\n\n@reward(name='slow')\n"
    "async def slow(final_response):\n    time.sleep(1)\n    return 1.0\n"
)


def run_check(
    *args: str, cwd: Path, stdin: str | bytes | None = None
) -> subprocess.CompletedProcess[str]:
    data = stdin.encode() if isinstance(stdin, str) else stdin
    completed = subprocess.run(
        [sys.executable, "-m", "rewardkit", "check", *args],
        cwd=cwd,
        input=data,
        capture_output=True,
        check=False,
    )
    return subprocess.CompletedProcess(
        completed.args, completed.returncode, completed.stdout.decode(), completed.stderr.decode()
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.rewardkit]\ntask_fields = ["answer"]\n', encoding="utf-8"
    )
    (tmp_path / "rewards").mkdir()
    (tmp_path / "rewards" / "bad.py").write_text(BAD, encoding="utf-8")
    (tmp_path / "rewards" / "good.py").write_text(
        GOOD.replace("'qa'", "'qa_good'"), encoding="utf-8"
    )
    return tmp_path


def test_text_output_and_exit_status_one(project: Path) -> None:
    result = run_check(cwd=project)
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == (
        "rewards/bad.py:4:8: RK102 `final_respone` looks like a misspelling of the predefined field "
        "`final_response`; as spelled it receives nothing"
    )
    assert lines[1].startswith("rewards/bad.py:4:23: RK101 `answr` is not a field")
    assert "did you mean `answer`?" in lines[1]
    assert lines[2].startswith("rewards/bad.py:5:5: RK201 ")
    assert lines[3] == "Found 3 problems (3 errors, 0 warnings)."
    assert run_check(cwd=project).stdout == result.stdout  # deterministic


def test_clean_and_warning_only_exit_zero(project: Path) -> None:
    assert run_check("rewards/good.py", cwd=project).returncode == 0
    (project / "slow.py").write_text(WARN_ONLY, encoding="utf-8")
    result = run_check("slow.py", cwd=project)
    assert result.returncode == 0
    assert "RK303" in result.stdout


def test_usage_and_config_errors_exit_two(project: Path) -> None:
    missing = run_check("nope.py", cwd=project)
    assert missing.returncode == 2
    assert "path does not exist: nope.py" in missing.stderr
    assert run_check("--format", "xml", cwd=project).returncode == 2
    (project / "pyproject.toml").write_text(
        '[tool.rewardkit]\ntask_schema = "data.csv"\n', encoding="utf-8"
    )
    broken = run_check(cwd=project)
    assert broken.returncode == 2
    assert "data.csv" in broken.stderr
    assert ".json or .jsonl" in broken.stderr


def test_json_output(project: Path) -> None:
    result = run_check("--format", "json", cwd=project)
    items = json.loads(result.stdout)
    assert [(i["path"], i["code"], i["line"], i["column"]) for i in items] == [
        ("rewards/bad.py", "RK102", 4, 7),
        ("rewards/bad.py", "RK101", 4, 22),
        ("rewards/bad.py", "RK201", 5, 4),
    ]
    rename = items[0]["fixes"][0]
    assert rename["title"] == "Rename `final_respone` to `final_response`"
    assert items[1]["data"] == {"reward": "qa", "parameter": "answr", "suggestion": "answer"}


def test_github_and_sarif_output(project: Path) -> None:
    github = run_check("--format", "github", cwd=project)
    assert github.stdout.splitlines()[0].startswith(
        "::error file=rewards/bad.py,line=4,col=8,endLine=4,endColumn=21,"
    )
    sarif = json.loads(run_check("--format", "sarif", cwd=project).stdout)
    run = sarif["runs"][0]
    assert sarif["version"] == "2.1.0"
    assert {rule["id"] for rule in run["tool"]["driver"]["rules"]} >= {"RK101", "RK201", "RK900"}
    first = run["results"][0]
    assert first["ruleId"] == "RK102"
    assert first["level"] == "error"
    region = first["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (4, 8)


def test_select_ignore_and_config_file(project: Path) -> None:
    selected = run_check("--format", "json", "--select", "RK2", cwd=project)
    assert [i["code"] for i in json.loads(selected.stdout)] == ["RK201"]
    ignored = run_check("--format", "json", "--ignore", "RK1,RK201", cwd=project)
    assert json.loads(ignored.stdout) == []
    assert ignored.returncode == 0
    config = project / "strict.toml"
    config.write_text('task_fields = ["answr"]\nignore = ["RK102"]\n', encoding="utf-8")
    result = run_check("--format", "json", "--config", str(config), cwd=project)
    assert [(i["path"], i["code"]) for i in json.loads(result.stdout)] == [
        ("rewards/bad.py", "RK201"),
        ("rewards/good.py", "RK101"),  # `answer` is not a task field in this config
    ]


def test_stdin_with_filename(project: Path) -> None:
    result = run_check("-", "--stdin-filename", "rewards/typed.py", cwd=project, stdin=BAD)
    assert result.returncode == 1
    assert result.stdout.startswith("rewards/typed.py:4:8: RK102")


def test_non_utf8_file_is_a_diagnostic_not_a_crash(project: Path) -> None:
    (project / "latin.py").write_bytes(b"import rewardkit\nname = '\xe9t\xe9'\n")
    result = run_check("latin.py", cwd=project)
    assert result.returncode == 1
    assert result.stdout.startswith("latin.py:2:9: RK900 cannot decode the file as utf-8")
    declared = project / "declared.py"
    declared.write_bytes(b"# -*- coding: latin-1 -*-\nimport rewardkit\nname = '\xe9t\xe9'\n")
    assert run_check("declared.py", cwd=project).returncode == 0


def test_duplicate_names_across_files(project: Path) -> None:
    (project / "rewards" / "again.py").write_text(GOOD, encoding="utf-8")
    result = run_check("--select", "RK401", cwd=project)
    assert result.returncode == 1
    assert result.stdout.splitlines()[:2] == [
        "rewards/again.py:4:5: RK401 reward name 'qa' is also defined at rewards/bad.py:4",
        "rewards/bad.py:4:5: RK401 reward name 'qa' is also defined at rewards/again.py:4",
    ]


def test_exclude_globs(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.rewardkit]\ntask_fields = ["answer"]\nexclude = ["rewards/bad.py"]\n',
        encoding="utf-8",
    )
    assert run_check(cwd=project).returncode == 0


def test_internal_error_exits_two_and_keeps_other_results(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from rewardkit.checks import cli
    from rewardkit.checks.engine import ModuleAnalyzer

    original = ModuleAnalyzer.analyze

    def explode(self, source, path=None, config=None):
        if path and path.endswith("good.py"):
            raise RuntimeError("boom")
        return original(self, source, path, config)

    monkeypatch.setattr(ModuleAnalyzer, "analyze", explode)
    monkeypatch.chdir(project)
    assert cli.main([]) == 2
    captured = capsys.readouterr()
    assert "rewards/bad.py:4:8: RK102" in captured.out
    assert "internal error while checking rewards/good.py: RuntimeError: boom" in captured.err


def test_unknown_codes_are_usage_errors(project: Path) -> None:
    result = run_check("--select", "RK2,RK99", cwd=project)
    assert result.returncode == 2
    assert "--select: no rule code starts with 'RK99'" in result.stderr
    (project / "pyproject.toml").write_text(
        '[tool.rewardkit]\ntask_fields = ["answer"]\nignore = ["RK2010"]\n', encoding="utf-8"
    )
    result = run_check(cwd=project)
    assert result.returncode == 2
    assert (
        "pyproject.toml: [tool.rewardkit] ignore: no rule code starts with 'RK2010'"
        in result.stderr
    )


def test_dangling_symlinks_are_skipped_when_walking(project: Path) -> None:
    (project / "rewards" / "dangling.py").symlink_to(project / "nowhere.py")
    walked = run_check(cwd=project)  # a directory walk skips what is not a file
    assert walked.returncode == 1
    assert "dangling" not in walked.stdout + walked.stderr
    assert "rewards/bad.py:4:8: RK102" in walked.stdout


def test_a_file_that_cannot_be_read_is_reported_and_the_rest_checked(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from rewardkit.checks import cli

    original = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self.name == "good.py":
            raise PermissionError(13, "Permission denied")
        return original(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    monkeypatch.chdir(project)
    assert cli.main([]) == 2
    captured = capsys.readouterr()
    assert "rewards/bad.py:4:8: RK102" in captured.out
    assert "cannot read rewards/good.py: Permission denied" in captured.err


def test_json_fixes_carry_the_placeholder_selection(project: Path) -> None:
    source = "from rewardkit import reward\n\n@reward\ndef tag(final_response):\n    return {'label': 'x'}\n"
    result = run_check(
        "--format", "json", "-", "--stdin-filename", "tag.py", cwd=project, stdin=source
    )
    [item] = json.loads(result.stdout)
    [fix] = item["fixes"]
    assert fix["edits"] == [
        {"line": 5, "column": 12, "end_line": 5, "end_column": 12, "new_text": "'reward': 0.0, "}
    ]
    assert fix["selection"] == {"line": 5, "column": 22, "end_line": 5, "end_column": 25}


def test_a_file_with_a_syntax_error_takes_no_part_in_cross_file_duplicates(project: Path) -> None:
    broken = GOOD + "\n@reward\ndef half_typed(final_response:\n"
    (project / "rewards" / "broken.py").write_text(broken, encoding="utf-8")
    result = run_check("--format", "json", cwd=project)
    assert [(i["path"], i["code"]) for i in json.loads(result.stdout)] == [
        ("rewards/bad.py", "RK102"),
        ("rewards/bad.py", "RK101"),
        ("rewards/bad.py", "RK201"),
        ("rewards/broken.py", "RK900"),
    ]
