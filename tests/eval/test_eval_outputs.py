"""Outputs under faults and resumes that would mix runs (issue 18 items 6, 7; issue 17 item 11).

Disk full is real here: `/dev/full` answers every write with ENOSPC, and a file-size limit
(RLIMIT_FSIZE, with SIGXFSZ ignored) makes the kernel refuse a report's bytes with EFBIG."""

from __future__ import annotations

import hashlib
import json
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from eval_helpers import cli_command, read_jsonl, read_metadata
from hostile_inputs import ordinary_line

from rewardkit.evaluation import EvalConfigError, run_math_eval

DEV_FULL = Path("/dev/full")


def write_cases(path: Path, count: int, *, start: int = 0) -> Path:
    path.write_bytes(
        b"".join(ordinary_line(f"c{i}", i) + b"\n" for i in range(start, start + count))
    )
    return path


def assert_one_line_error(proc: subprocess.CompletedProcess[str], status: int, *parts: str) -> None:
    assert proc.returncode == status, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    for part in parts:
        assert part in lines[0]


@pytest.mark.skipif(not DEV_FULL.exists(), reason="needs /dev/full (Linux)")
def test_a_full_disk_under_the_results_stream_is_exit_4(tmp_path: Path, run_cli) -> None:
    data = write_cases(tmp_path / "in.jsonl", 3)
    proc = run_cli(str(data), "--workers", "1", "--output", str(DEV_FULL))
    assert_one_line_error(proc, 4, "cannot write the results file /dev/full", "No space left")


@pytest.mark.skipif(not DEV_FULL.exists(), reason="needs /dev/full (Linux)")
def test_a_full_disk_under_a_report_is_exit_4_and_keeps_the_results(
    tmp_path: Path, run_cli
) -> None:
    data = write_cases(tmp_path / "in.jsonl", 3)
    out = tmp_path / "out.jsonl"
    proc = run_cli(str(data), "--workers", "0", "--output", str(out), "--report", str(DEV_FULL))
    assert_one_line_error(proc, 4, "cannot write the JSON report /dev/full", "No space left")
    assert len(read_jsonl(out)) == 3


def test_output_paths_that_cannot_be_written_are_exit_4_before_grading(
    tmp_path: Path, run_cli
) -> None:
    data = write_cases(tmp_path / "in.jsonl", 2)
    directory = run_cli(str(data), "--workers", "0", "--output", str(tmp_path))
    assert_one_line_error(directory, 4, f"results file {tmp_path}", "it is a directory")
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    under_a_file = run_cli(str(data), "--workers", "0", "--html", str(blocker / "r.html"))
    assert_one_line_error(under_a_file, 4, "HTML report", "a file is in the way")


def _limit_file_size(limit: int):
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a kill
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


@pytest.mark.parametrize("flag", ["--report", "--html"])
def test_a_report_that_cannot_be_written_whole_leaves_the_old_one(
    tmp_path: Path, flag: str
) -> None:
    """A report written to a full disk once left a 0-byte file: now it goes to a temporary file
    first, so the previous report stays whole and nothing half-written is left behind."""
    data = write_cases(tmp_path / "in.jsonl", 1)
    target = tmp_path / ("report.json" if flag == "--report" else "report.html")
    args = cli_command(str(data), "--workers", "0", "--output", "out.jsonl", flag, str(target))
    run = {"capture_output": True, "text": True, "timeout": 120, "cwd": tmp_path}
    assert subprocess.run(args, **run).returncode == 0  # measure the sizes of both outputs
    results_size = (tmp_path / "out.jsonl").stat().st_size
    report_size = target.stat().st_size
    assert results_size + 100 < report_size
    target.write_text("the previous report\n", encoding="utf-8")
    # The kernel refuses writes past this size: the results file fits, the report does not.
    limit = (results_size + report_size) // 2
    proc = subprocess.run([*args, "--overwrite"], **run, preexec_fn=_limit_file_size(limit))
    assert_one_line_error(proc, 4, "cannot write the", str(target), "File too large")
    assert target.read_text(encoding="utf-8") == "the previous report\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["in.jsonl", "out.jsonl", ".out.jsonl.rewardkit.json", target.name]
    )
    assert len(read_jsonl(tmp_path / "out.jsonl")) == 1


# --- resume: the results file says which input and which options ----------------------------


def test_the_results_metadata_names_the_input_by_content_and_the_options(tmp_path: Path) -> None:
    data = write_cases(tmp_path / "in.jsonl", 3)
    out = tmp_path / "out.jsonl"
    run = run_math_eval(data, workers=0, output=out, policy="strict", timeout=2.0)
    header = read_metadata(out)
    assert header["rewardkit_results"] == 2
    assert header["input"] == {
        "name": str(data),
        "bytes": data.stat().st_size,
        "sha256": hashlib.sha256(data.read_bytes()).hexdigest(),
    }
    assert header["grading"]["policy"] == "strict"
    assert header["grading"]["timeout"] == 2.0
    assert header["grading"]["grader"] == "rewardkit.math.grade"
    assert run.report["config"]["input_sha256"] == header["input"]["sha256"]


def test_resume_refuses_another_input_or_other_options_unless_forced(
    tmp_path: Path, run_cli
) -> None:
    """Resuming once merged another input's results (a 50-case input reported n=2050) and
    kept results graded with other options under the new options' report."""
    first = write_cases(tmp_path / "first.jsonl", 4)
    out = tmp_path / "out.jsonl"
    assert (
        run_cli(str(first), "--workers", "0", "--output", str(out), "--limit", "2").returncode == 0
    )
    before = out.read_bytes()

    other = write_cases(tmp_path / "other.jsonl", 6, start=10)
    proc = run_cli(str(other), "--workers", "0", "--output", str(out), "--resume")
    assert_one_line_error(proc, 2, "--resume would mix two runs", "another input", "--force-resume")
    stricter = run_cli(
        str(first), "--workers", "0", "--output", str(out), "--resume", "--policy", "strict"
    )
    assert_one_line_error(stricter, 2, "other options", "policy 'lenient' there, 'strict' here")
    assert out.read_bytes() == before

    moved = tmp_path / "moved.jsonl"  # the same content under another name is the same input
    shutil.copy(first, moved)
    proc = run_cli(
        str(moved), "--workers", "0", "--output", str(out), "--resume", "--report", "r.json"
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "r.json").read_text())["n"] == 4

    forced = run_cli(
        str(other),
        "--workers",
        "0",
        "--output",
        str(out),
        "--resume",
        "--force-resume",
        "--report",
        "forced.json",
    )
    assert forced.returncode == 0, forced.stderr
    # the other input's results are not done cases of this one: left out, and said so
    assert json.loads((tmp_path / "forced.json").read_text())["n"] == 6
    assert "4 results are for ids the input does not have" in forced.stderr
    assert "left out of the report" in forced.stderr


def test_resume_refuses_a_results_file_without_its_metadata(tmp_path: Path) -> None:
    data = write_cases(tmp_path / "in.jsonl", 2)
    out = tmp_path / "out.jsonl"
    run_math_eval(data, workers=0, output=out, limit=1)
    (tmp_path / ".out.jsonl.rewardkit.json").unlink()  # copied without it
    with pytest.raises(EvalConfigError, match="no rewardkit metadata"):
        run_math_eval(data, workers=0, output=out, resume=True)
    run = run_math_eval(data, workers=0, output=out, resume=True, force_resume=True)
    assert run.summary.n == 2


NOTHING_LEFT = """
import json, os, sys
forks = []
os.register_at_fork(before=lambda: forks.append(os.getpid()))
from rewardkit.evaluation.cli import main
code = main(sys.argv[1:])
print(json.dumps({
    "code": code,
    "forks": len(forks),
    "grader_loaded": "rewardkit.math.symbolic" in sys.modules or "latex2sympy2_extended" in sys.modules,
}))
"""


@pytest.mark.parametrize("workers", ["0", "2"])
def test_resume_with_nothing_left_starts_nothing(tmp_path: Path, workers: str) -> None:
    """A resume of a finished run once took 1.8 s starting the grader's workers for no case."""
    data = tmp_path / "in.jsonl"
    data.write_text(
        "\n".join(
            json.dumps({"id": f"c{i}", "response": rf"\boxed{{(x+{i})^2}}", "gold": f"(x+{i})^2"})
            for i in range(5)
        )
        + "\n",
        encoding="utf-8",
    )
    out = tmp_path / "out.jsonl"
    run_math_eval(data, workers=int(workers), output=out)
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            NOTHING_LEFT,
            "math",
            str(data),
            "--workers",
            workers,
            "--output",
            str(out),
            "--resume",
            "--html",
            str(tmp_path / "r.html"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    outcome = json.loads(proc.stdout.strip().splitlines()[-1])
    assert outcome == {"code": 0, "forks": 0, "grader_loaded": False}
    assert "0 cases graded" in proc.stdout
    assert "5 cases resumed" in proc.stdout


def test_a_report_to_dev_stdout_into_a_pipe_is_written_there(tmp_path: Path, run_cli) -> None:
    """`--report /dev/stdout`, which the docs use, failed with exit 4 after the whole run when
    stdout was a pipe (issue 27 item 13)."""
    data = write_cases(tmp_path / "in.jsonl", 3)
    proc = run_cli(str(data), "--workers", "0", "--report", "/dev/stdout")
    assert proc.returncode == 0, proc.stderr
    report, _end = json.JSONDecoder().raw_decode(proc.stdout)
    assert (report["n"], report["passed"]) == (3, 3)


@pytest.mark.parametrize("flag", ["--output", "--report", "--html"])
def test_an_output_through_a_symlink_loop_is_refused_before_grading(
    tmp_path: Path, run_cli, flag: str
) -> None:
    """A `--report` through a symlink loop was found only after grading (issue 27 item 13)."""
    loop = tmp_path / "loop-a"
    loop.symlink_to(tmp_path / "loop-b")
    (tmp_path / "loop-b").symlink_to(loop)
    data = write_cases(tmp_path / "in.jsonl", 3)
    results = tmp_path / "out.jsonl"
    extra = [] if flag == "--output" else ["--output", str(results)]
    proc = run_cli(str(data), "--workers", "0", flag, str(loop), *extra)
    assert_one_line_error(proc, 4, f"{loop}: Too many levels of symbolic links")
    assert not results.exists()  # refused before a case was graded


@pytest.mark.slow
@pytest.mark.skipif(not DEV_FULL.exists(), reason="needs /dev/full (Linux)")
def test_a_full_disk_says_one_line_every_time(tmp_path: Path) -> None:
    """2 runs in 13 on a full disk printed an `Exception ignored in: <generator ...>`
    fragment beside the right message (issue 27 item 18): the run's generators are closed, and
    its feeder thread joined, before it ends. Twelve runs, three at a time, from a file and
    from a pipe, in this process and in workers."""
    data = write_cases(tmp_path / "in.jsonl", 2000)
    shapes = [(workers, piped) for workers in ("0", "1", "2") for piped in (False, True)]
    for round_ in range(4):
        procs = []
        half = 3 * (round_ % 2)
        for workers, piped in shapes[half : half + 3]:
            source = "/dev/stdin" if piped else str(data)
            args = cli_command(source, "--workers", workers, "--output", str(DEV_FULL))
            stdin = open(data, "rb") if piped else subprocess.DEVNULL  # noqa: SIM115
            procs.append(
                subprocess.Popen(args, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            )
            if piped:
                stdin.close()
        for proc in procs:
            _out, err = proc.communicate(timeout=300)
            text = err.decode()
            assert proc.returncode == 4, text
            assert text.strip().splitlines() == [
                f"rewardkit eval math: error: cannot write the results file {DEV_FULL}: "
                "No space left on device"
            ], text
