"""The rule reference in docs/checks.md is the one generated from the rule classes."""

from __future__ import annotations

from pathlib import Path

from rewardkit.checks.reference import BEGIN, END, render_rule_reference

DOCS = Path(__file__).resolve().parents[2] / "docs" / "checks.md"


def test_docs_rule_reference_matches_the_rules() -> None:
    text = DOCS.read_text(encoding="utf-8")
    generated = text[text.index(BEGIN) + len(BEGIN) : text.index(END)]
    assert generated == "\n" + render_rule_reference(), (
        "docs/checks.md is stale: run python -m rewardkit.checks.reference docs/checks.md"
    )
