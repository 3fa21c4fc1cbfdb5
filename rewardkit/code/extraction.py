"""Stage 1: the program a response holds, from its fenced code blocks (or the whole text, raw)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

ExtractMode = Literal["last", "first", "raw"]
EXTRACT_MODES: tuple[str, ...] = ("last", "first", "raw")

#: Labels of a fence that holds Python (compared case-insensitively); an unlabeled fence counts too.
PYTHON_LABELS = frozenset({"python", "py", "python3", "py3", "python3.11", "ipython"})

# A fence opens at a line's start (up to 3 spaces, as in CommonMark) with 3 or more backticks or
# tildes, and an optional info string whose first word is the label.
_OPENING = re.compile(r"^[ ]{0,3}(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)$", re.MULTILINE)


@dataclass(frozen=True)
class Extraction:
    """The extracted program (``None`` when there is none) and, when there is none, why."""

    program: str | None
    reason: str = ""


@dataclass(frozen=True)
class _Block:
    label: str
    body: str | None  # None: the fence is never closed


def _blocks(text: str) -> list[_Block]:
    """Every fenced block of ``text``, in order; the last may be unclosed (``body`` None)."""
    blocks: list[_Block] = []
    position = 0
    while (opening := _OPENING.search(text, position)) is not None:
        fence = opening.group("fence")
        label = opening.group("info").strip().split(" ", 1)[0].strip("{}.").casefold()
        start = opening.end() + 1
        closing = re.compile(
            rf"^[ ]{{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.MULTILINE
        )
        end = closing.search(text, start)
        if end is None:
            blocks.append(_Block(label, None))
            break
        blocks.append(_Block(label, text[start : end.start()]))
        position = end.end()
    return blocks


def extract_code(response: str, mode: ExtractMode = "last") -> Extraction:
    """The program of ``response``: its last (``"last"``) or first (``"first"``) fenced block
    labeled Python or unlabeled, or the whole text (``"raw"``).

    A block whose fence is never closed (a truncated response) ends the search: with ``"last"``
    it is no program, not an earlier block the model went on from.
    """
    if mode not in EXTRACT_MODES:
        raise ValueError(f"extract={mode!r} is not one of {EXTRACT_MODES}")
    if mode == "raw":
        if not response.strip():
            return Extraction(None, "the response is empty")
        return Extraction(response)
    blocks = _blocks(response)
    python = [block for block in blocks if block.label in PYTHON_LABELS or not block.label]
    if (
        mode == "last"
        and blocks
        and blocks[-1].body is None
        and python
        and python[-1] is blocks[-1]
    ):
        return Extraction(None, "the last code block is never closed (a truncated response?)")
    closed = [block for block in python if block.body is not None and block.body.strip()]
    if not closed:
        others = sorted(
            {block.label for block in blocks if block.label not in PYTHON_LABELS and block.label}
        )
        if others:
            return Extraction(None, f"no Python code block (only {', '.join(others)})")
        return Extraction(None, "no code block")
    chosen = closed[-1] if mode == "last" else closed[0]
    return Extraction(chosen.body)
