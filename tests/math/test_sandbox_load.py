"""The same verdicts on a busy machine and from the first call of a fresh process; the workers die
with the process that started them, however it dies. Real processes, real signals, real load."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from busy_machine import busy_loop_count, busy_loops

PAIRS_DIR = Path(__file__).parent / "pairs"

# The symbolic pairs of issue 13 (23 of 56 of these were `timeout` verdicts as first calls).
FIRST_CALL_PAIRS = [
    ("\\sqrt{8}", "2\\sqrt{2}", True),
    ("\\sin^2 x+\\cos^2 x", "1", True),
    ("\\frac{x^2-1}{x-1}", "x+1", True),
    ("(a-b)(a+b)", "a^2-b^2", True),
    ("(x+1)^2", "x^2+2x+1", True),
    ("2\\cos^2 x-1", "\\cos 2x", True),
    ("\\frac{\\sqrt{3}}{2}", "\\sin\\frac{\\pi}{3}", True),
    ("\\sqrt{12}", "3\\sqrt{3}", False),
    ("(x+1)^2", "x^2+x+1", False),
]

FIRST_CALLS = """
import json, sys
from rewardkit.adapters import to_verl
from rewardkit.math import compare_answers, grade
pairs = json.loads(sys.argv[1])
first = grade(r"The answer is $\\boxed{(x+1)^2}$.", "x^2+2x+1")  # the README's example, first of all
verdicts = [(first.correct, first.reason, first.tag and first.tag.value)]
verdicts += [(v.correct, v.reason, v.tag and v.tag.value) for v in (compare_answers(a, g) for a, g, _ in pairs)]
score = to_verl("math_reward")(data_source="math", solution_str=r"\\boxed{(y+1)^2}", ground_truth="y^2+2y+1", extra_info={})
print(json.dumps({"verdicts": verdicts, "verl": score}))
"""


def _python(code: str, *args: str, timeout: float = 900) -> dict:  # type: ignore[type-arg]
    completed = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _expected_first_calls() -> list[list[object]]:
    expected: list[list[object]] = [[True, "symbolic", None]]
    expected += [[equal, "symbolic", None if equal else "WRONG_ANSWER"] for _, _, equal in FIRST_CALL_PAIRS]
    return expected


@pytest.mark.parametrize("load", ["as-is", "busy"])
def test_symbolic_pairs_as_the_first_calls_of_a_fresh_process_are_right(load: str) -> None:
    def run() -> dict:  # type: ignore[type-arg]
        return _python(FIRST_CALLS, json.dumps(FIRST_CALL_PAIRS))

    if load == "busy":
        with busy_loops():
            result = run()
    else:
        result = run()
    assert result["verdicts"] == _expected_first_calls()
    assert (result["verl"]["score"], result["verl"]["reason"], result["verl"]["error"]) == (1.0, "symbolic", "")


GRADE_PAIRS = """
import json, sys, tomllib
from pathlib import Path
from rewardkit.math import compare_answers, grade
results = {}
for path in sorted(Path(sys.argv[1]).glob("*.toml")):
    document = tomllib.loads(path.read_text(encoding="utf-8"))
    for index, pair in enumerate(document["pair"], 1):
        if document["given_is"] == "response":
            verdict = grade(pair["given"], pair["gold"], policy=pair["policy"], extract=pair.get("extract", "boxed"))
        else:
            verdict = compare_answers(pair["given"], pair["gold"], policy=pair["policy"])
        results[f"{path.stem}-{index}"] = [verdict.correct, verdict.reason]
print(json.dumps(results))
"""


def _expected_pairs() -> dict[str, list[object]]:
    import tomllib

    expected = {}
    for path in sorted(PAIRS_DIR.glob("*.toml")):
        for index, pair in enumerate(tomllib.loads(path.read_text(encoding="utf-8"))["pair"], 1):
            expected[f"{path.stem}-{index}"] = [pair["equivalent"], pair["rule"]]
    return expected


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the child reads TOML with tomllib (3.11+)")
def test_every_golden_pair_gets_its_verdict_from_a_fresh_process_under_busy_loops() -> None:
    """All of tests/math/pairs/, graded by a fresh process (cold start included) while 2 x nproc
    busy loops run: the verdicts are the quiet machine's (the pairs files' labels)."""
    with busy_loops() as loops:
        assert len(loops) == busy_loop_count()
        results = _python(GRADE_PAIRS, str(PAIRS_DIR))
    expected = _expected_pairs()
    differing = {pair: (results.get(pair), want) for pair, want in expected.items() if results.get(pair) != want}
    assert not differing
    assert len(results) == len(expected) > 150


STARTED_SANDBOX = """
import os, sys, threading, time
from rewardkit.math import compare_answers
from rewardkit.math.sandbox import default_sandbox
sys.path.insert(0, sys.argv[1])
import math_sandbox_tasks
assert compare_answers("(x+1)^2", "x^2+2x+1").reason == "symbolic"
sandbox = default_sandbox()
server = sandbox._server.process.pid
workers = [worker.pid for worker in sandbox._idle]
if sys.argv[2] == "busy":  # one worker is deep in a long C call when the parent is killed
    threading.Thread(target=sandbox.run, args=(math_sandbox_tasks.one_long_c_call, ()), kwargs={"cpu_budget": 600}, daemon=True).start()
    time.sleep(0.5)
print(server, *workers, flush=True)
time.sleep(3600)
"""


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return "zombie" not in status.lower()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize(
    ("death", "state"),
    [
        pytest.param(signal.SIGKILL, "idle", id="SIGKILL-idle"),
        pytest.param(signal.SIGKILL, "busy", id="SIGKILL-busy"),
        pytest.param(signal.SIGTERM, "idle", id="SIGTERM-idle"),
        pytest.param(signal.SIGHUP, "busy", id="SIGHUP-busy"),
    ],
)
def test_the_workers_die_with_the_process_that_started_them(death: signal.Signals, state: str) -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(STARTED_SANDBOX), str(Path(__file__).parent), state],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert parent.stdout is not None
        pids = [int(pid) for pid in parent.stdout.readline().split()]
        assert len(pids) == 3, pids  # the fork server and two workers
        assert all(_alive(pid) for pid in pids)
        os.kill(parent.pid, death)
        parent.wait(timeout=60)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
            time.sleep(0.05)
        assert not [pid for pid in pids if _alive(pid)]
    finally:
        parent.kill()
        parent.wait()
