"""The code grader's pure parts, each alone: extraction, test formats, the codec, comparison."""

from __future__ import annotations

import pytest

from rewardkit.code import codec
from rewardkit.code.comparison import return_matches, stdout_matches
from rewardkit.code.extraction import extract_code
from rewardkit.code.formats import CallTests, CheckTests, CodeTestsError, StdioTests, parse_tests


def test_extraction_takes_the_last_python_or_unlabeled_block() -> None:
    text = "```python\na = 1\n```\ntext\n```py\nb = 2\n```\n```bash\nls\n```"
    assert extract_code(text).program == "b = 2\n"
    assert extract_code(text, "first").program == "a = 1\n"
    assert extract_code("```Python3\nc = 3\n```").program == "c = 3\n"
    assert extract_code("```\nd = 4\n```").program == "d = 4\n"
    assert extract_code("no code").program is None
    assert extract_code("```python\na = 1\n```\n```python\nb = ").program is None  # truncated
    assert extract_code("x = 1", "raw").program == "x = 1"


def test_formats_are_taken_as_they_come() -> None:
    assert isinstance(parse_tests('{"inputs": ["1\\n"], "outputs": ["2\\n"]}'), StdioTests)
    call = parse_tests({"inputs": ["1\n2"], "outputs": ["3"], "fn_name": "f"})
    assert isinstance(call, CallTests)
    assert call.arguments == ((1, 2),)
    assert call.outputs == (3,)
    humaneval = parse_tests(
        {"test": "def check(candidate):\n    assert candidate(1)\n", "entry_point": "f"}
    )
    assert isinstance(humaneval, CheckTests)
    assert humaneval.proxies == ("f",)
    mbpp = parse_tests({"test_list": ["assert math.isclose(g(1), 1.0)"]})
    assert isinstance(mbpp, CheckTests)
    assert mbpp.proxies == ("g",)
    assert "import math" in mbpp.setup
    assert isinstance(
        parse_tests({"test_cases": [{"input": "1", "output": "1", "type": "stdin_stdout"}]}),
        StdioTests,
    )


@pytest.mark.parametrize(
    ("tests", "message"),
    [
        ({"inputs": ["1"], "outputs": []}, "empty"),
        ({"inputs": ["1", "2"], "outputs": ["1"]}, "has 2 tests"),
        ({"test": "def check(c): pass", "entry_point": "1x"}, "entry_point"),
        ({"foo": 1}, "none of the keys"),
        ("not json", "not JSON"),
    ],
)
def test_malformed_tests_are_a_typed_error_naming_what_is_wrong(
    tests: object, message: str
) -> None:
    with pytest.raises(CodeTestsError, match=message):
        parse_tests(tests)


def test_codec_carries_plain_data_and_nothing_else() -> None:
    value = [None, True, 2, 1.5, float("inf"), "s", b"b", (1, 2), {1: {3}}, frozenset({4}), 1j]
    assert codec.loads(codec.dumps(value)) == value

    class Forged(int):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = int.__hash__

    assert type(codec.loads(codec.dumps(Forged(3)))) is int
    opaque = codec.loads(codec.dumps(object()))
    assert opaque != opaque
    assert opaque != 1
    with pytest.raises(TypeError):
        bool(opaque)
    with pytest.raises(codec.CodecError):
        codec.loads('{"~": "set", "v": [[1]]}')


def test_comparison_as_livecodebench_and_prime_code() -> None:
    assert stdout_matches("1 2  \r\n3\n\n", "1 2\n3")
    assert stdout_matches("1.0\n", "1.00")
    assert not stdout_matches("0.333\n", "0.3333")
    assert stdout_matches("0.333\n", "0.3333", float_tolerance=1e-3)
    assert not stdout_matches("1\n2", "2\n1")
    assert return_matches((1, 2), [1, 2])
    assert return_matches(3, [3])  # APPS wraps the expected value in a list
    assert not return_matches(codec.Opaque("x"), [3])
