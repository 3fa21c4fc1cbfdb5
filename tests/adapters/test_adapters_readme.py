"""The README's adapters section: its code is the examples' code, verbatim, and it runs as shown."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "adapters"
HEADING = "## One reward under verl, TRL, OpenRLHF and AgentFly"


def readme_section() -> str:
    """The README's adapters section: from its heading to the next second-level heading."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert HEADING in text, f"README.md has no section {HEADING!r}"
    section = text.split(HEADING, 1)[1]
    return HEADING + section.split("\n## ", 1)[0]


def code_blocks(markdown: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", markdown, flags=re.DOTALL)


@pytest.mark.parametrize("example", ["portable_reward.py", "framework_calls.py"])
def test_section_embeds_the_example_verbatim(example: str) -> None:
    assert (EXAMPLES / example).read_text(encoding="utf-8") in code_blocks(readme_section(), "python")


def test_example_runs_and_prints_what_the_section_shows() -> None:
    completed = subprocess.run(
        [sys.executable, str(EXAMPLES / "framework_calls.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=EXAMPLES,
    )
    assert completed.returncode == 0, completed.stderr
    shown = code_blocks(readme_section(), "text")[0].splitlines()
    printed = completed.stdout.splitlines()
    assert [line.split(":")[0] for line in printed] == ["verl", "TRL", "OpenRLHF", "AgentFly"]
    for line in printed:
        if line.startswith("OpenRLHF") and "tensor(" not in line:  # torch not installed: lists
            assert line == "OpenRLHF: {'rewards': [1.0], 'scores': [1.0], 'extra_logs': {'found': [1.0], 'error': [0.0]}}"
        else:
            assert line in shown
