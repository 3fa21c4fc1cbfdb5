"""``grade_code`` end to end (issue 35): extraction, each test format as data sets store it,
malformed tests, output comparison and every tag, on the bwrap and wasm backends."""

from __future__ import annotations

import json

import pytest
from grader_backends import backend  # noqa: F401  (the module-scoped fixture)

from rewardkit.code import CodeGraderError, CodeTag, CodeTestsError, grade_code
from rewardkit.code.sandbox import Sandbox

ADD_STDIN = "a, b = map(int, input().split())\nprint(a + b)\n"
APPS = {"inputs": ["1 2\n", "3 4\n"], "outputs": ["3\n", "7\n"]}


def block(code: str, label: str = "python") -> str:
    """``code`` in a fenced block labelled ``label``, inside some prose."""
    return f"Here is my solution.\n```{label}\n{code}```\nDone."


def test_extraction_modes(backend: Sandbox) -> None:  # noqa: F811
    wrong, right = block("print(0)\n"), block(ADD_STDIN)
    assert grade_code(wrong + right, APPS, sandbox=backend).correct
    assert grade_code(wrong + right, APPS, sandbox=backend, extract="first").tag is (
        CodeTag.WRONG_OUTPUT
    )
    assert grade_code(ADD_STDIN, APPS, sandbox=backend, extract="raw").correct
    for label in ("py", ""):
        assert grade_code(block(ADD_STDIN, label), APPS, sandbox=backend).correct


def test_no_code_and_a_truncated_block_are_not_run() -> None:
    for response in ("I cannot solve this.", block("print(0)\n") + "\n```python\na, b = inp"):
        verdict = grade_code(response, APPS, sandbox="none-is-never-resolved")
        assert verdict.tag is CodeTag.NO_CODE
        assert verdict.tests == ()
        assert verdict.fraction == 0.0


def test_stdio_tests_as_stored_and_as_a_json_string(backend: Sandbox) -> None:  # noqa: F811
    assert grade_code(block(ADD_STDIN), json.dumps(APPS), sandbox=backend).correct
    lines = {"inputs": [["1 2"], ["3 4"]], "outputs": [["3"], ["7"]]}  # lists of lines
    assert grade_code(block(ADD_STDIN), lines, sandbox=backend).correct
    cases = [{"input": "1 2\n", "output": "3\n", "testtype": "stdin"}]  # LiveCodeBench
    assert grade_code(block(ADD_STDIN), cases, sandbox=backend).correct


def test_fn_name_tests(backend: Sandbox) -> None:  # noqa: F811
    tests = {"fn_name": "add", "inputs": [[1, 2], [3, 4]], "outputs": [[3], [7]]}
    right = block("def add(a, b):\n    return a + b\n")
    assert grade_code(right, tests, sandbox=backend).correct
    as_strings = {"fn_name": "add", "inputs": ["1\n2", "3\n4"], "outputs": ["3", "7"]}
    assert grade_code(right, json.dumps(as_strings), sandbox=backend).correct
    half = grade_code(block("def add(a, b):\n    return 3\n"), tests, sandbox=backend)
    assert (half.fraction, half.tag) == (0.5, CodeTag.WRONG_OUTPUT)


HUMANEVAL = {
    "prompt": 'def add(a, b):\n    """The sum of a and b."""\n',
    "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(0, 5) == 5\n",
    "entry_point": "add",
}


def test_humaneval_with_the_prompt_prepended(backend: Sandbox) -> None:  # noqa: F811
    body = grade_code(block("    return a + b\n"), HUMANEVAL, sandbox=backend)
    assert body.correct
    assert body.program is not None
    assert body.program.startswith(HUMANEVAL["prompt"])
    whole = grade_code(block("def add(a, b):\n    return a + b\n"), HUMANEVAL, sandbox=backend)
    assert whole.correct
    wrong = grade_code(block("    return a - b\n"), HUMANEVAL, sandbox=backend)
    assert wrong.tag is CodeTag.WRONG_OUTPUT


def test_mbpp_asserts_with_setup(backend: Sandbox) -> None:  # noqa: F811
    tests = {
        "test_list": ["assert square(2) == OFFSET + 4", "assert square(3) == OFFSET + 9"],
        "test_setup_code": "OFFSET = 0",
    }
    assert grade_code(block("def square(x):\n    return x * x\n"), tests, sandbox=backend).correct
    half = grade_code(block("def square(x):\n    return 4\n"), tests, sandbox=backend)
    assert (half.fraction, half.tag) == (0.5, CodeTag.WRONG_OUTPUT)


@pytest.mark.parametrize(
    ("tests", "names"),
    [
        ({"fn_name": "f", "inputs": ["not json"], "outputs": ["1"]}, r"tests\['inputs'\]\[0\]"),
        ({"inputs": ["1", "2"], "outputs": ["1"]}, "has 2 tests"),
        ({"test": "assert True", "entry_point": "f"}, "check"),
        ({"test_list": [1]}, "test_list"),
        ("[{", "not JSON"),
    ],
)
def test_malformed_tests_raise_a_typed_error_naming_what(tests: object, names: str) -> None:
    with pytest.raises(CodeTestsError, match=names):
        grade_code(block(ADD_STDIN), tests)


def test_invalid_options_raise() -> None:
    with pytest.raises(CodeGraderError, match="timeout"):
        grade_code(block(ADD_STDIN), APPS, timeout=0)
    with pytest.raises(CodeGraderError, match="extract"):
        grade_code(block(ADD_STDIN), APPS, extract="middle")  # type: ignore[arg-type]


def test_output_comparison(backend: Sandbox) -> None:  # noqa: F811
    spaced = block("print('3   ')\nprint()\nprint()\n")
    assert grade_code(spaced, {"inputs": [""], "outputs": ["3"]}, sandbox=backend).correct
    third = block("print(0.333)\n")
    tests = {"inputs": [""], "outputs": ["0.3333\n"]}
    assert grade_code(third, tests, sandbox=backend).tag is CodeTag.WRONG_OUTPUT
    assert grade_code(third, tests, sandbox=backend, float_tolerance=1e-3).correct


def test_a_syntax_error_is_found_without_running() -> None:
    verdict = grade_code(block("def f(:\n    pass\n"), APPS, sandbox="never-resolved")
    assert verdict.tag is CodeTag.SYNTAX_ERROR
    assert verdict.tests == ()
    assert "does not compile" in verdict.reason


@pytest.mark.parametrize(
    ("program", "tag"),
    [
        ("raise ValueError('no')\n", CodeTag.RUNTIME_ERROR),
        ("import sys\nsys.exit(2)\n", CodeTag.RUNTIME_ERROR),
        ("print(5)\n", CodeTag.WRONG_OUTPUT),
        ("while True:\n    pass\n", CodeTag.TIMEOUT),
        ("chunks = []\nwhile True:\n    chunks.append(bytearray(8 << 20))\n", CodeTag.MEMORY_LIMIT),
    ],
)
def test_each_failure_tag(backend: Sandbox, program: str, tag: CodeTag) -> None:  # noqa: F811
    tests = {"inputs": ["1 2\n"], "outputs": ["3\n"]}
    verdict = grade_code(block(program), tests, sandbox=backend, timeout=2.0, memory=128 << 20)
    assert verdict.tag is tag, verdict.reason
    assert verdict.fraction == 0.0
    assert len(verdict.tests) == 1
