"""``rewardkit check``'s cache: unchanged files are answered without parsing, anything that
could change the report is noticed, and the cache is safe to damage or delete."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .cli_helpers import BAD, GOOD, run_check

PROBE = """
import sys
from rewardkit.cli import main
status = main(sys.argv[1:])
heavy = ["rewardkit.checks.engine", "rewardkit.checks.command", "rewardkit.checks.config",
         "rewardkit.runtime.define.rewards", "libcst", "ast", "argparse", "tomllib", "dataclasses", "json",
         "asyncio", "hashlib", "typing"]
loaded = [name for name in heavy if name in sys.modules]
import json
print(json.dumps({"status": status, "loaded": loaded}), file=sys.stderr)
"""


def probe(*args: str, cwd: Path) -> tuple[str, int, list[str]]:
    """Run ``rewardkit check ARGS`` in a fresh process; (stdout, status, heavy modules loaded)."""
    completed = subprocess.run(
        [sys.executable, "-c", PROBE, "check", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    report = json.loads(completed.stderr.strip().splitlines()[-1])
    return completed.stdout, report["status"], report["loaded"]


@pytest.mark.parametrize("output_format", ["text", "json", "github", "sarif"])
def test_an_unchanged_run_is_answered_from_the_cache_without_the_parser(
    project: Path, output_format: str
) -> None:
    first, status, loaded = probe("--format", output_format, cwd=project)
    assert status == 1
    assert "rewardkit.checks.engine" in loaded
    again, cached_status, cached_loaded = probe("--format", output_format, cwd=project)
    assert (again, cached_status) == (first, status)  # byte for byte
    assert cached_loaded == []  # no parser, rules, TOML, argparse, dataclasses, runtime, OpenSSL


def test_the_cache_directory_ignores_itself_and_sits_at_the_project_root(project: Path) -> None:
    assert run_check(".", cwd=project / "rewards").returncode == 1  # from a subdirectory
    cache = project / ".rewardkit_cache"
    assert (cache / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"
    assert (
        (cache / "CACHEDIR.TAG")
        .read_text(encoding="utf-8")
        .startswith("Signature: 8a477f597d28d172789f06886806bc55")
    )
    assert not (project / "rewards" / ".rewardkit_cache").exists()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "rewards/bad.py" in status.stdout
    assert ".rewardkit_cache" not in status.stdout


def test_changed_bytes_configuration_files_and_options_are_noticed(project: Path) -> None:
    assert run_check(cwd=project).returncode == 1
    bad = project / "rewards" / "bad.py"
    info = bad.stat()
    fixed = BAD.replace("final_respone, answr", "final_response, answer").replace(
        "{'score': 1.0}", "{'reward': 1.0}"
    )
    bad.write_text(fixed.ljust(len(BAD)), encoding="utf-8")  # same size, same mtime
    os.utime(bad, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert run_check(cwd=project).stdout == "Checked 2 files, 2 rewards: no problems\n"
    # The configuration: no task fields any more, so `answr` is only a likely typo.
    bad.write_text(BAD, encoding="utf-8")
    assert "RK101 `answr` is not a field" in run_check(cwd=project).stdout
    (project / "pyproject.toml").write_text("[tool.rewardkit]\n", encoding="utf-8")
    assert "RK101 `answr` looks like a misspelling" in run_check(cwd=project).stdout
    # Options, and a new file.
    assert "RK201" not in run_check("--ignore", "RK2", cwd=project).stdout
    (project / "rewards" / "new.py").write_text(BAD.replace("'qa'", "'new'"), encoding="utf-8")
    assert "rewards/new.py" in run_check(cwd=project).stdout


def test_a_changed_task_schema_is_noticed(project: Path) -> None:
    data = project / "train.jsonl"
    data.write_text('{"answer": "4"}\n', encoding="utf-8")
    (project / "pyproject.toml").write_text(
        '[tool.rewardkit]\ntask_schema = "train.jsonl"\n', encoding="utf-8"
    )
    assert "`answr` is not a field" in run_check(cwd=project).stdout
    data.write_text('{"answer": "4", "answr": "typo in the data"}\n', encoding="utf-8")
    assert "`answr` is not a field" not in run_check(cwd=project).stdout


def test_a_damaged_or_deleted_cache_is_only_slower(project: Path) -> None:
    expected = run_check(cwd=project)
    cache = project / ".rewardkit_cache"
    entries = [
        path
        for path in cache.rglob("*")
        if path.is_file() and path.parent.name in ("runs", "files")
    ]
    assert len(entries) >= 3  # one run, two files
    for entry in entries:
        entry.write_bytes(b"\x00garbage\n" * 3)
    assert run_check(cwd=project).stdout == expected.stdout
    for entry in entries:
        entry.write_bytes(b"")
    assert run_check(cwd=project).stdout == expected.stdout
    subprocess.run(["rm", "-rf", str(cache)], check=True)
    assert run_check(cwd=project).stdout == expected.stdout
    assert (cache / ".gitignore").is_file()


def _entries(project: Path, kind: str) -> list[Path]:
    return sorted((project / ".rewardkit_cache").glob(f"*/{kind}/*"))


HANG_GUARD = 300
"""Seconds after which a run that should take one is a hang (the machine may be very busy)."""


def test_a_named_pipe_in_the_cache_is_a_miss_not_a_hang(project: Path) -> None:
    """A FIFO planted where an entry goes is opened without blocking, seen not to be a regular
    file and treated as a miss; the run writes a real entry in its place."""
    expected = run_check(cwd=project)
    entries = _entries(project, "runs") + _entries(project, "files")
    assert len(entries) >= 3
    for entry in entries:
        entry.unlink()
        os.mkfifo(entry)
    again = run_check(cwd=project, timeout=HANG_GUARD)
    assert (again.returncode, again.stdout, again.stderr) == (1, expected.stdout, "")
    assert all(entry.is_file() for entry in _entries(project, "runs"))


def test_damaged_entries_are_validated_and_rebuilt(project: Path) -> None:
    """A truncated entry fails its checksum, a stored status no run stores is refused, and an
    entry whose JSON is nested too deeply to decode is a miss: each run reports what a fresh
    run does and rewrites the entry."""
    from rewardkit.checks.run_cache import seal

    expected = run_check(cwd=project)
    [run_entry] = _entries(project, "runs")
    original = run_entry.read_bytes()
    run_entry.write_bytes(original[:-20])  # a truncated report
    again = run_check(cwd=project)
    assert (again.returncode, again.stdout, again.stderr) == (1, expected.stdout, "")
    assert run_entry.read_bytes() == original  # rebuilt
    header, body = original.split(b"\n", 1)[0], original.split(b"\n", 2)[2]
    assert body.startswith(b"1\n")
    run_entry.write_bytes(header + b"\n" + seal(b"7" + body[1:]))  # a valid checksum, status 7
    again = run_check(cwd=project)
    assert (again.returncode, again.stdout) == (1, expected.stdout)
    for kind in ("runs", "files"):  # the file entries alone now: no run to answer from
        for entry in _entries(project, kind):
            if kind == "runs":
                entry.unlink()
            else:
                entry.write_bytes(seal(b"[" * 100_000 + b"]" * 100_000))
    again = run_check(cwd=project)
    assert (again.returncode, again.stdout, again.stderr) == (1, expected.stdout, "")
    for entry in _entries(project, "files"):
        assert json.loads(entry.read_bytes().split(b"\n", 1)[1])["diagnostics"] is not None


def test_no_cache_reads_and_writes_nothing(project: Path) -> None:
    result = run_check("--no-cache", cwd=project)
    assert result.returncode == 1
    assert not (project / ".rewardkit_cache").exists()


def test_an_unwritable_cache_location_is_not_an_error(project: Path) -> None:
    (project / ".rewardkit_cache").write_text("a file where the directory would go\n")
    first = run_check(cwd=project)
    assert (first.returncode, first.stderr) == (1, "")
    assert run_check(cwd=project).stdout == first.stdout


def test_only_changed_files_are_analysed_again(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from rewardkit.checks import cli, command

    analysed: list[str] = []
    original = command.analyze_module

    def counting(source, path=None, config=None):
        analysed.append(path)
        return original(source, path, config)

    monkeypatch.setattr(command, "analyze_module", counting)
    monkeypatch.chdir(project)
    for index in range(5):
        (project / "rewards" / f"extra_{index}.py").write_text(
            GOOD.replace("'qa'", f"'extra_{index}'"), encoding="utf-8"
        )
    assert cli.main([]) == 1
    assert len(analysed) == 7
    first = capsys.readouterr().out
    analysed.clear()
    (project / "rewards" / "extra_3.py").write_text(
        GOOD.replace("'qa'", "'extra_3'") + "# edited\n", encoding="utf-8"
    )
    assert cli.main([]) == 1
    assert analysed == ["rewards/extra_3.py"]
    assert capsys.readouterr().out == first
    # The cross-file duplicate check still sees every file, cached or not.
    (project / "rewards" / "extra_4.py").write_text(GOOD, encoding="utf-8")  # name 'qa' again
    assert cli.main(["--select", "RK401"]) == 1
    assert capsys.readouterr().out.splitlines()[:2] == [
        "rewards/bad.py:4:5: RK401 reward name 'qa' is also defined at rewards/extra_4.py:4",
        "rewards/extra_4.py:4:5: RK401 reward name 'qa' is also defined at rewards/bad.py:4",
    ]


def test_the_cache_stays_inside_the_git_checkout(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'outer'\n", encoding="utf-8")
    checkout = tmp_path / "repo"
    (checkout / "pkg").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=checkout, check=True)
    (checkout / "pkg" / "r.py").write_text(GOOD, encoding="utf-8")
    assert run_check(".", cwd=checkout / "pkg").returncode == 0
    assert (checkout / ".rewardkit_cache").is_dir()
    assert not (tmp_path / ".rewardkit_cache").exists()
    assert not (checkout / "pkg" / ".rewardkit_cache").exists()
