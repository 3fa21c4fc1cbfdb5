"""`rewardkit eval code`: the real CLI in a subprocess with the real grader and sandbox (bwrap
here and in CI, which run as root): the shipped sample with no file, a file, workers, resume,
`--skip-bad` naming file:line, `SANDBOX_ERROR` left out of the score and graded again with
`--overwrite`, and math and code sharing one runner."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from eval_helpers import cli_env, read_jsonl, read_metadata, write_jsonl

from rewardkit.evaluation import EvalConfigError, EvalOptions, run_code_eval, run_math_eval
from rewardkit.evaluation.tasks import CODE

SAMPLE = [json.loads(line) for line in CODE.sample_path().read_text("utf-8").splitlines()]
EXPECTED = {case["id"]: case["expect"] for case in SAMPLE}

FENCE = "```"
ADD = f"{FENCE}python\ndef add(a, b):\n    return a + b\n{FENCE}"
ADD_TESTS = {"fn_name": "add", "inputs": [[1, 2], [2, 2]], "outputs": [[3], [4]]}
ROWS = [
    {"id": "ok", "response": ADD, "tests": ADD_TESTS},
    {"id": "wrong", "response": ADD.replace("a + b", "a * b"), "tests": ADD_TESTS},
    {"id": "none", "response": "no code here", "tests": ADD_TESTS},
    {"id": "mbpp", "response": ADD, "tests": {"asserts": ["assert add(1, 1) == 2"]}},
]


def eval_code(where: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`rewardkit eval code ARGS` in `where`, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "rewardkit", "eval", "code", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=where,
        env=cli_env(),
    )


def outcomes(path: Path) -> dict[str, str]:
    return {row["id"]: row["tag"] or "PASS" for row in read_jsonl(path)}


def test_the_sample_runs_with_no_file_and_each_case_gets_its_expected_outcome(
    tmp_path: Path,
) -> None:
    proc = eval_code(
        tmp_path, "--timeout", "2", "--workers", "2", "-o", "out.jsonl", "--report", "r.json"
    )
    assert proc.returncode == 0, proc.stderr
    assert outcomes(tmp_path / "out.jsonl") == EXPECTED
    assert set(EXPECTED.values()) == {"PASS", *CODE.tags} - {
        "SANDBOX_ERROR", "ADAPTER_ERROR", "HARNESS_ERROR"
    }  # every outcome the model can cause  # fmt: skip
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["config"]["task"] == "code"
    assert report["config"]["input"] == "<sample code_sample.jsonl>"
    assert report["config"]["sandbox"] == "auto"
    assert report["passed"] == sum(value == "PASS" for value in EXPECTED.values())
    assert set(report["failure_counts"]) == set(CODE.tags)
    assert "rewardkit eval code: <sample code_sample.jsonl>" in proc.stdout
    assert "timeout 2 s per test, sandbox auto" in proc.stdout
    rows = {row["id"]: row for row in read_jsonl(tmp_path / "out.jsonl")}
    wrong = rows["stdio-reverse-wrong"]
    assert wrong["fraction"] == 0.5
    assert wrong["detail"]["parsed_answer"] == "word = input().strip()\nprint(word)\n"
    assert wrong["detail"]["failed_test"].startswith("test 1 of 2: WRONG_OUTPUT")
    assert (wrong["detail"]["expected"], wrong["detail"]["actual"]) == ("cba\n", "abc\n")


def test_a_file_graded_in_process_and_resumed_gives_each_case_once(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "cases.jsonl", ROWS)
    first = eval_code(tmp_path, str(data), "--workers", "0", "--limit", "2", "-o", "out.jsonl")
    assert first.returncode == 0, first.stderr
    assert outcomes(tmp_path / "out.jsonl") == {"ok": "PASS", "wrong": "WRONG_OUTPUT"}
    rest = eval_code(tmp_path, str(data), "-o", "out.jsonl", "--resume", "--report", "r.json")
    assert rest.returncode == 0, rest.stderr
    rows = read_jsonl(tmp_path / "out.jsonl")
    assert [row["id"] for row in rows] == ["ok", "wrong", "none", "mbpp"]
    assert outcomes(tmp_path / "out.jsonl")["none"] == "NO_CODE"
    report = json.loads((tmp_path / "r.json").read_text())
    assert (report["n"], report["passed"], report["timings"]["resumed_cases"]) == (4, 2, 2)
    assert read_metadata(tmp_path / "out.jsonl")["grading"]["task"] == "code"
    other = eval_code(tmp_path, str(data), "-o", "out.jsonl", "--resume", "--timeout", "3")
    assert other.returncode == 2  # other grading options: not the same run
    assert "timeout" in other.stderr


def test_a_malformed_line_names_file_and_line_or_is_skipped(tmp_path: Path) -> None:
    data = write_jsonl(
        tmp_path / "cases.jsonl", [ROWS[0], "{not json", {"id": "n", "response": "x", "tests": 3}]
    )
    stopped = eval_code(tmp_path, str(data), "--workers", "0")
    assert stopped.returncode == 2
    assert f"rewardkit eval code: error: {data}:2: not valid JSON" in stopped.stderr
    skipped = eval_code(tmp_path, str(data), "--skip-bad", "-o", "out.jsonl")
    assert skipped.returncode == 0, skipped.stderr
    rows = {row["id"]: row for row in read_jsonl(tmp_path / "out.jsonl")}
    assert rows["ok"]["passed"] is True
    assert rows["line:2"]["tag"] == "HARNESS_ERROR"
    assert f"malformed input line {data}:2" in rows["line:2"]["detail"]["error"]
    assert rows["n"]["tag"] == "HARNESS_ERROR"
    assert "tests must be an object, a list or a JSON string" in rows["n"]["detail"]["error"]


def test_unreadable_tests_are_our_side_and_excluded(tmp_path: Path) -> None:
    data = write_jsonl(
        tmp_path / "cases.jsonl", [ROWS[0], {"id": "bad", "response": ADD, "tests": {"x": 1}}]
    )
    run = run_code_eval(data, workers=0)
    results = {result.id: result for result in run.results}
    assert results["bad"].outcome == "HARNESS_ERROR"
    assert results["bad"].reason == "bad_tests"
    assert (run.summary.scored, run.score) == (1, 1.0)


def test_sandbox_errors_leave_the_score_and_are_graded_again_with_overwrite(
    tmp_path: Path,
) -> None:
    data = write_jsonl(tmp_path / "cases.jsonl", ROWS[:2])
    down = eval_code(
        tmp_path, str(data), "--grader", "eval_code_graders:sandbox_down", "-o", "out.jsonl"
    )
    assert down.returncode == 3, down.stderr  # nothing could be scored
    assert "all 2 cases are SANDBOX_ERROR, ADAPTER_ERROR or HARNESS_ERROR" in down.stderr
    assert set(outcomes(tmp_path / "out.jsonl").values()) == {"SANDBOX_ERROR"}
    again = eval_code(tmp_path, str(data), "-o", "out.jsonl", "--overwrite")
    assert again.returncode == 0, again.stderr
    assert outcomes(tmp_path / "out.jsonl") == {"ok": "PASS", "wrong": "WRONG_OUTPUT"}


def test_options_the_task_does_not_take_are_refused(tmp_path: Path) -> None:
    with pytest.raises(EvalConfigError, match=r"for_task\('code', \.\.\.\)"):
        run_code_eval(None, options=EvalOptions(workers=0))
    with pytest.raises(
        EvalConfigError, match=r"sandbox=\.\.\. is an option of tasks that run code"
    ):
        run_math_eval(None, sandbox="bwrap")
    with pytest.raises(EvalConfigError, match="sandbox must be one of"):
        run_code_eval(None, sandbox="docker")
    import inspect

    keywords = inspect.signature(run_code_eval).parameters  # the code task's defaults shown
    assert (keywords["extract"].default, keywords["timeout"].default) == ("last", 10.0)
    assert (keywords["policy"].default, keywords["worker_memory"].default) == (None, None)
    proc = eval_code(tmp_path, "--policy", "strict")
    assert proc.returncode == 2
    assert "rewardkit eval code: error: unrecognized arguments: --policy" in proc.stderr
    unsafe = eval_code(tmp_path, "--sandbox", "none", "--limit", "1", "--workers", "0")
    assert unsafe.returncode == 0, unsafe.stderr
    assert "warning: --sandbox none runs the programs as plain processes" in unsafe.stderr


def test_math_and_code_share_one_runner(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """One run loop for every task: both tasks' runs pass through the same `runner._write`
    (results file, batches, progress) and give rows of one shape."""
    from rewardkit.evaluation import runner

    seen: list[str] = []
    shared = runner._write

    def spy(source: Any, options: Any, resumed: Any) -> Any:
        seen.append(source.task.name)
        return shared(source, options, resumed)

    monkeypatch.setattr(runner, "_write", spy)
    math = run_math_eval(None, workers=0, limit=2, output=tmp_path / "math.jsonl")
    code = run_code_eval(None, workers=0, limit=2, output=tmp_path / "code.jsonl")
    assert seen == ["math", "code"]
    math_row, code_row = (
        read_jsonl(tmp_path / "math.jsonl")[0],
        read_jsonl(tmp_path / "code.jsonl")[0],
    )
    assert set(math_row) | {"fraction"} == set(code_row)
    assert {"parsed_answer", "expected", "reason", "error"} <= set(code_row["detail"])
    assert math.report.keys() == code.report.keys()


def test_the_code_task_lists_the_graders_tags_in_its_order() -> None:
    from rewardkit.code import CodeTag
    from rewardkit.evaluation.tasks import CODE_TAGS

    assert tuple(tag.value for tag in CodeTag) == CODE_TAGS
    assert CODE.excluded == ("SANDBOX_ERROR", "ADAPTER_ERROR", "HARNESS_ERROR")


def test_a_case_may_take_its_tests_budgets_and_a_hung_grader_is_our_side(tmp_path: Path) -> None:
    """Workers are killed at the case's deadline, its tests' budgets (each `--timeout` plus a
    second) plus a second: a case of four tests taking 2.5 s is graded (one test's deadline is
    1.5 s), a grader that never returns is a `HARNESS_ERROR` (`grader_hung`), not a `TIMEOUT`."""
    four = {"fn_name": "add", "inputs": [[1, 2]] * 4, "outputs": [[3]] * 4}
    data = write_jsonl(
        tmp_path / "cases.jsonl",
        [
            {"id": "slow", "response": ADD + "\n# SLOW-GRADER", "tests": four},
            {"id": "hung", "response": ADD + "\n# HANG-GRADER", "tests": ADD_TESTS},
        ],
    )
    proc = eval_code(
        tmp_path, str(data), "--grader", "eval_code_graders:hangs_or_slow", "--timeout", "0.5",
        "--workers", "2", "-o", "out.jsonl",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = {row["id"]: row for row in read_jsonl(tmp_path / "out.jsonl")}
    assert rows["slow"]["passed"] is True
    assert (rows["hung"]["tag"], rows["hung"]["detail"]["reason"]) == (
        "HARNESS_ERROR",
        "grader_hung",
    )


def test_no_usable_sandbox_is_refused_before_grading_saying_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from rewardkit.code.sandbox import selection

    reasons = {"bwrap": "bwrap is not installed", "wasm": "wasmtime is not installed"}
    monkeypatch.setattr(selection, "available_backends", lambda: dict(reasons))
    output = tmp_path / "out.jsonl"
    with pytest.raises(EvalConfigError, match=r"rewardkit never runs model code unsandboxed"):
        run_code_eval(None, workers=0, output=output)
    with pytest.raises(EvalConfigError, match="the wasm sandbox is not usable here"):
        run_code_eval(None, workers=0, sandbox="wasm", output=output)
    assert not output.exists()  # refused before any output or grading
    reasons["wasm"] = None  # auto picks wasm, whose reservations a capped worker cannot hold
    with pytest.raises(EvalConfigError, match=r"give worker_memory=0"):
        run_code_eval(None, workers=1, worker_memory=2 << 30, output=output)


def test_the_sample_gets_the_same_outcomes_in_the_wasm_sandbox() -> None:
    import os

    from rewardkit.code.sandbox.selection import available_backends

    why_not = available_backends()["wasm"]
    if why_not is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the wasm sandbox is needed in CI (the code extra): {why_not}")
        pytest.skip(f"the wasm sandbox is not usable here: {why_not}")
    run = run_code_eval(None, sandbox="wasm", workers=0, timeout=5.0)
    assert {result.id: result.outcome for result in run.results} == EXPECTED
