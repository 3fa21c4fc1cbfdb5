"""The Sandbox API on both backends (and "none"): runs, sessions, limits, selection and refusals."""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sandbox_fixtures as fixtures
from grader_backends import require_backend

from rewardkit.code.sandbox import (
    Job,
    Limits,
    SandboxUnavailableError,
    get_sandbox,
    selection,
    wasm,
)
from rewardkit.code.sandbox.uids import FIRST_UID, UID_COUNT
from rewardkit.code.sandbox.workers import PooledSandbox, Worker
from rewardkit.install import install_command

BACKENDS = ("bwrap", "wasm")
ROOMY = Limits(timeout=60)


@pytest.fixture(scope="module", params=BACKENDS)
def sandbox(request: pytest.FixtureRequest):
    require_backend(request.param)
    box = get_sandbox(request.param, workers=2)
    yield box
    box.close()


def job(
    source: str,
    *,
    stdin: bytes = b"",
    files: dict[str, bytes] | None = None,
    limits: Limits = ROOMY,
) -> Job:
    return Job({"main.py": source.encode(), **(files or {})}, "main.py", stdin=stdin, limits=limits)


def test_a_program_reads_stdin_and_its_files_and_imports_its_modules(sandbox) -> None:
    files = {"helper.py": b"VALUE = 41\n", "data/input.txt": b"from a file\n"}
    source = (
        "import sys, helper\nprint(helper.VALUE + 1)\nprint(open('data/input.txt').read().strip())\n"
        "print(sys.stdin.read().upper().strip())\nprint(sys.argv)\n"
    )
    outcome = sandbox.run(job(source, stdin=b"hello\n", files=files))
    assert outcome.stdout.decode().splitlines() == ["42", "from a file", "HELLO", "['main.py']"]
    assert outcome.exit_code == 0
    assert outcome.signal is None
    assert outcome.sandbox_error is None
    assert not outcome.timed_out
    assert not outcome.memory_exceeded
    assert not outcome.output_exceeded


@pytest.mark.parametrize(
    ("source", "exit_code", "stderr"),
    [
        ("import sys\nsys.exit(3)\n", 3, b""),
        ("import sys\nsys.exit('bad input')\n", 1, b"bad input"),
        ("raise ValueError('boom')\n", 1, b"ValueError: boom"),
        ("def f(:\n", 1, b"SyntaxError"),
        ("exit(4)\n", 4, b""),
    ],
)
def test_exit_statuses_and_errors_are_the_programs(
    sandbox, source: str, exit_code: int, stderr: bytes
) -> None:
    outcome = sandbox.run(job(source))
    assert outcome.exit_code == exit_code
    assert stderr in outcome.stderr
    assert outcome.sandbox_error is None


def test_a_session_answers_call_by_call(sandbox) -> None:
    runner = (
        "import json, sys\nfor line in sys.stdin:\n    request = json.loads(line)\n"
        "    print(json.dumps({'result': sum(request['args'])}), flush=True)\n"
    )
    with sandbox.open(job(runner)) as session:
        for args in ([1, 2], [3, 4, 5], []):
            session.send(json.dumps({"args": args}).encode())
            assert json.loads(session.receive(60)) == {"result": sum(args)}
        outcome = session.finish()
    assert outcome.exit_code == 0
    assert outcome.sandbox_error is None


def test_a_session_receive_times_out_without_ending_the_program(sandbox) -> None:
    with sandbox.open(
        job("import sys\nline = sys.stdin.readline()\nprint('got', line.strip())\n")
    ) as session:
        assert session.receive(0.2) is None
        session.send(b"late")
        assert session.receive(60) == b"got late"
        assert session.receive(60) is None  # EOF: the program ended
        assert session.finish().exit_code == 0


def test_a_session_past_its_wall_limit_is_timed_out(sandbox) -> None:
    session = sandbox.open(job("import sys\nsys.stdin.readline()\n", limits=Limits(timeout=1)))
    assert session.receive(30) is None
    outcome = session.finish()
    assert outcome.timed_out is True
    assert outcome.exit_code is None


def test_a_session_left_without_calls_is_still_stopped_at_its_wall_limit() -> None:
    require_backend("bwrap")  # (processes to watch)
    box = get_sandbox("bwrap", workers=1)
    try:
        session = box.open(
            Job({"main.py": fixtures.DAEMON.encode()}, "main.py", limits=Limits(timeout=1))
        )
        assert session.receive(30) == b"started"
        assert fixtures.wait_for_no_leftovers(60) == []  # no call on the session meanwhile
        outcome = session.finish()
    finally:
        box.close()
    assert outcome.timed_out is True
    assert outcome.exit_code is None


def test_kill_stops_a_session_now(sandbox) -> None:
    session = sandbox.open(job("while True:\n    pass\n"))
    assert session.receive(0.2) is None
    outcome = session.kill()
    assert outcome.exit_code is None
    assert outcome.signal == 9
    assert outcome.timed_out is False
    assert session.finish() is outcome


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_sessions_leave_no_file_descriptors_open(sandbox) -> None:
    # A trainer grades for days: every session, killed or finished, gives back its pipes.
    for _ in range(2):  # warm: the pool's workers exist before counting
        sandbox.open(job("print(input())")).kill()
    before = _open_fds()
    for _ in range(15):
        sandbox.open(job("print(input())")).kill()
        with sandbox.open(job("print(input())")) as session:
            session.send(b"x")
            assert session.receive(30) == b"x"
        assert sandbox.run(job("print(1)")).stdout == b"1\n"
    assert _open_fds() - before <= 4  # (a replaced worker's socket and pipe at most; a leak is 15+)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_process_holding_over_1024_files_still_runs_programs(backend: str) -> None:
    # select() refuses fds past 1023; a worker's control socket keeps the caller's fd number.
    require_backend(backend)
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        box = get_sandbox(backend, workers=1)
        try:
            outcome = box.run(job("print(6 * 7)"))
            assert (outcome.stdout, outcome.exit_code, outcome.sandbox_error) == (b"42\n", 0, None)
            with box.open(job("print(input())")) as session:
                session.send(b"y")
                assert session.receive(30) == b"y"
                outcome = session.finish()
            assert (outcome.exit_code, outcome.sandbox_error) == (0, None)
        finally:
            box.close()
    finally:
        for fd in held:
            os.close(fd)


def test_a_caller_holding_every_worker_can_still_open_another() -> None:
    box = get_sandbox(
        "bwrap" if selection.available_backends()["bwrap"] is None else "wasm", workers=1
    )
    try:
        with box.open(
            job("import sys\nprint(sys.stdin.readline().strip() * 2, flush=True)\n")
        ) as held:
            assert box.run(job("print('meanwhile')")).stdout == b"meanwhile\n"
            held.send(b"ab")
            assert held.receive(60) == b"abab"
    finally:
        box.close()


def test_concurrent_callers_share_the_pool(sandbox) -> None:
    results: dict[int, bytes] = {}

    def call(n: int) -> None:
        results[n] = sandbox.run(job(f"print({n} * {n})")).stdout

    threads = [threading.Thread(target=call, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {n: f"{n * n}\n".encode() for n in range(6)}


@pytest.mark.skipif(os.geteuid() != 0, reason="as a normal user the program keeps the user's uid")
def test_as_root_the_program_runs_as_an_unprivileged_uid_with_no_capabilities() -> None:
    box = get_sandbox("bwrap", workers=1)
    try:
        source = "import os\nprint(os.getuid(), os.getgid(), os.getgroups())\nprint(open('/proc/self/status').read())"
        outcome = box.run(job(source))
    finally:
        box.close()
    first, status = outcome.stdout.decode().split("\n", 1)
    uid, gid, groups = first.split(" ", 2)
    assert FIRST_UID <= int(uid) < FIRST_UID + UID_COUNT
    assert gid == uid
    assert groups == "[]"
    for field in ("CapEff", "CapPrm", "CapInh", "CapAmb"):
        assert f"{field}:\t0000000000000000" in status
    assert "NoNewPrivs:\t1" in status


def test_limits_and_jobs_refuse_bad_values() -> None:
    with pytest.raises(ValueError, match="timeout"):
        Limits(timeout=0)
    with pytest.raises(ValueError, match="memory"):
        Limits(memory=-1)
    with pytest.raises(ValueError, match=r"not one of Job\.files"):
        Job({"a.py": b""}, "b.py")
    with pytest.raises(ValueError, match="relative path"):
        Job({"../a.py": b""}, "../a.py")
    with pytest.raises(TypeError, match="bytes"):
        Job({"a.py": "text"}, "a.py")  # type: ignore[dict-item]


def test_unknown_sandbox_names_are_refused() -> None:
    with pytest.raises(ValueError, match=r"unknown sandbox 'docker'"):
        get_sandbox("docker")


def test_none_runs_unsandboxed_only_by_name_with_a_warning() -> None:
    with pytest.warns(RuntimeWarning, match="unsandboxed"):
        box = get_sandbox("none", workers=1)
    try:
        outcome = box.run(job("import os\nprint(os.getuid())"))
    finally:
        box.close()
    assert outcome.stdout == f"{os.getuid()}\n".encode()


def test_auto_picks_a_sandboxed_backend() -> None:
    if all(selection.available_backends().values()):
        pytest.skip("no sandbox usable here")
    box = get_sandbox("auto", workers=1)
    try:
        assert box.name in BACKENDS
        assert box.run(job("print('ok')")).stdout == b"ok\n"
    finally:
        box.close()


def test_auto_falls_back_to_wasm_when_bwrap_cannot_run(monkeypatch) -> None:
    require_backend("wasm")
    monkeypatch.setattr(
        selection, "available_backends", lambda: {"bwrap": "no user namespaces", "wasm": None}
    )
    box = get_sandbox("auto", workers=1)
    try:
        assert box.name == "wasm"
        assert box.run(job("print('in wasm')")).stdout == b"in wasm\n"
    finally:
        box.close()


def test_auto_with_nothing_usable_says_what_to_install_and_never_runs_unsandboxed(
    monkeypatch,
) -> None:
    reasons = {"bwrap": "bwrap is not installed", "wasm": "wasmtime is not installed"}
    monkeypatch.setattr(selection, "available_backends", lambda: reasons)
    with pytest.raises(SandboxUnavailableError) as raised:
        get_sandbox("auto")
    message = str(raised.value)
    assert install_command("code") in message
    assert "bubblewrap" in message
    assert "bwrap is not installed" in message


def test_a_wasm_runtime_with_another_digest_is_refused(monkeypatch) -> None:
    monkeypatch.setattr(wasm, "_checked", {})
    monkeypatch.setattr(wasm, "PYTHON_WASM_SHA256", "0" * 64)
    with pytest.raises(SandboxUnavailableError, match="sha256"):
        wasm.WasmSandbox(1)
    assert "sha256" in (wasm.probe_wasm() or "")


def test_a_sandbox_that_cannot_start_is_a_sandbox_error_not_the_programs() -> None:
    box = PooledSandbox("broken", lambda _slot: Worker(lambda fd: ["/bin/false"], {}), 1)
    outcome = box.run(job("print(1)"))
    assert outcome.sandbox_error is not None
    assert "did not start" in outcome.sandbox_error
    with box.open(job("print(1)")) as session:
        assert session.receive(1) is None
        assert session.finish().sandbox_error is not None


def test_a_worker_that_died_while_idle_is_replaced_not_blamed_on_the_next_program(sandbox) -> None:
    first = sandbox.run(job("print(1)"))
    assert first.stdout == b"1\n", first
    for worker in list(sandbox._idle):
        worker.process.kill()
        worker.process.wait()
    outcome = sandbox.run(job("print(2)"))
    assert outcome.stdout == b"2\n"
    assert outcome.sandbox_error is None


def _zygote_of(bwrap_pid: int) -> int:
    """The root zygote under `bwrap_pid` (its jobs are forks of it, running as a leased uid)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = dict(
                line.split(":\t", 1) for line in (entry / "status").read_text().splitlines()
            )
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        pid, uid = int(entry.name), status["Uid"].split()[0]
        program = cmdline.split(b"\0")[0]
        if b"zygote.py" in cmdline and uid == "0" and not program.endswith(b"bwrap"):
            ancestor = int(status["PPid"])
            while ancestor > 1 and ancestor != bwrap_pid:
                parent = Path(f"/proc/{ancestor}/status").read_text().split("PPid:\t")[1]
                ancestor = int(parent.split()[0])
            if ancestor == bwrap_pid:
                return pid
    raise AssertionError(f"no zygote under bwrap {bwrap_pid}")


@pytest.mark.skipif(os.geteuid() != 0, reason="only as root does the program run apart from its zygote")
def test_a_zygote_that_dies_under_a_job_it_could_not_have_killed_is_a_sandbox_error() -> None:
    # As root the job runs as a leased uid, which cannot signal its zygote: the zygote's death
    # is ours (a sandbox error, excluded from scores), never a wrong program.
    require_backend("bwrap")
    box = get_sandbox("bwrap", workers=1)
    try:
        session = box.open(job("while True:\n    pass\n"))
        assert session.receive(0.2) is None
        os.kill(_zygote_of(session.worker.process.pid), 9)  # as a bug of ours would end it
        outcome = session.finish()
        assert "not the program" in (outcome.sandbox_error or "")
        killer = box.run(job("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"))
        assert (killer.sandbox_error, killer.exit_code) == (None, 1)  # EPERM: it cannot
        assert b"PermissionError" in killer.stderr
    finally:
        box.close()


def test_a_worker_started_from_a_thread_outlives_that_thread(sandbox) -> None:
    """bwrap's --die-with-parent fires when the forking *thread* ends: workers start elsewhere."""
    box = get_sandbox(sandbox.name, workers=1)
    try:
        started = threading.Thread(target=lambda: box.run(job("print('from a thread')")))
        started.start()
        started.join()
        outcome = box.run(job("print('after it ended')"))
    finally:
        box.close()
    assert outcome.stdout == b"after it ended\n"
    assert outcome.signal is None


@pytest.mark.skipif(os.geteuid() != 0, reason="only root drops to a leased uid")
def test_as_root_the_wasm_worker_itself_runs_as_an_unprivileged_uid() -> None:
    require_backend("wasm")
    box = get_sandbox("wasm", workers=1)
    try:
        assert box.run(job("print('ok')")).stdout == b"ok\n"
        (worker,) = box._idle
        status = Path(f"/proc/{worker.process.pid}/status").read_text()
    finally:
        box.close()
    uids = next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1:]
    assert len(set(uids)) == 1
    assert FIRST_UID <= int(uids[0]) < FIRST_UID + UID_COUNT
    assert "NoNewPrivs:\t1" in status


def test_a_forked_child_runs_its_own_workers_and_leaves_the_parents_alone(sandbox) -> None:
    assert sandbox.run(job("print('parent')")).stdout == b"parent\n"
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its own workers, then exit without running the parent's cleanup
        try:
            os.write(write, sandbox.run(job("print('child')")).stdout)
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as stream:
        from_child = stream.read()
    os.waitpid(pid, 0)
    assert from_child == b"child\n"
    assert sandbox.run(job("print('parent again')")).stdout == b"parent again\n"
