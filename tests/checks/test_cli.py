"""``rewardkit check`` as users run it: a subprocess, real files, every format and exit code."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from .cli_helpers import BAD, GOOD, run_check

WARN_ONLY = (
    "import time\nfrom rewardkit import reward\n\n@reward(name='slow')\n"
    "async def slow(final_response):\n    time.sleep(1)\n    return 1.0\n"
)


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
    # one convention (issue 37.10): `column` is the engine's 0-based one, as the fixes' edits;
    # the text output shows `column + 1` (`rewards/bad.py:4:8:`)
    text_columns = [line.split(":")[2] for line in run_check(cwd=project).stdout.splitlines()[:3]]
    assert [str(i["column"] + 1) for i in items] == text_columns == ["8", "23", "5"]
    assert all("col" not in i and "end_col" not in i for i in items)
    assert items[0]["fixes"][0]["edits"][0]["column"] == items[0]["column"]
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
    from rewardkit.checks import cli, command

    original = command.analyze_module

    def explode(source, path=None, config=None):
        if path and path.endswith("good.py"):
            raise RuntimeError("boom")
        return original(source, path, config)

    monkeypatch.setattr(command, "analyze_module", explode)
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
    from rewardkit.checks import cli, command

    original = command.read_bytes

    def read_bytes(path: str) -> bytes:
        if path.endswith("good.py"):
            raise PermissionError(13, "Permission denied")
        return original(path)

    monkeypatch.setattr(command, "read_bytes", read_bytes)
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


def test_success_prints_a_summary_line_and_quiet_suppresses_it(project: Path) -> None:
    (project / "rewards" / "bad.py").unlink()
    (project / "rewards" / "more.py").write_text(
        GOOD.replace("'qa'", "'more'")
        + "\n\n@reward\ndef other(final_response):\n    return 0.5\n",
        encoding="utf-8",
    )
    (project / "rewards" / "helpers.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    result = run_check(cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Checked 3 files, 3 rewards: no problems\n"
    single = run_check("rewards/helpers.py", cwd=project)
    assert single.stdout == "Checked 1 file, 0 rewards: no problems\n"
    quiet = run_check("--quiet", cwd=project)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")
    # --quiet keeps the diagnostics, without the "Found ..." line.
    (project / "rewards" / "bad.py").write_text(BAD, encoding="utf-8")
    quiet_bad = run_check("--quiet", cwd=project)
    assert quiet_bad.returncode == 1
    assert [line.split(": ")[1].split()[0] for line in quiet_bad.stdout.splitlines()] == [
        "RK102",
        "RK101",
        "RK201",
    ]
    assert run_check("--format", "json", "--quiet", cwd=project).stdout.startswith("[")


def test_pipes_sockets_and_devices_are_reported_never_read(project: Path) -> None:
    fifo = project / "fifo.py"
    os.mkfifo(fifo)  # reading it would block forever
    (project / "device.py").symlink_to("/dev/zero")  # reading it would never end
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(project / "sock.py"))
    try:
        explicit = run_check("fifo.py", "device.py", "sock.py", "rewards/bad.py", cwd=project)
        assert explicit.returncode == 2
        assert explicit.stderr.splitlines() == [  # in the order given
            "rewardkit check: cannot check fifo.py: not a regular file (a named pipe)",
            "rewardkit check: cannot check device.py: not a regular file (a character device)",
            "rewardkit check: cannot check sock.py: not a regular file (a socket)",
        ]
        assert "rewards/bad.py:4:8: RK102" in explicit.stdout  # the other files are checked
        walked = run_check(cwd=project)  # a directory walk skips them silently
        assert walked.returncode == 1, walked.stderr
        assert walked.stderr == ""
    finally:
        server.close()


def test_files_over_max_file_size_get_a_note_not_a_parse(project: Path) -> None:
    big = project / "rewards" / "big.py"
    big.write_text(GOOD.replace("'qa'", "'big'") + "# padding\n" * 200, encoding="utf-8")
    result = run_check("--max-file-size", "1000", "rewards/big.py", cwd=project)
    assert result.returncode == 0
    assert result.stdout.splitlines()[0] == (
        "rewards/big.py:1:1: RK902 not checked: 2,137 characters exceed max_file_size = 1,000 "
        "characters (raise it with max_file_size in [tool.rewardkit] or --max-file-size)"
    )
    (project / "pyproject.toml").write_text(
        '[tool.rewardkit]\ntask_fields = ["answer"]\nmax_file_size = 500\n', encoding="utf-8"
    )
    configured = run_check("--format", "json", cwd=project)
    assert [(i["path"], i["code"]) for i in json.loads(configured.stdout)] == [
        ("rewards/bad.py", "RK102"),
        ("rewards/bad.py", "RK101"),
        ("rewards/bad.py", "RK201"),
        ("rewards/big.py", "RK902"),
    ]
    assert run_check("--max-file-size", "0", cwd=project).returncode == 2


def test_stdin_is_read_only_up_to_the_size_limit(project: Path) -> None:
    flood = "x = 1\n" * 2_000_000  # 12 MB: read up to 4 bytes per allowed character, then stop
    result = run_check("-", "--max-file-size", "1000", cwd=project, stdin=flood)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(
        "-:1:1: RK902 not checked: more than 4,000 bytes exceed max_file_size = 1,000 characters"
    )


def test_a_task_schema_nested_too_deeply_is_a_configuration_error(project: Path) -> None:
    rows = '{"answer": "4"}\n{"answer": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
    (project / "train.jsonl").write_text(rows, encoding="utf-8")
    (project / "pyproject.toml").write_text(
        '[tool.rewardkit]\ntask_schema = "train.jsonl"\n', encoding="utf-8"
    )
    result = run_check(cwd=project)
    assert result.returncode == 2
    assert result.stderr == (
        f"rewardkit check: error: {project / 'train.jsonl'}:2: JSON nested too deeply to read\n"
    )
    assert "Traceback" not in result.stderr


def test_valid_python_that_once_read_as_syntax_errors(project: Path) -> None:
    form_feed = GOOD.replace("\n@reward", "\n\x0c@reward")
    strings = "from rewardkit import reward\n\nTEXT = (" + " ".join(["'a'"] * 5000) + ")\n"
    (project / "rewards" / "bad.py").unlink()
    (project / "rewards" / "form_feed.py").write_text(form_feed, encoding="utf-8")
    (project / "rewards" / "strings.py").write_text(strings, encoding="utf-8")
    result = run_check(cwd=project)
    assert (result.returncode, result.stdout) == (0, "Checked 3 files, 2 rewards: no problems\n")


def test_many_files_are_checked_in_parallel_with_the_same_findings(tmp_path: Path) -> None:
    from rewardkit.checks import check_source
    from rewardkit.checks.command import PARALLEL_MIN_CHARACTERS

    helpers = "".join(
        f"\n\ndef helper_{i}(text):\n    return text.strip()[:{i}]\n" for i in range(200)
    )
    sources = {}
    for index in range(50):
        reward = BAD if index % 7 == 0 else GOOD
        sources[f"m{index:02d}.py"] = reward.replace("'qa'", f"'qa{index}'") + helpers
    assert sum(map(len, sources.values())) > PARALLEL_MIN_CHARACTERS
    for name, text in sources.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    result = run_check("--format", "json", "--no-cache", cwd=tmp_path)
    expected = [
        (name, d.code, d.line, d.column)
        for name, text in sorted(sources.items())
        for d in check_source(text, name)
    ]
    assert [(i["path"], i["code"], i["line"], i["column"]) for i in json.loads(result.stdout)] == (
        expected
    )
    assert len(expected) == 24


def test_help_points_at_explain_which_describes_a_rule(tmp_path: Path) -> None:
    """A pip-installed user has no docs/checks.md: --help points at --explain, which prints a
    rule's reference (its examples included) from the installed package."""
    help_text = run_check("--help", cwd=tmp_path)
    assert help_text.returncode == 0
    assert "docs/checks.md" not in help_text.stdout
    assert "--explain RK101" in help_text.stdout
    assert "1-based" in help_text.stdout  # which columns each format uses
    explained = run_check("--explain", "rk101", cwd=tmp_path)
    assert explained.returncode == 0, explained.stderr
    assert explained.stdout.startswith("RK101: unknown field")
    assert "    def qa(final_response: str, answr: str):" in explained.stdout
    unknown = run_check("--explain", "RK999", cwd=tmp_path)
    assert unknown.returncode == 2
    assert "unknown code 'RK999'" in unknown.stderr
    assert "RK101" in unknown.stderr


def _unprivileged() -> list[str]:
    """A command prefix under which permissions hold: as root, drop the capabilities that
    override them (the process stays root, the owner of the test's files)."""
    if os.geteuid() != 0:
        return []
    import shutil

    setpriv = shutil.which("setpriv")
    assert setpriv, "root without setpriv (util-linux): permissions cannot be tested"
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-all", "--"]


def test_an_unreadable_directory_is_reported_and_the_rest_checked(project: Path) -> None:
    locked = project / "rewards" / "private"
    locked.mkdir()
    (locked / "hidden.py").write_text(BAD, encoding="utf-8")
    locked.chmod(0)
    try:
        result = run_check(cwd=project, prefix=_unprivileged())
    finally:
        locked.chmod(0o755)
    assert result.returncode == 2
    assert "rewards/bad.py:4:8: RK102" in result.stdout
    assert result.stderr == (
        "rewardkit check: cannot check rewards/private: cannot read the directory "
        "(Permission denied)\n"
    )


def test_a_tree_1100_directories_deep_is_walked(tmp_path: Path) -> None:
    levels = [str(tmp_path.joinpath(*["d"] * depth)) for depth in range(1, 1101)]
    for level in levels:  # os.makedirs and shutil.rmtree recurse once per level
        os.mkdir(level)
    bad = os.path.join(levels[-1], "bad.py")
    Path(bad).write_text(BAD, encoding="utf-8")
    try:
        result = run_check("--no-cache", cwd=tmp_path)
    finally:
        os.unlink(bad)
        for level in reversed(levels):
            os.rmdir(level)
    assert (result.returncode, result.stderr) == (1, "")
    shown = "d/" * 1100 + "bad.py"
    assert result.stdout.startswith(f"{shown}:4:8: RK102 ")


def test_deeply_nested_pyproject_arrays_are_a_configuration_error(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        "[tool.rewardkit]\nselect = " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8"
    )
    result = run_check(cwd=project)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        f"rewardkit check: error: {project / 'pyproject.toml'}: TOML nested too deeply to read\n"
    )


def test_many_modules_sharing_a_name_give_linear_output(tmp_path: Path) -> None:
    """RK401 names three other definitions and counts the rest: 400 modules defining `qa` give
    400 short findings (the quadratic listing printed 400 x 399 places)."""
    count = 400
    for index in range(count):
        (tmp_path / f"m{index:03d}.py").write_text(GOOD, encoding="utf-8")
    result = run_check("--no-cache", "--select", "RK401", cwd=tmp_path)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert len(lines) == count + 1
    assert lines[0] == (
        "m000.py:4:5: RK401 reward name 'qa' is also defined at m001.py:4, m002.py:4, m003.py:4 "
        "and 396 other definitions"
    )
    assert lines[5].startswith("m005.py:4:5: RK401 reward name 'qa' is also defined at m000.py:4, ")
    assert max(map(len, lines)) < 160
