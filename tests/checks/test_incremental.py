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
