"""Model text is never executed: payloads are wrong answers, no file appears, no eval/exec/compile sees them."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hostile_corpus import CODE_PAYLOADS, GOLDS, hostile_responses

from rewardkit.math import FailureTag, compare_answers, grade, grade_answer

PAYLOADS = CODE_PAYLOADS


@pytest.mark.parametrize("payload", PAYLOADS)
@pytest.mark.parametrize("sandbox", [True, False], ids=["sandbox", "in-process"])
def test_payload_is_a_wrong_answer_and_creates_no_file(
    payload: str, sandbox: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for gold in ("0", "x", "2x+1", "(1, 2)"):
        verdict = grade(f"The answer is \\boxed{{{payload}}}", gold, sandbox=sandbox)
        assert not verdict.correct
        assert verdict.tag is FailureTag.WRONG_ANSWER, dict(verdict.detail)
        assert not grade_answer(payload, gold)
    assert not (tmp_path / "pwned").exists()
    assert list(tmp_path.iterdir()) == []


def test_no_eval_exec_or_compile_sees_model_text(tmp_path: Path) -> None:
    # An audit hook (in a fresh interpreter: hooks cannot be removed) records every compile/exec
    # event; grading in-process must not compile any of the payloads' text.
    script = textwrap.dedent(
        """
        import json, sys
        seen = []
        def hook(event, args):
            if event in ("compile", "exec"):
                source = args[0]
                if isinstance(source, bytes):
                    source = source.decode("utf-8", "replace")
                if isinstance(source, str) and ("__import__" in source or "__subclasses__" in source or "pwned" in source):
                    seen.append(source)
        from rewardkit.math import grade
        payloads = json.loads(sys.argv[1])
        sys.addaudithook(hook)
        for payload in payloads:
            for gold in ("0", "x+1", "(1,2)"):
                grade("\\\\boxed{" + payload + "}", gold, sandbox=False)
        print(json.dumps(seen))
        """
    )
    completed = subprocess.run(
        [sys.executable, "-c", script, json.dumps(PAYLOADS)],
        capture_output=True, text=True, cwd=tmp_path, timeout=300, check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout.strip().splitlines()[-1]) == []
    assert not (tmp_path / "pwned").exists()


def test_gold_payload_is_a_harness_error_not_an_execution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    verdict = compare_answers("1", "__import__('os').system('touch pwned')")
    assert verdict.tag is FailureTag.HARNESS_ERROR
    assert "__import__" in verdict.detail["error"]
    assert not (tmp_path / "pwned").exists()


# Run in a fresh interpreter (audit hooks cannot be removed). Every compile of a string and every exec
# of code compiled from a string ("<string>") is logged, by the parent and by the sandbox's workers
# (forked after the hook is installed, they inherit it). A line "GRADING" marks the start of grading:
# nothing may be logged after it.
_AUDIT_SCRIPT = textwrap.dedent(
    """
    import json, sys
    with open(sys.argv[1], encoding="utf-8") as handle:
        corpus, golds = json.load(handle)
    mode, log = sys.argv[2], sys.argv[3]

    def hook(event, args):
        if event == "compile" and args[1] in ("<string>", "<unknown>", None):
            source = args[0]
        elif event == "exec" and getattr(args[0], "co_filename", "") == "<string>":
            source = "code " + args[0].co_name
        else:
            return
        if isinstance(source, bytes):
            source = source.decode("utf-8", "replace")
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps([event, str(source)[:300]]) + "\\n")

    from rewardkit.math import grade, warm_up
    from rewardkit.math.symbolic import warm_symbolic
    sandbox = mode == "sandbox"
    if sandbox:
        sys.addaudithook(hook)
        warm_up()  # the workers fork from here, with the hook
    else:
        warm_symbolic()
        sys.addaudithook(hook)
    with open(log, "a", encoding="utf-8") as handle:
        handle.write("GRADING\\n")
    verdicts = 0
    for response in corpus:
        for gold in golds:
            grade(response, gold, extract="auto", sandbox=sandbox)
            verdicts += 1
    print(verdicts)
    """
)


@pytest.mark.parametrize("sandbox", [True, False], ids=["sandbox", "in-process"])
def test_grading_the_hostile_corpus_compiles_and_executes_no_string(sandbox: bool, tmp_path: Path) -> None:
    # Digit tokens used to reach sympy.Number(str) -> parse_expr inside latex2sympy2_extended
    # ("Integer (31337 )" compiled and evaluated): numbers are now built from ints.
    log, inputs = tmp_path / "audit.log", tmp_path / "corpus.json"
    corpus = hostile_responses()
    inputs.write_text(json.dumps([corpus, GOLDS]), encoding="utf-8")
    completed = subprocess.run(
        [sys.executable, "-c", _AUDIT_SCRIPT, str(inputs), "sandbox" if sandbox else "in-process", str(log)],
        capture_output=True, text=True, cwd=tmp_path, timeout=600, check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stdout.split()[-1] == str(len(corpus) * len(GOLDS))
    lines = log.read_text(encoding="utf-8").splitlines()
    assert "GRADING" in lines
    during_grading = lines[lines.index("GRADING") + 1 :]
    assert during_grading == []
    assert not (tmp_path / "pwned").exists()


def test_the_audit_hook_sees_a_string_being_compiled(tmp_path: Path) -> None:
    # The hook above is not blind: sympy.Number on a string (what latex2sympy2_extended did) is logged.
    script = _AUDIT_SCRIPT.replace("grade(response, gold, extract=\"auto\", sandbox=sandbox)", "__import__(\"sympy\").Number(\"31337\")")
    log, inputs = tmp_path / "audit.log", tmp_path / "corpus.json"
    inputs.write_text(json.dumps([["x"], ["0"]]), encoding="utf-8")
    completed = subprocess.run(
        [sys.executable, "-c", script, str(inputs), "in-process", str(log)],
        capture_output=True, text=True, cwd=tmp_path, timeout=300, check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    lines = log.read_text(encoding="utf-8").splitlines()
    assert any("31337" in line for line in lines[lines.index("GRADING") + 1 :])
