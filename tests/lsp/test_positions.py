"""Column conversion between code points (engine) and the client's units (UTF-16 by default)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rewardkit_lsp.positions import LineIndex, split_lines


def test_lines_split_only_at_lsp_line_breaks():
    assert split_lines("a\x0cb\u2028c\r\nd\re\nf") == ["a\x0cb\u2028c", "d", "e", "f"]


@pytest.mark.parametrize(("encoding", "expected"), [("utf-16", 8), ("utf-8", 11), ("utf-32", 7)])
def test_emoji_before_a_column_counts_in_client_units(encoding: str, expected: int):
    index = LineIndex('x = "🎯é" + y', encoding)
    # code-point column 7 is the closing quote, after 🎯 (2 UTF-16 units, 4 UTF-8 bytes) and é
    assert index.to_client(0, 7)["character"] == expected
    assert index.from_client(0, expected).column == 7


@given(st.text(max_size=40), st.sampled_from(["utf-8", "utf-16", "utf-32"]))
def test_conversion_round_trips_every_column(line: str, encoding: str):
    line = line.replace("\r", "").replace("\n", "")
    index = LineIndex(line, encoding)
    for column in range(len(line) + 1):
        assert index.from_client(**index.to_client(0, column)).column == column


def test_positions_past_the_end_are_clamped():
    index = LineIndex("ab\ncd")
    assert index.to_client(9, 0) == {"line": 1, "character": 2}
    assert index.from_client(0, 99).column == 2
    assert index.from_client(7, 0).line == 1
