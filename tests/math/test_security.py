"""Model text is never executed: payloads are wrong answers, no file appears, no eval/exec/compile sees them."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rewardkit.math import FailureTag, compare_answers, grade, grade_answer

PAYLOADS = [
    "__import__('os').system('touch pwned')",
    "().__class__.__base__.__subclasses__()",
    "__import__(\"os\").system(\"touch pwned\")",
    "eval('__import__(\"os\").system(\"touch pwned\")')",
    "exec(\"open('pwned','w')\")",
    "open('pwned', 'w').write('x')",
    "lambda: __import__('os').system('touch pwned')",
    "Symbol('x').__class__.__mro__",
    "x = __import__('os').system('touch pwned')",
    "\\frac{__import__('os').system('touch pwned')}{1}",
    "(__import__('subprocess').run(['touch','pwned']), 1)",
]


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
