"""Files that change under a run (issue 27 items 1-3): a second run on a results file in use
is refused by an OS lock held for the whole run (and never left behind by a killed run); an
input replaced with a real `mv` mid-run is graded whole from the file the run opened; one
rewritten in place or truncated stops the run; `--resume` never counts results for ids the
input does not have. Real processes throughout; runs are held mid-way by a grader that waits
for a file (`WAIT-FOR:`), never by timing."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from eval_helpers import cli_command, cli_env, read_jsonl, read_metadata, write_jsonl
from eval_test_graders import KILL_ONCE, WAIT

from rewardkit.evaluation import run_math_eval
from rewardkit.evaluation.main.results_file import ResultsLock

GRADER = ("--grader", "eval_test_graders:grade_or_crash", "--timeout", "600")
"""The test grader, with a budget no waiting case reaches (the runner kills a worker whose
case overruns it)."""
IN_USE = "is being written by another run"


def gated_rows(prefix: str, count: int, gate: tuple[Path, Path], *, open_first: int = 0) -> list:
    """Cases that wait (in the grader) until `gate[1]` exists, touching `gate[0]` when they
    start; the first `open_first` do not wait, and are padded to fill the first worker task."""
    started, release = gate
    rows = []
    for i in range(count):
        waits = i >= open_first
        response = f"{WAIT}{started}:{release} " if waits else "p" * 6000 + " "
        rows.append(
            {"id": f"{prefix}{i}", "response": response + rf"\boxed{{{i}}}", "gold": str(i)}
        )
    return rows


def start(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        cli_command(*args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=cli_env(),
    )


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli_command(*args), capture_output=True, text=True, timeout=300, cwd=cwd, env=cli_env()
    )


def wait_for(condition, what: str, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def finish(proc: subprocess.Popen[str]) -> tuple[int, str]:
    _out, err = proc.communicate(timeout=300)
    return proc.returncode, err


def result_ids(path: Path) -> list[str]:
    """The ids of a results file; every line must be a whole JSON row."""
    return [row["id"] for row in read_jsonl(path)]


# --- one writer per results file -------------------------------------------------------------


@pytest.mark.parametrize("mode", ["plain", "overwrite", "resume", "other-input"])
def test_a_second_run_on_a_results_file_in_use_is_refused(tmp_path: Path, mode: str) -> None:
    """Two runs on one `-o` once interleaved their lines (4 of 5 tries lost 118-923 of 4,000
    ids, tore lines and duplicated others), with exit 0 for both."""
    gate = (tmp_path / "started", tmp_path / "release")
    data = write_jsonl(tmp_path / "in.jsonl", gated_rows("a", 30, gate))
    out = tmp_path / "out.jsonl"
    first_args = [str(data), "--workers", "1", "-o", str(out), *GRADER]
    if mode == "resume":  # a partial results file to continue, graded with the gate open
        gate[1].touch()
        assert run(*first_args, "--limit", "10", cwd=tmp_path).returncode == 0
        gate[0].unlink()
        gate[1].unlink()
        first_args.append("--resume")
    first = start(*first_args, cwd=tmp_path)
    wait_for(gate[0].exists, "the first run to be grading")
    before = out.read_bytes()
    second_input = data
    if mode == "other-input":
        second_input = write_jsonl(tmp_path / "other.jsonl", gated_rows("b", 30, gate))
    extra = {"plain": [], "overwrite": ["--overwrite"], "resume": ["--resume"]}.get(mode, [])
    second = run(str(second_input), "--workers", "0", "-o", str(out), *GRADER, *extra, cwd=tmp_path)
    assert second.returncode == 2, second.stderr
    assert IN_USE in second.stderr
    assert "--output" in second.stderr
    assert len(second.stderr.strip().splitlines()) == 1
    assert out.read_bytes() == before  # the refused run wrote nothing
    gate[1].touch()
    code, err = finish(first)
    assert code == 0, err
    assert sorted(result_ids(out)) == sorted(f"a{i}" for i in range(30))


RACE_MODES = ("plain", "overwrite", "resume", "other-input")

RACER = textwrap.dedent(
    """
    import json, os, sys
    from rewardkit.evaluation.cli import main

    def forked(argv, log, gate, release):
        # A process of its own (imports done once, in the parent), its output in `log`; it
        # starts when the parent closes the gate, so that both runs of a race start together.
        pid = os.fork()
        if pid:
            return pid
        code = 1
        try:
            os.close(release)  # (the gate opens when no process holds its write end)
            descriptor = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(descriptor, 1)
            os.dup2(descriptor, 2)
            os.read(gate, 1)
            code = main(argv)
        except BaseException:
            import traceback
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)

    def race(runs, log):
        gate, release = os.pipe()
        pids = [forked(argv, f"{log}.{i}", gate, release) for i, argv in enumerate(runs)]
        os.close(release)
        codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids]
        os.close(gate)
        return codes

    outcomes = []
    for number, attempt in enumerate(json.loads(sys.argv[1])):
        log = os.path.join(sys.argv[2], f"log{number}")
        if attempt["first"]:
            assert race([attempt["first"]], log + ".first") == [0]
        codes = race(attempt["runs"], log)
        texts = [open(f"{log}.{i}", encoding="utf-8").read() for i in range(len(codes))]
        outcomes.append([codes, texts])
    print(json.dumps(outcomes))
    """
)


@pytest.mark.slow
def test_two_runs_started_together_never_corrupt_the_results(tmp_path: Path) -> None:
    """The race itself, 20 times: two processes started at once on one results file (plain
    `-o`, `--overwrite` twice, `--resume` twice, two inputs), each a process of its own forked
    from one that imported rewardkit once. Whatever the timing, the file ends whole (every line
    a row, no id twice, one input's cases exactly), every refusal is a one-line exit 2, and a
    later `--resume` accepts the file."""
    inputs = {
        prefix: write_jsonl(
            tmp_path / f"{prefix}.jsonl",
            [
                {"id": f"{prefix}{i}", "response": rf"\boxed{{{i % 7}}}", "gold": "3"}
                for i in range(80)
            ],
        )
        for prefix in ("a", "b")
    }
    plan = []
    for attempt in range(20):
        mode = RACE_MODES[attempt % len(RACE_MODES)]
        out = str(tmp_path / f"out{attempt}.jsonl")
        extra = {"overwrite": ["--overwrite"], "resume": ["--resume"]}.get(mode, [])
        second = "b" if mode == "other-input" else "a"
        common = ["math", "--workers", "1", "-o", out, *extra]
        plan.append(
            {
                "first": (
                    ["math", str(inputs["a"]), "--workers", "1", "-o", out, "--limit", "30"]
                    if mode == "resume"
                    else None
                ),
                "runs": [[*common, str(inputs[prefix])] for prefix in ("a", second)],
            }
        )
    proc = subprocess.run(
        [sys.executable, "-c", RACER, json.dumps(plan), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=900,
        env=cli_env(),
    )
    assert proc.returncode == 0, proc.stderr
    outcomes = json.loads(proc.stdout.strip().splitlines()[-1])
    for attempt, (codes, texts) in enumerate(outcomes):
        mode = RACE_MODES[attempt % len(RACE_MODES)]
        for code, text in zip(codes, texts):
            assert code in (0, 2), text
            if code == 2:
                assert IN_USE in text or "exists and is not empty" in text, text
                assert len(text.strip().splitlines()) == 1, text
        assert 0 in codes, (mode, texts)
        out = tmp_path / f"out{attempt}.jsonl"
        ids = result_ids(out)
        assert len(ids) == len(set(ids)) == 80, (mode, codes)
        assert {case_id[0] for case_id in ids} in ({"a"}, {"b"}), mode
        # a later resume accepts the file, and finds nothing left
        again = run_math_eval(inputs[ids[0][0]], workers=0, output=out, resume=True)
        assert (again.timings.new_cases, again.timings.resumed_cases) == (0, 80)


def test_a_killed_run_leaves_no_lock_behind(tmp_path: Path) -> None:
    """The lock is the OS's: it goes with the process that held it, however it ends. Worker
    processes do not keep it (they close it when forked)."""
    gate = (tmp_path / "started", tmp_path / "release")
    data = write_jsonl(tmp_path / "in.jsonl", gated_rows("a", 40, gate, open_first=4))
    out = tmp_path / "out.jsonl"
    first = start(str(data), "--workers", "2", "-o", str(out), *GRADER, cwd=tmp_path)
    wait_for(lambda: gate[0].exists() and out.exists() and out.stat().st_size > 0, "results")
    first.send_signal(signal.SIGKILL)
    finish(first)
    gate[1].touch()
    resumed = run(str(data), "--workers", "2", "-o", str(out), "--resume", *GRADER, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert sorted(result_ids(out)) == sorted(f"a{i}" for i in range(40))


def test_a_forked_child_does_not_hold_the_runs_lock(tmp_path: Path) -> None:
    """A grader's pool forked during a run (and outliving it in a training loop) must not keep
    the results file locked after the run released it."""
    path = tmp_path / "out.jsonl"
    lock = ResultsLock(path).acquire()
    ready_read, ready_write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child says it runs, then waits to be killed
        os.write(ready_write, b"x")
        time.sleep(60)
        os._exit(0)
    try:
        assert os.read(ready_read, 1) == b"x"  # the child runs (its fork handlers ran)
        lock.release()
        descriptor = os.open(path, os.O_RDWR)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free while the child lives
        finally:
            os.close(descriptor)
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        os.close(ready_read)
        os.close(ready_write)


# --- an input that changes under the run -----------------------------------------------------


@pytest.mark.parametrize("workers", ["0", "2"])
def test_an_input_replaced_with_mv_is_graded_from_the_file_the_run_opened(
    tmp_path: Path, workers: str
) -> None:
    """Workers opened the input by path on their first task: a temp file `mv`ed over it
    0.2-0.5 s into a run gave exit 0 with thousands of verdicts from the new file. Here a
    worker dies once after the `mv`, so its replacement starts reading after it."""
    gate = (tmp_path / "started", tmp_path / "release")
    rows = gated_rows("a", 60, gate)
    if workers == "2":
        rows[0]["response"] += f" {KILL_ONCE}{tmp_path / 'killed'}"
    data = write_jsonl(tmp_path / "in.jsonl", rows)
    original = data.read_bytes()
    out = tmp_path / "out.jsonl"
    proc = start(str(data), "--workers", workers, "-o", str(out), *GRADER, cwd=tmp_path)
    wait_for(gate[0].exists, "the run to be grading")
    replacement = write_jsonl(
        tmp_path / "new.jsonl",
        [{"id": f"b{i}", "response": rf"\boxed{{{i}}}", "gold": str(i)} for i in range(60)],
    )
    subprocess.run(["mv", str(replacement), str(data)], check=True)
    gate[1].touch()
    code, err = finish(proc)
    assert code == 0, err
    assert sorted(result_ids(out)) == sorted(f"a{i}" for i in range(60))
    assert "names another file now" in err
    assert read_metadata(out)["input"]["sha256"] == hashlib.sha256(original).hexdigest()
    resumed = run(str(data), "--workers", "0", "-o", str(out), "--resume", cwd=tmp_path)
    assert resumed.returncode == 2
    assert "another input" in resumed.stderr


@pytest.mark.parametrize("change", ["rewritten", "truncated", "appended"])
def test_an_input_changed_in_place_mid_run_stops_it(tmp_path: Path, change: str) -> None:
    """A file rewritten in place or truncated mid-run once ended in exit 0 with fewer cases."""
    gate = (tmp_path / "started", tmp_path / "release")
    data = write_jsonl(tmp_path / "in.jsonl", gated_rows("a", 60, gate, open_first=4))
    out = tmp_path / "out.jsonl"
    proc = start(str(data), "--workers", "1", "-o", str(out), *GRADER, cwd=tmp_path)
    wait_for(lambda: gate[0].exists() and out.exists() and out.stat().st_size > 0, "results")
    if change == "rewritten":
        data.write_bytes(data.read_bytes().replace(b'"a', b'"z'))  # same file, same size
    elif change == "truncated":
        os.truncate(data, data.stat().st_size // 2)
    else:
        with open(data, "ab") as handle:
            handle.write(b'{"id": "late", "response": "x", "gold": "1"}\n')
    gate[1].touch()
    code, err = finish(proc)
    assert code == 2, err
    assert "Traceback" not in err
    assert f"{data}: the input file changed while the run read it" in err
    assert read_metadata(out)["input"]["changed_during_run"] is True
    resumed = run(str(data), "--workers", "0", "-o", str(out), "--resume", cwd=tmp_path)
    assert resumed.returncode == 2
    assert "changed while they were graded" in resumed.stderr


# --- results for ids the input does not have --------------------------------------------------


def test_resume_refuses_results_for_ids_the_input_does_not_have(tmp_path: Path) -> None:
    """A results file of 2,000 real and 2,000 foreign rows resumed in 0.17 s with exit 0 and
    a report of n = 4,000 for a 4,000-case input: 2,000 cases were never graded."""
    rows = [{"id": f"c{i}", "response": rf"\boxed{{{i % 5}}}", "gold": "2"} for i in range(400)]
    data = write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out.jsonl"
    assert (
        run(str(data), "--workers", "0", "-o", str(out), "--limit", "200", cwd=tmp_path).returncode
        == 0
    )
    real = out.read_text(encoding="utf-8").splitlines()
    foreign = [json.dumps({**json.loads(line), "id": f"x{i}"}) for i, line in enumerate(real)]
    out.write_text("\n".join(real + foreign) + "\n", encoding="utf-8")
    before = out.read_bytes()
    refused = run(str(data), "--workers", "2", "-o", str(out), "--resume", cwd=tmp_path)
    assert refused.returncode == 2, refused.stderr
    assert (
        "200 results are for ids the input does not have (line 201 'x0', line 202 'x1'"
        in refused.stderr
    )
    assert "and 195 more" in refused.stderr
    assert out.read_bytes() == before
    forced = run(
        str(data),
        "--workers",
        "2",
        "-o",
        str(out),
        "--resume",
        "--force-resume",
        "--report",
        "r.json",
        cwd=tmp_path,
    )
    assert forced.returncode == 0, forced.stderr
    assert "warning: " in forced.stderr
    assert "left out of the report" in forced.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert (report["n"], report["timings"]["new_cases"]) == (400, 200)


def test_responses_read_back_after_the_run_come_from_the_file_it_graded(tmp_path: Path) -> None:
    """`run.results` is built when first asked for, after the run: responses are read back
    from the input only if its path still names the file the run graded, unchanged."""
    rows = [{"id": f"c{i}", "response": rf"so \boxed{{{i}}}", "gold": str(i)} for i in range(5)]
    data = write_jsonl(tmp_path / "in.jsonl", rows)
    kept = run_math_eval(data, workers=2)
    replaced = run_math_eval(data, workers=2)
    assert [r.response for r in kept.results] == [row["response"] for row in rows]
    write_jsonl(tmp_path / "new.jsonl", [{**row, "response": "other"} for row in rows])
    os.replace(tmp_path / "new.jsonl", data)
    assert [r.response for r in replaced.results] == [None] * 5


def test_a_failed_run_leaves_no_empty_results_file_behind(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "in.jsonl", ["{not json"])
    out = tmp_path / "out.jsonl"
    assert run(str(data), "--workers", "0", "-o", str(out), cwd=tmp_path).returncode == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]
