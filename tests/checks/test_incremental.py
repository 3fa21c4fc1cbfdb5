"""Incremental analysis equals a fresh one after any sequence of edits (hypothesis-generated)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rewardkit.checks import CheckConfig, ModuleAnalyzer, TaskField, analyze_module
from rewardkit.checks.splitter import IncrementalSplitter, split_module

from .seed_examples import SEEDS, TASK_FIELDS

BASE = "\n".join(SEEDS.values())
CONFIG = CheckConfig(task_fields={name: TaskField(name, "pyproject") for name in TASK_FIELDS})
PIECES = st.sampled_from(
    [
        "😀",
        "é",
        "\t",
        "\r\n",
        "\\",
        "'''",
        '"""',
        "'",
        '"',
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        ":",
        "@reward\n",
        "async ",
        "await ",
        "return",
        "\n",
        "    ",
        "#",
        "# rewardkit: ignore[RK1",
        "*",
        "/",
        ",",
        "f'{",
        "context.acquire_resource()",
        "\x00",
        "\x0c",
        "\n\x0c@reward\n",
        "\r",
        "answr",
        "final_respone",
        "else:\n",
        "\ndef ",  # a definition at column 0, maybe inside a bracket left open
        "\nclass K:\n",
        "\n@r\n",
    ]
)
EDITS = st.lists(
    st.tuples(st.floats(0, 1), st.integers(0, 6), st.one_of(PIECES, st.text(max_size=4))),
    min_size=1,
    max_size=12,
)


def _apply(source: str, edit: tuple[float, int, str]) -> str:
    where, removed, inserted = edit
    position = int(where * len(source))
    return source[:position] + inserted + source[position + removed :]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(EDITS)
def test_incremental_splitter_matches_a_full_split(edits: list[tuple[float, int, str]]) -> None:
    splitter = IncrementalSplitter()
    source = BASE
    splitter.split(source)
    for edit in edits:
        source = _apply(source, edit)
        chunks = splitter.split(source)
        assert chunks == split_module(source)
        assert "".join(chunk.text for chunk in chunks) == source


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(EDITS)
def test_incremental_analysis_matches_a_fresh_analysis(edits: list[tuple[float, int, str]]) -> None:
    analyzer = ModuleAnalyzer()
    source = BASE
    analyzer.analyze(source, "doc.py", CONFIG)
    for edit in edits:
        source = _apply(source, edit)
        incremental = analyzer.analyze(source, "doc.py", CONFIG)
        assert incremental == ModuleAnalyzer().analyze(source, "doc.py", CONFIG)
        # The one-pass check of `rewardkit check` gives the same results as the chunked one.
        assert analyze_module(source, "doc.py", CONFIG) == incremental


FRAMEWORKS_BASE = '''from math_verify import parse, verify
from rewardkit import reward, to_trl, to_verl


def is_equiv(response, gold):
    return verify(parse(gold), parse(response))


def accuracy_reward(completions, solution, **kwargs):
    return [float(is_equiv(c[0]["content"], s)) for c, s in zip(completions, solution)]


def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    return {"score": float(is_equiv(solution_str, ground_truth))}


def graded(completions, solution):
    return [1.0 for _ in completions]


@reward
def ported(final_response, answer):
    return float(is_equiv(final_response, answer))


funcs = [to_trl(graded, timeout=5), to_verl(ported)]
'''
FRAMEWORKS_CONFIG = CheckConfig(
    task_fields=CONFIG.task_fields,
    framework_rewards=(("trl", "accuracy_reward"), ("verl", "compute_score")),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(EDITS)
def test_framework_functions_and_adapter_uses_incrementally(edits: list[tuple[float, int, str]]) -> None:
    """What the module's other definitions decide (adapter calls, helpers reaching a signal
    timeout, configured framework functions) is followed as the module is edited."""
    analyzer = ModuleAnalyzer()
    source = FRAMEWORKS_BASE
    assert {d.code for d in analyzer.analyze(source, "doc.py", FRAMEWORKS_CONFIG).diagnostics} >= {
        "RK101", "RK202", "RK501"
    }
    for edit in edits:
        source = _apply(source, edit)
        incremental = analyzer.analyze(source, "doc.py", FRAMEWORKS_CONFIG)
        assert incremental == ModuleAnalyzer().analyze(source, "doc.py", FRAMEWORKS_CONFIG)
        assert analyze_module(source, "doc.py", FRAMEWORKS_CONFIG) == incremental
