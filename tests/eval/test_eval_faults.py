"""Faults by real signals and real processes (issue 18 items 2, 20; issue 17 item 7):
killing the runner leaves no worker behind, workers are memory-capped, a stopped run keeps what
its running tasks graded, and a worker death strikes only the case it was grading."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from eval_helpers import cli_command, cli_env, read_jsonl, write_jsonl
from eval_test_graders import EAT, HANG_MARKED, KILL_ONCE, WAIT, grade_or_crash

from rewardkit.evaluation import run_math_eval
from rewardkit.evaluation.inputs.blocks import TaskSizer

GRADER = "eval_test_graders:grade_or_crash"


def ok_rows(count: int, prefix: str = "ok") -> list[dict]:
    return [
        {"id": f"{prefix}{i}", "response": rf"so \boxed{{{i}}}", "gold": str(i)}
        for i in range(count)
    ]


def children_of(pid: int) -> set[int]:
    """The direct child processes of `pid` (every thread's children, from /proc)."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        with open(task / "children", encoding="ascii") as handle:
            found.update(int(child) for child in handle.read().split())
    return found


def alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie."""
    try:
        status = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    except OSError:
        return False
    return status.rsplit(")", 1)[1].split()[0] != "Z"


def wait_for(predicate, seconds: float, what: str) -> None:
    """Poll `predicate` until it holds; fail naming `what` after `seconds` (a generous bound on
    something that happens within milliseconds on an idle machine, not a timing assertion)."""
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"still waiting after {seconds:g} s: {what}")
        time.sleep(0.02)


@contextlib.contextmanager
def cli_running(*args: str) -> Iterator[subprocess.Popen[str]]:
    """`rewardkit eval math ARGS` started in the background (killed if the test fails)."""
    runner = subprocess.Popen(
        cli_command(*args),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=cli_env(),
        text=True,
    )
    try:
        yield runner
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()


def held_case(tmp_path: Path) -> tuple[dict, Path, Path]:
    """A case its worker holds (after creating `started`) until `release` exists."""
    started, release = tmp_path / "started", tmp_path / "release"
    case = {"id": "held", "response": rf"{WAIT}{started}:{release} \boxed{{7}}", "gold": "7"}
    return case, started, release


@pytest.mark.parametrize(
    ("signum", "status"),
    [(signal.SIGTERM, 128 + 15), (signal.SIGHUP, 128 + 1), (signal.SIGKILL, -9)],
    ids=["TERM", "HUP", "KILL"],
)
def test_killing_the_runner_leaves_no_worker_behind(
    tmp_path: Path, signum: int, status: int
) -> None:
    """`kill -TERM/-KILL/-HUP` of `rewardkit eval` once left its workers at 100% CPU,
    re-parented to init (one grew to 18 GB). Both workers are stuck in a case here (a budget
    of 10 minutes: the runner will not kill them itself), and only the runner is signalled."""
    marks = [tmp_path / "stuck-0", tmp_path / "stuck-1"]
    filler = "reasoning " * 2000  # 20 KB: more than a first task, so each line is a task
    rows = [
        {"id": f"stuck{i}", "response": f"{filler}{HANG_MARKED}{mark} \\boxed{{1}}", "gold": "1"}
        for i, mark in enumerate(marks)
    ]
    data = write_jsonl(tmp_path / "in.jsonl", rows + ok_rows(4))
    args = ["--workers", "2", "--timeout", "600", "--grader", GRADER]
    with cli_running(str(data), *args, "--output", str(tmp_path / "out.jsonl")) as runner:
        wait_for(lambda: all(mark.exists() for mark in marks), 120, "both workers stuck")
        workers = children_of(runner.pid)
        assert len(workers) >= 2
        runner.send_signal(signum)
        _, stderr = runner.communicate(timeout=60)
    assert runner.returncode == status, stderr
    wait_for(lambda: not any(alive(pid) for pid in workers), 30, f"workers {workers} to die")


def test_a_worker_over_its_memory_cap_is_a_harness_error(tmp_path: Path, run_cli) -> None:
    rows = [{"id": "hog", "response": f"{EAT}512 \\boxed{{1}}", "gold": "1"}, *ok_rows(3)]
    data = write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out.jsonl"
    proc = run_cli(
        str(data),
        "--workers",
        "1",
        "--worker-memory",
        "256M",
        "--grader",
        GRADER,
        "--output",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr
    records = {record["id"]: record for record in read_jsonl(out)}
    assert records["hog"]["tag"] == "HARNESS_ERROR"
    assert "MemoryError" in records["hog"]["detail"]["error"]
    assert all(records[f"ok{i}"]["passed"] for i in range(3))


@pytest.mark.parametrize(
    ("signum", "status"),
    [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)],
    ids=["INT", "TERM", "HUP"],
)
def test_a_stopped_run_keeps_what_its_running_tasks_graded(
    tmp_path: Path, signum: int, status: int
) -> None:
    """A SIGINT once dropped the work in flight (0 lines after a Ctrl-C at 2.7 s). A case is
    held in a worker until the signal has been sent: its task then finishes, and its results
    are written before the run exits with 128 + the signal's number."""
    held, started, release = held_case(tmp_path)
    data = write_jsonl(tmp_path / "in.jsonl", [*ok_rows(3, "before"), held, *ok_rows(3, "after")])
    out = tmp_path / "out.jsonl"
    with cli_running(
        str(data), "--workers", "1", "--grader", GRADER, "--output", str(out)
    ) as runner:
        wait_for(started.exists, 120, "the held case to start")
        runner.send_signal(signum)
        time.sleep(0.2)  # the signal is handled: the run is stopping, the task still running
        release.touch()
        _, stderr = runner.communicate(timeout=60)
    assert runner.returncode == status, stderr
    assert "continue with --resume --output" in stderr
    ids = {record["id"] for record in read_jsonl(out)}
    assert {"held", "before0", "after2"} <= ids  # the whole task that was running


def test_a_stopped_in_process_run_keeps_the_cases_graded_before_the_signal(
    tmp_path: Path,
) -> None:
    """Grading in the CLI's own process (`--workers 0`), the case being graded when Ctrl-C
    arrives is dropped (graded again on resume), the ones before it in its task are written."""
    held, started, _release = held_case(tmp_path)
    data = write_jsonl(tmp_path / "in.jsonl", [*ok_rows(3, "before"), held, *ok_rows(3)])
    out = tmp_path / "out.jsonl"
    with cli_running(
        str(data), "--workers", "0", "--grader", GRADER, "--output", str(out)
    ) as runner:
        wait_for(started.exists, 120, "the held case to start")
        runner.send_signal(signal.SIGINT)
        _, stderr = runner.communicate(timeout=60)
    assert runner.returncode == 130, stderr
    assert [record["id"] for record in read_jsonl(out)] == ["before0", "before1", "before2"]


def test_a_worker_death_strikes_only_the_case_it_was_grading(tmp_path: Path) -> None:
    """Two cases of one task each kill their worker once: both pass when graded again. A death
    once struck every case of its task, so the second death made an innocent case a
    HARNESS_ERROR ("died twice")."""
    for source in ("records", "file"):
        first, second = tmp_path / f"{source}-1", tmp_path / f"{source}-2"
        rows = ok_rows(6)
        rows.insert(
            1, {"id": "dies-once-a", "response": f"{KILL_ONCE}{first} \\boxed{{5}}", "gold": "5"}
        )
        rows.insert(
            4, {"id": "dies-once-b", "response": f"{KILL_ONCE}{second} \\boxed{{6}}", "gold": "6"}
        )
        data = rows if source == "records" else write_jsonl(tmp_path / "in.jsonl", rows)
        run = run_math_eval(
            data,
            grader=grade_or_crash,
            workers=1,
            chunk_size=len(rows) if source == "records" else None,
        )
        assert first.exists()
        assert second.exists()  # both workers really died
        outcomes = {result.id: result.outcome for result in run.results}
        assert outcomes == {row["id"]: "PASS" for row in rows}, source


def test_every_exit_status_is_documented() -> None:
    """docs/eval.md and the README's eval section list every exit status of `rewardkit eval`."""
    from rewardkit.evaluation import errors

    root = Path(__file__).resolve().parents[2]
    docs = (root / "docs" / "eval.md").read_text(encoding="utf-8")
    readme = (root / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Evaluating a model on MATH", 1)[1].split("\n## ", 1)[0]
    statuses = [
        getattr(errors, name)
        for name in dir(errors)
        if name.startswith("EXIT_") and name != "EXIT_SIGNAL_BASE"
    ]
    for text in (docs, section):
        for status in [*statuses, 130, 143, 129]:
            assert f"`{status}`" in text, status


def test_task_sizes_start_small_then_follow_the_measured_speed() -> None:
    sizer = TaskSizer(1 << 20)
    assert sizer.size() == TaskSizer.FIRST  # the first results come after a dozen cases
    sizer.record(1 << 20, 0.01)  # fast, cached grading: 100 MB/s
    assert sizer.size() == 1 << 20  # capped: big tasks cost the main process less
    for _ in range(8):
        sizer.record(64 << 10, 1.0)  # slow grading: 64 KiB took a second
    assert TaskSizer.MINIMUM <= sizer.size() <= 16 << 10  # ~0.1 s of work


def test_results_stream_to_the_file_while_the_run_goes_on(tmp_path: Path) -> None:
    """Results once arrived in 1 MiB blocks: on 16,000 cases nothing was written for the first
    ~2.7 s of a ~4.5 s run. Here the last case is held in its worker: the cases before it must
    be in the results file, flushed, while it waits."""
    held, started, release = held_case(tmp_path)
    data = write_jsonl(tmp_path / "in.jsonl", [*ok_rows(600), held])  # ~45 KB: several tasks
    out = tmp_path / "out.jsonl"
    with cli_running(
        str(data), "--workers", "1", "--grader", GRADER, "--output", str(out)
    ) as runner:
        wait_for(started.exists, 120, "the held case to start")
        written_meanwhile = len(read_jsonl(out))
        release.touch()
        _, stderr = runner.communicate(timeout=120)
    assert runner.returncode == 0, stderr
    assert written_meanwhile >= 100
    assert len(read_jsonl(out)) == 601
