"""The symbolic sandbox: a CPU budget per answer, a wall-clock ceiling for the machine, killable
workers forked by a fork server, a memory cap, no signals in the caller, clean exit."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import math_sandbox_tasks as sandbox_tasks
import pytest

from rewardkit.math import FailureTag, compare_answers, grade, grading
from rewardkit.math.sandbox import SymbolicSandbox, default_sandbox

SLOW_ANSWERS = ["\\prod_{k=1}^{9999} k^{k}", "\\int_0^1 e^{x^{2}} \\sin(x^{3}) dx"]


def _gone(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status")
    try:
        return "zombie" in status.read_text().lower()
    except (FileNotFoundError, ProcessLookupError):
        return True


def _wait_until(condition, seconds: float = 30.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_slow_symbolic_work_is_a_timeout_verdict() -> None:
    for answer in SLOW_ANSWERS:
        verdict = compare_answers(answer, "1", timeout=0.5)
        assert (verdict.correct, verdict.tag, verdict.reason) == (False, FailureTag.WRONG_ANSWER, "timeout")
    # The workers that ran out of budget were replaced: symbolic work still succeeds right after.
    verdict = compare_answers("(x+1)^2", "x^2+2x+1")
    assert (verdict.correct, verdict.reason) == (True, "symbolic")


def test_a_process_holding_over_1024_files_still_gets_symbolic_verdicts() -> None:
    # The fork server's control socket keeps the caller's fd number: past 1023, select() refused it.
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        sandbox = SymbolicSandbox(workers=1)
        try:
            outcome = sandbox.run(sandbox_tasks.spin, (0.05,), cpu_budget=5.0, wall_ceiling=120)
            assert (outcome.correct, outcome.reason) == (True, "exact")
        finally:
            sandbox.close()
    finally:
        for fd in held:
            os.close(fd)


def test_the_budget_is_cpu_time_not_wall_time() -> None:
    sandbox = SymbolicSandbox(workers=1)
    try:
        # 0.3 s of CPU fits a 1 s budget however long the machine takes to give it ...
        assert sandbox.run(sandbox_tasks.spin, (0.3,), cpu_budget=1.0, wall_ceiling=120).reason == "exact"
        # ... and 1.5 s never does, on any machine.
        assert sandbox.run(sandbox_tasks.spin, (1.5,), cpu_budget=0.5, wall_ceiling=120).reason == "timeout"
    finally:
        sandbox.close()


def test_a_task_stuck_in_one_c_call_is_a_timeout_too() -> None:
    # The signal handler cannot run inside pow(); RLIMIT_CPU kills the worker at budget + 1-2 s of CPU.
    sandbox = SymbolicSandbox(workers=1)
    try:
        outcome = sandbox.run(sandbox_tasks.one_long_c_call, (), cpu_budget=0.2, wall_ceiling=300)
        assert (outcome.correct, outcome.reason) == (False, "timeout")
        assert sandbox.run(sandbox_tasks.spin, (0.01,), cpu_budget=1.0, wall_ceiling=120).reason == "exact"
    finally:
        sandbox.close()


def test_a_starved_or_hung_worker_is_killed_at_the_ceiling_and_reported_as_overloaded() -> None:
    sandbox = SymbolicSandbox(workers=1)
    try:
        first = sandbox.run(sandbox_tasks.worker_pid, (), cpu_budget=1.0, wall_ceiling=120)
        started = time.monotonic()
        outcome = sandbox.run(sandbox_tasks.sleep_forever, (), cpu_budget=1.0, wall_ceiling=0.5)
        assert time.monotonic() - started >= 1.0  # two attempts, each up to the ceiling
        assert (outcome.correct, outcome.reason) == (False, "overloaded")
        assert "0.5 s wall ceiling" in (outcome.error or "")
        second = sandbox.run(sandbox_tasks.worker_pid, (), cpu_budget=1.0, wall_ceiling=120)
        assert isinstance(first, int)
        assert isinstance(second, int)
        assert second != first
        assert _wait_until(lambda: _gone(first), 10)
    finally:
        sandbox.close()


def test_a_worker_that_dies_is_retried_once(tmp_path: Path) -> None:
    sandbox = SymbolicSandbox(workers=1)
    try:
        outcome = sandbox.run(sandbox_tasks.die_once, (str(tmp_path / "flag"),), cpu_budget=1.0, wall_ceiling=120)
        assert (outcome.correct, outcome.reason) == (True, "exact")
        assert (tmp_path / "flag").exists()  # the first attempt did die
    finally:
        sandbox.close()


def test_a_task_that_raises_is_a_crash_and_the_worker_goes_on() -> None:
    sandbox = SymbolicSandbox(workers=1)
    try:
        pid = sandbox.run(sandbox_tasks.worker_pid, (), cpu_budget=1.0, wall_ceiling=120)
        outcome = sandbox.run(sandbox_tasks.raise_value_error, (), cpu_budget=1.0, wall_ceiling=120)
        assert (outcome.reason, outcome.error) == ("crash", "ValueError: a bug in the task")
        assert sandbox.run(sandbox_tasks.worker_pid, (), cpu_budget=1.0, wall_ceiling=120) == pid
    finally:
        sandbox.close()


def test_worker_memory_is_capped() -> None:
    sandbox = SymbolicSandbox(workers=1, memory_headroom=256 * 1024**2)
    try:
        outcome = sandbox.run(sandbox_tasks.allocate, (4,), cpu_budget=20, wall_ceiling=120)
        assert (outcome.correct, outcome.reason) == (False, "guard")
        assert "memory" in (outcome.error or "")
    finally:
        sandbox.close()


def test_budget_works_off_the_main_thread() -> None:
    verdicts = []

    def work() -> None:
        verdicts.append(compare_answers(SLOW_ANSWERS[0], "1", timeout=0.4))
        verdicts.append(compare_answers("2\\sqrt2", "\\sqrt8"))

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(timeout=300)
    assert not thread.is_alive()
    assert [(v.correct, v.reason) for v in verdicts] == [(False, "timeout"), (True, "symbolic")]


async def test_budget_works_inside_asyncio() -> None:
    verdict = grade("\\boxed{" + SLOW_ANSWERS[1] + "}", "2", timeout=0.4)
    assert verdict.reason == "timeout"
    verdicts = await asyncio.gather(
        *(asyncio.to_thread(grade, f"\\boxed{{{n}\\sqrt{{2}}}}", f"\\sqrt{{{2 * n * n}}}") for n in (2, 3, 5))
    )
    assert [(v.correct, v.reason) for v in verdicts] == [(True, "symbolic")] * 3


def test_sandbox_false_runs_symbolic_work_in_process() -> None:
    server_before = default_sandbox()._server
    verdict = compare_answers("\\sin^2 x + \\cos^2 x", "1", sandbox=False)
    assert (verdict.correct, verdict.reason) == (True, "symbolic")
    assert default_sandbox()._server is server_before


def _run_python(code: str, tmp_path: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
        check=False,
        env=env,
    )


def test_the_calling_process_never_imports_sympy(tmp_path: Path) -> None:
    # sympy cannot be imported in the caller: the fast path decides, and symbolic work is done by
    # the workers, fresh interpreters of their own.
    completed = _run_python(
        """
        import sys
        sys.modules["sympy"] = None
        from rewardkit.math import compare_answers, grade
        pairs = [("\\\\boxed{42}", "42"), ("\\\\boxed{\\\\frac{2}{4}}", "0.5"), ("\\\\boxed{12\\\\frac35}", "12.6"),
                 ("\\\\boxed{(1, 2]}", "(1,2]"), ("\\\\boxed{3, 1, 2}", "1,2,3"), ("\\\\boxed{10{,}000}", "10000"),
                 ("\\\\boxed{x = 7}", "7"), ("\\\\boxed{3 \\\\text{ or } 4}", "3"), ("no box", "5")]
        print([grade(r, g).reason for r, g in pairs])
        verdict = compare_answers("(x+1)^2", "x^2+2x+1")
        print(verdict.correct, verdict.reason, [name for name in sys.modules if name.startswith(("sympy.", "latex2sympy"))])
        """,
        tmp_path,
    )
    assert completed.returncode == 0, completed.stderr
    reasons, symbolic = completed.stdout.strip().splitlines()
    assert reasons == str(["exact", "rational", "rational", "exact", "set", "exact", "rational", "hedge", "no_answer"])
    assert symbolic == "True symbolic []"


def test_without_sympy_a_symbolic_comparison_is_a_harness_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    (broken / "sympy").mkdir(parents=True)
    (broken / "sympy" / "__init__.py").write_text("raise ImportError('sympy is not installed here')\n")
    env = {**os.environ, "PYTHONPATH": f"{broken}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    completed = _run_python(
        """
        from rewardkit.math import compare_answers, grade
        assert grade("\\\\boxed{42}", "42").correct
        for _ in range(2):  # reported each time, and the next call tries again
            verdict = compare_answers("(x+1)^2", "x^2+2x+1")
            print(verdict.tag.value, verdict.reason, verdict.detail["error"])
        """,
        tmp_path,
        env,
    )
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.strip().splitlines()
    assert len(lines) == 2
    for line in lines:
        assert line.startswith("HARNESS_ERROR crash sandbox unavailable:"), line
        assert "sympy is not installed here" in line


def _held_sandbox(monkeypatch: pytest.MonkeyPatch, **options: float) -> tuple[SymbolicSandbox, threading.Event]:
    """A fresh sandbox used by ``grade`` whose fork server starts only once the event is set."""
    sandbox = SymbolicSandbox(workers=1, **options)  # type: ignore[arg-type]
    release = threading.Event()
    spawn = sandbox._spawn_server

    def held_spawn() -> object:
        release.wait(300)
        return spawn()

    monkeypatch.setattr(sandbox, "_spawn_server", held_spawn)
    monkeypatch.setattr(grading, "default_sandbox", lambda: sandbox)
    return sandbox, release


def test_the_fast_path_never_waits_for_starting_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    sandbox, release = _held_sandbox(monkeypatch)
    try:
        verdicts = [grade("\\boxed{42}", "42"), grade("\\boxed{\\frac{2}{4}}", "0.5"), grade("\\boxed{3, 1}", "1,3")]
        assert [(v.correct, v.reason) for v in verdicts] == [(True, "exact"), (True, "rational"), (True, "set")]
        assert not sandbox.ready  # decided while the workers were (still) starting
    finally:
        release.set()
        sandbox.close()


def test_a_cold_start_is_waited_for_and_not_charged(monkeypatch: pytest.MonkeyPatch) -> None:
    sandbox, release = _held_sandbox(monkeypatch)
    pair = ("(q+13)^2", "q^2+26q+169")  # not used elsewhere: no cached outcome
    try:
        timer = threading.Timer(1.5, release.set)  # the start takes longer than the 0.3 s budget
        timer.start()
        verdict = compare_answers(*pair, timeout=0.3)
        assert (verdict.correct, verdict.reason, verdict.tag) == (True, "symbolic", None)
    finally:
        release.set()
        sandbox.close()
    after_close = sandbox.run(sandbox_tasks.worker_pid, (), cpu_budget=1.0)
    assert (after_close.reason, after_close.error) == ("crash", "sandbox unavailable: it was closed")


def test_workers_that_cannot_start_within_the_ceiling_are_a_harness_error(monkeypatch: pytest.MonkeyPatch) -> None:
    sandbox, release = _held_sandbox(monkeypatch, startup_ceiling=0.5)
    pair = ("(q+14)^2", "q^2+28q+196")
    try:
        started = time.monotonic()
        verdict = compare_answers(*pair, timeout=0.3, wall_ceiling=0.4)
        assert time.monotonic() - started >= 1.0  # waited twice (retried once), 0.5 s each
        assert (verdict.correct, verdict.tag, verdict.reason) == (False, FailureTag.HARNESS_ERROR, "overloaded")
        assert verdict.detail["error"] == "the symbolic workers did not start within 0.5 s (the machine is too busy)"
        release.set()
        # Not cached: once the workers are up, the same pair gets its verdict.
        assert compare_answers(*pair).reason == "symbolic"
    finally:
        release.set()
        sandbox.close()


def test_overloaded_is_a_harness_error_in_the_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    sandbox, release = _held_sandbox(monkeypatch, startup_ceiling=0.1)
    try:
        verdict = grade("\\boxed{(q+15)^2}", "q^2+30q+225", wall_ceiling=0.2)
        assert verdict.tag is FailureTag.HARNESS_ERROR
        assert (verdict.correct, verdict.reason) == (False, "overloaded")
    finally:
        release.set()
        sandbox.close()


def test_workers_are_closed_at_interpreter_exit(tmp_path: Path) -> None:
    completed = _run_python(
        """
        from rewardkit.math import compare_answers
        from rewardkit.math.sandbox import default_sandbox
        assert compare_answers("(x+1)^2", "x^2+2x+1").reason == "symbolic"
        sandbox = default_sandbox()
        print(sandbox._server.process.pid, *[worker.pid for worker in sandbox._idle])
        """,
        tmp_path,
    )
    assert completed.returncode == 0, completed.stderr
    pids = [int(pid) for pid in completed.stdout.split()]
    assert len(pids) == 3  # the fork server and two workers
    assert _wait_until(lambda: all(_gone(pid) for pid in pids), 10), pids


def test_a_forked_child_starts_its_own_workers(tmp_path: Path) -> None:
    completed = _run_python(
        """
        import os
        from rewardkit.math import compare_answers
        from rewardkit.math.sandbox import default_sandbox
        assert compare_answers("(x+1)^2", "x^2+2x+1").reason == "symbolic"
        parent_server = default_sandbox()._server.process.pid
        pid = os.fork()
        if pid == 0:
            verdict = compare_answers("(x+2)^2", "x^2+4x+4")
            ok = verdict.reason == "symbolic" and default_sandbox()._server.process.pid != parent_server
            os._exit(0 if ok else 3)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status), compare_answers("(x+3)^2", "x^2+6x+9").reason)
        """,
        tmp_path,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == ["0", "symbolic"]


def test_bad_gold_is_a_harness_error_naming_the_gold() -> None:
    for _ in range(2):  # the second call is served from the outcome cache
        verdict = compare_answers("5", "\\frac{1}{")
        assert verdict.tag is FailureTag.HARNESS_ERROR
        assert verdict.reason == "bad_gold"
        assert "gold '\\frac{1}{'" in verdict.detail["error"]  # as written (issue 26, item 9)


def test_a_bad_gold_is_known_without_a_worker_for_the_other_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    gold = "4:30p.."  # real data: the symbolic parser refuses it
    assert compare_answers("x+1", gold).reason == "bad_gold"
    sandbox, release = _held_sandbox(monkeypatch, startup_ceiling=0.3)  # no worker can answer from here on
    try:
        verdict = compare_answers("y+2", gold, wall_ceiling=0.3)
        assert (verdict.tag, verdict.reason) == (FailureTag.HARNESS_ERROR, "bad_gold")
    finally:
        release.set()
        sandbox.close()


def test_a_daemonic_pool_worker_can_use_the_sandbox(tmp_path: Path) -> None:
    # multiprocessing forbids daemonic processes children of its own; the fork server is a
    # subprocess, so grade() with sandbox=True works in a multiprocessing.Pool worker.
    (tmp_path / "pool_task.py").write_text(
        textwrap.dedent(
            """
            def work(_):
                from rewardkit.math import compare_answers
                verdict = compare_answers("(x+1)^2", "x^2+2x+1")
                return verdict.correct, verdict.reason
            """
        )
    )
    completed = _run_python(
        """
        import multiprocessing, sys
        sys.path.insert(0, ".")
        from pool_task import work
        with multiprocessing.get_context("fork").Pool(1) as pool:
            print(pool.map(work, [0]))
        """,
        tmp_path,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "[(True, 'symbolic')]"


@pytest.mark.parametrize("victim", ["fork server", "idle worker"])
def test_a_killed_fork_server_or_worker_is_replaced_and_the_verdict_stands(victim: str) -> None:
    sandbox = SymbolicSandbox(workers=1)
    try:
        pid = sandbox.run(sandbox_tasks.worker_pid, (), cpu_budget=1.0)
        server_pid = sandbox._server.process.pid  # type: ignore[union-attr]
        os.kill(server_pid if victim == "fork server" else pid, 9)
        assert _wait_until(lambda: _gone(pid), 10)  # a worker dies with its fork server too
        outcome = sandbox.run(sandbox_tasks.spin, (0.01,), cpu_budget=1.0)
        assert (outcome.correct, outcome.reason) == (True, "exact")
        assert sandbox.run(sandbox_tasks.worker_pid, (), cpu_budget=1.0) != pid
        if victim == "fork server":
            assert sandbox._server.process.pid != server_pid  # type: ignore[union-attr]
    finally:
        sandbox.close()


def test_sandbox_and_its_server_import_one_way() -> None:
    # Issue 26, item 19: sandbox.py imports sandbox_server.py, never the other way round (the fork
    # server imports the tasks from rewardkit.math.tasks); no import of it, at any level.
    import ast
    import importlib.util

    def imported(module: str) -> set[str]:
        spec = importlib.util.find_spec(module)
        assert spec is not None
        assert spec.origin is not None
        tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
        names: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                names |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
        return names

    assert "rewardkit.math.sandbox_server" in imported("rewardkit.math.sandbox")
    server_imports = imported("rewardkit.math.sandbox_server")
    assert not any(name == "rewardkit.math.sandbox" or name.startswith("rewardkit.math.sandbox.") for name in server_imports)
    assert "rewardkit.math.tasks" in server_imports
