"""Stage 1, extraction: find the final answer in a model response, and unwrap gold strings.

The grader takes the LAST ``\\boxed{...}`` (or ``\\fbox{...}``, ``\\boxed 5``) with balanced-brace
parsing; ``extract="auto"`` falls back to "The answer is X", the last math span, the last number.
"""

from __future__ import annotations

import re
from typing import Literal

ExtractMode = Literal["boxed", "auto"]

_BOX_START = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])")
_BRACE_TOKEN = re.compile(r"\\.|[{}]", re.DOTALL)
# Only the last few boxes can hold the final answer; bounding them bounds the work on hostile text.
_MAX_BOX_CANDIDATES = 64
# A box whose content runs past this many characters is treated as unclosed (a truncated answer).
_MAX_BOX_CONTENT = 20_000


def read_group(text: str, open_index: int, limit: int = _MAX_BOX_CONTENT) -> tuple[str, int] | None:
    """Read the balanced ``{...}`` group opening at ``open_index``: (content, index after ``}``).

    Escaped braces (``\\{``, ``\\}``, so also ``\\left\\{``) do not count. Returns None when the group
    is not closed within ``limit`` characters.
    """
    depth = 0
    end_limit = min(len(text), open_index + limit + 2)
    for token in _BRACE_TOKEN.finditer(text, open_index, end_limit):
        char = token.group()
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[open_index + 1 : token.start()], token.end()
    return None


def _box_at(text: str, match: re.Match[str]) -> tuple[str, int] | None:
    """The content and end index of the box command matched at ``match``, None if malformed."""
    index = match.end()
    while index < len(text) and text[index] in " \t":
        index += 1
    if index < len(text) and text[index] == "{":
        return read_group(text, index)
    if index == match.end():
        return None  # "\boxedx": not a box
    bare = re.match(r"[^\s$]+", text[index:])
    if bare is None:
        return None
    return bare.group(), index + bare.end()


def _unwrap_nested_boxes(content: str) -> str:
    """``\\boxed{\\boxed{5}}`` -> ``5``: strip boxes that wrap the whole content."""
    for _ in range(100):
        stripped = content.strip()
        match = _BOX_START.match(stripped)
        if match is None:
            return stripped
        box = _box_at(stripped, match)
        if box is None or box[1] != len(stripped):
            return stripped
        content = box[0]
    return content.strip()


def extract_boxed(text: str) -> str | None:
    """The content of the last non-empty top-level box in ``text``, or None when there is none.

    An unclosed last box (a truncated response) is no answer; empty boxes (an echoed
    ``\\boxed{}`` from the prompt) are skipped; nested boxes are unwrapped.
    """
    if not isinstance(text, str) or "\\" not in text:
        return None
    starts = list(_BOX_START.finditer(text))[-_MAX_BOX_CANDIDATES:]
    spans: list[tuple[int, int, str | None]] = []
    for match in starts:
        box = _box_at(text, match)
        spans.append((match.start(), box[1] if box else len(text), box[0] if box else None))
    for position, (start, _end, content) in reversed(list(enumerate(spans))):
        if any(other_start < start < other_end for other_start, other_end, _ in spans[:position]):
            continue  # nested inside an earlier box: the outer one decides
        if content is None:
            return None
        answer = _unwrap_nested_boxes(content)
        if answer:
            return answer
    return None


_ANSWER_PHRASE = re.compile(
    r"(?:final answer|the answer|answer)\s*(?:is|:|=)\s*:?\s*", re.IGNORECASE
)
_MATH_SPANS = (
    re.compile(r"\$\$(.+?)\$\$", re.DOTALL),
    re.compile(r"\\\[(.+?)\\\]", re.DOTALL),
    re.compile(r"\\\((.+?)\\\)", re.DOTALL),
    re.compile(r"(?<![\\$])\$([^$]+?)\$"),
)
# Delimiter pairs searched from the end (a lazy ".+?" retried after every unclosed opener is quadratic).
_PAIRED_DELIMITERS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"))
_INLINE_MATH = _MATH_SPANS[3]
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:/\d+)?")


def _last_math_span(text: str) -> tuple[int, str] | None:
    """(start, content) of the math span that starts last: display, ``\\(...\\)`` or ``$...$``."""
    best: tuple[int, str] | None = None
    for opener, closer in _PAIRED_DELIMITERS:
        end = text.rfind(closer)
        start = text.rfind(opener, 0, end - len(opener) + 1 if opener == closer else end) if end > 0 else -1
        if start >= 0 and (best is None or start > best[0]):
            best = (start, text[start + len(opener) : end].strip())
    for match in _INLINE_MATH.finditer(text):
        if best is None or match.start() > best[0]:
            best = (match.start(), match.group(1).strip())
    return best


# Markdown emphasis around the answer ("**Answer:** 7", "the answer is **7**") is not part of it.
_EMPHASIS = "*"
# An explanation after the answer ("5 because 2+3=5") is not part of it either.
_EXPLANATION = re.compile(r"\s+(?:because|since|as|which|so|where|when|given|from|by|after|using)\b.*$", re.DOTALL)


def _answer_after_phrase(text: str) -> str | None:
    matches = list(_ANSWER_PHRASE.finditer(text))
    if not matches:
        return None
    rest = text[matches[-1].end() :].lstrip(_EMPHASIS + " \t")
    for pattern in _MATH_SPANS:
        span = pattern.match(rest)
        if span:
            return span.group(1).strip()
    line = re.split(r"\n|\.(?:\s|$)", rest, maxsplit=1)[0]
    line = _EXPLANATION.sub("", line).strip().strip(_EMPHASIS).strip()
    return line or None


def extract_answer(text: str, mode: ExtractMode = "boxed") -> str | None:
    """The final answer of a response under ``mode`` ("boxed": last box only; "auto": with fallbacks)."""
    if not isinstance(text, str):
        return None
    boxed = extract_boxed(text)
    if boxed is not None or mode == "boxed":
        return boxed
    phrase = _answer_after_phrase(text)
    if phrase:
        return phrase
    span = _last_math_span(text)
    if span and span[1]:
        return span[1]
    return _last_number(text)


_NUMBER_WINDOW = 4096


def _last_number(text: str) -> str | None:
    """The last number of ``text``, searched backwards in windows (a megabyte of digits is not listed)."""
    end = len(text)
    while end > 0:
        start = max(end - _NUMBER_WINDOW, 0)
        # Widen to the left while a number might cross the window's edge.
        while start > 0 and (text[start - 1].isdigit() or text[start - 1] in ",.-/"):
            start -= 1
        numbers = _NUMBER.findall(text, start, end)
        if numbers:
            return numbers[-1]
        end = start
    return None


_WRAPPERS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))
_WRAPPING_COMMANDS = re.compile(r"\\(?:boxed|fbox|text|textbf|mathrm|mbox)\s*(?=\{)")


def unwrap_gold(gold: str) -> str:
    """Strip the wrappers a gold string may arrive in: ``$...$``, ``\\(...\\)``, ``\\[...\\]``, ``\\boxed{}``, ``\\text{}``."""
    text = gold.strip()
    for _ in range(20):
        before = text
        for opener, closer in _WRAPPERS:
            if (
                len(text) >= len(opener) + len(closer)
                and text.startswith(opener)
                and text.endswith(closer)
                and opener not in text[len(opener) : len(text) - len(closer)]
            ):
                text = text[len(opener) : len(text) - len(closer)].strip()
        command = _WRAPPING_COMMANDS.match(text)
        if command:
            group = read_group(text, command.end())
            if group is not None and group[1] == len(text):
                text = group[0].strip()
        if text == before:
            break
    return text
