"""Every partial edit state, huge, deeply nested and odd inputs: diagnostics, never a crash."""

from __future__ import annotations

import pytest

from rewardkit.checks import CheckConfig, ModuleAnalyzer, TaskField, check_source

from .seed_examples import SEEDS, TASK_FIELDS

CONFIG = CheckConfig(task_fields={name: TaskField(name, "pyproject") for name in TASK_FIELDS})
REAL_MODULE = "\n".join(SEEDS.values())


def test_every_prefix_of_a_real_module_checks_without_crashing() -> None:
    lines = REAL_MODULE.splitlines(keepends=True)
    analyzer = ModuleAnalyzer()
    for end in range(len(lines) + 1):
        prefix = "".join(lines[:end])
        fresh = check_source(prefix, "prefix.py", CONFIG)
        assert list(analyzer.analyze(prefix, "prefix.py", CONFIG).diagnostics) == fresh
        for diagnostic in fresh:
            assert 1 <= diagnostic.line <= max(1, end + 1)
        # A prefix cut inside a line (mid-token) as well.
        if lines[end - 1 : end]:
            partial = prefix[: -max(1, len(lines[end - 1]) // 2)]
            check_source(partial, "partial.py", CONFIG)


def test_syntax_errors_give_one_rk900_and_skip_other_checks() -> None:
    source = (
        "from rewardkit import reward\n\n@reward\ndef f(final_respone):\n    return {'reward': [}\n"
    )
    [diagnostic] = check_source(source)
    assert diagnostic.code == "RK900"
    assert diagnostic.line == 5


@pytest.mark.parametrize(
    "expression",
    [
        "(" * 5000 + ")" * 5000,
        "-" * 20000 + "1",
        "1+" * 50000 + "1",
        "[" * 3000 + "]" * 3000,
        "not " * 20000 + "x",
    ],
)
def test_pathologically_nested_expressions_are_reported_not_crashed(expression: str) -> None:
    source = f"from rewardkit import reward\n\n@reward\ndef f(final_response):\n    return {expression}\n"
    diagnostics = check_source(source)
    assert [d.code for d in diagnostics] == ["RK900"]


def test_deep_but_valid_nesting_is_analysed_or_noted() -> None:
    expression = "-" * 900 + "1"
    source = (
        f"from rewardkit import reward\n\n@reward\ndef f(final_respone):\n    return {expression}\n"
    )
    codes = [d.code for d in check_source(source)]
    assert codes in (["RK102"], ["RK901"])


def test_multi_megabyte_module() -> None:
    body = "".join(
        f"\n\n@reward(name='r{i}')\ndef r{i}(final_response, answer):\n    return {{'reward': 1.0, 'i': {i}}}\n"
        for i in range(1500)
    )
    table = "TABLE = [\n" + "".join(f"    {'y' * 60!r},\n" for _ in range(20_000)) + "]\n"
    source = (
        "from rewardkit import reward\n" + body + "\nDATA = " + repr("x" * 2_000_000) + "\n" + table
    )
    assert len(source) > 3_000_000
    assert check_source(source, "huge.py", CONFIG) == []


@pytest.mark.parametrize(
    "source",
    [
        "",
        "\n\n",
        "\ufeffimport rewardkit\n",
        "import rewardkit\r\n\r\n@rewardkit.reward\r\ndef f(final_respone):\r\n    return 1.0\r\n",
        "import rewardkit\x00\n",
        "import rewardkit\n\tx = 1\n",
        "import rewardkit\nclass A(rewardkit.BaseReward): pass\n",
        "import rewardkit\n@rewardkit.reward\n",
        "import rewardkit\n'''unterminated\n",
        "import rewardkit\ndef f(:\n",
    ],
)
def test_odd_inputs_do_not_crash(source: str) -> None:
    diagnostics = check_source(source, "odd.py", CONFIG)
    for diagnostic in diagnostics:
        assert diagnostic.line >= 1
        assert diagnostic.column >= 0


def test_crlf_positions() -> None:
    source = (
        "import rewardkit\r\n\r\n@rewardkit.reward\r\ndef f(final_respone):\r\n    return 1.0\r\n"
    )
    [diagnostic] = check_source(source)
    assert (diagnostic.code, diagnostic.line, diagnostic.column) == ("RK102", 4, 6)


def test_valid_python_is_never_a_syntax_error() -> None:
    """Form feeds (page breaks) before a decorator, thousands of adjacent string literals, and
    a line break that is a lone carriage return are all Python."""
    form_feed = (
        "from rewardkit import reward\n\x0c\n\x0c@reward\ndef f(final_respone):\n    return 1.0\n"
    )
    assert [(d.code, d.line) for d in check_source(form_feed)] == [("RK102", 4)]
    strings = (
        "from rewardkit import reward\n\nPROMPT = (\n"
        + "".join(f"    'line {i} '\n" for i in range(5000))
        + ")\n\n@reward\ndef f(final_response):\n    return float(PROMPT in final_response)\n"
    )
    assert check_source(strings) == []
    carriage_returns = (
        "import rewardkit\r\r@rewardkit.reward\rdef f(final_respone):\r    return 1.0\r"
    )
    [diagnostic] = check_source(carriage_returns)
    assert (diagnostic.code, diagnostic.line, diagnostic.column) == ("RK102", 4, 6)
    for source in (form_feed, strings, carriage_returns):
        assert list(ModuleAnalyzer().analyze(source, "x.py").diagnostics) == check_source(source)


def test_a_four_megabyte_module_is_checked_in_bounded_time_and_memory() -> None:
    """The engine itself has no size limit (``rewardkit check`` applies ``max_file_size``):
    a 4 MB module parses in one pass of CPython's parser."""
    body = "".join(
        f"\n\n@reward(name='r{i}')\ndef r{i}(final_response, answer):\n"
        f"    if not final_response:\n        return {{'reward': 0.0, 'i': {i}}}\n"
        f"    return {{'reward': float(final_response == answer), 'i': {i}}}\n"
        for i in range(25_000)
    )
    source = "from rewardkit import reward\n" + body
    assert len(source) > 4_000_000
    assert check_source(source, "huge.py", CONFIG) == []
