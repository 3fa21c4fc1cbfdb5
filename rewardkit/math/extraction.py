"""Stage 1, extraction: find the final answer in a model response, and unwrap gold strings.

The grader takes the LAST ``\\boxed{...}`` (or ``\\fbox{...}``, ``\\boxed 5``) with balanced-brace
parsing; ``extract="auto"`` falls back to "The answer is X", the last math span, the last number.
"""

from __future__ import annotations

import re
from typing import Literal

from rewardkit.math import languages

ExtractMode = Literal["boxed", "auto"]

#: ``extract="auto"``'s fallbacks (no box) read the last this many characters of a response.
AUTO_WINDOW = 1_000_000

_BOX_START = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])")
_BOX_NAMES = ("\\boxed", "\\fbox")
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


def _last_box_starts(text: str) -> list[re.Match[str]]:
    """The last ``_MAX_BOX_CANDIDATES`` box commands, in order, found by scanning from the end.

    The final answer is at the end: a response of any length costs a scan of its tail to the
    last boxes (``str.rfind``), never a pass over the whole text with a regex.
    """
    found: list[re.Match[str]] = []
    end = len(text)
    cursors = {name: text.rfind(name, 0, end) for name in _BOX_NAMES}
    while len(found) < _MAX_BOX_CANDIDATES:
        name, position = max(cursors.items(), key=lambda item: item[1])
        if position < 0:
            break
        match = _BOX_START.match(text, position)
        if match is not None:
            found.append(match)
        cursors[name] = text.rfind(name, 0, position)
    found.reverse()
    return found


def _final_boxes(text: str) -> list[tuple[int, int, str]] | None:
    """(start, end, content) of the top-level non-empty boxes, last first; None when the last box is unclosed."""
    starts = _last_box_starts(text)
    spans: list[tuple[int, int, str | None]] = []
    for match in starts:
        box = _box_at(text, match)
        spans.append((match.start(), box[1] if box else len(text), box[0] if box else None))
    boxes: list[tuple[int, int, str]] = []
    for position, (start, end, content) in reversed(list(enumerate(spans))):
        if any(other_start < start < other_end for other_start, other_end, _ in spans[:position]):
            continue  # nested inside an earlier box: the outer one decides
        if content is None:
            if not boxes:
                return None
            break
        answer = _unwrap_nested_boxes(content)
        if answer:
            boxes.append((start, end, answer))
    return boxes


def extract_boxed(text: str) -> str | None:
    """The content of the last non-empty top-level box in ``text``, or None when there is none.

    An unclosed last box (a truncated response) is no answer; empty boxes (an echoed
    ``\\boxed{}`` from the prompt) are skipped; nested boxes are unwrapped.
    """
    if not isinstance(text, str) or "\\" not in text:
        return None
    boxes = _final_boxes(text)
    return boxes[0][2] if boxes else None


# What may stand between the boxes of one answer: spacing, math delimiters, punctuation, "and"/"or",
# a part label ("for part (a)"), a label of the next box ("y_2 ="), one word after a box ("\\boxed{3} chairs").
_LABEL_BEFORE_BOX = re.compile(
    r"(?P<label>(?:[A-Za-z](?:_\{?[A-Za-z0-9]+\}?)?|\((?:[A-Za-z],\s*)+[A-Za-z]\)))\s*=\s*(?:\$|\\\(|\\\[|\s)*$"
)
_JOINER_NOISE = re.compile(
    r"\$|\\[()\[\]]|\\[,;:! ]|\\q?quad|\\\\|~|\\text(?:bf|rm)?\{|\\mathrm\{|[{}&,;:.]"
)
_JOINER_WORDS = re.compile(
    r"(?:\b(?:and|or)\b|\b(?:for\s+)?(?:part|case)\s*\(?[a-z0-9]\)?|\([a-z0-9]\)|\s)*", re.IGNORECASE
)
_WORD_AFTER_BOX = re.compile(r"\s*([A-Za-z]+)")
_NOT_A_JOINER_WORD = re.compile(
    r"^(?:not|no|but|wait|so|then|is|was|are|were|be|maybe|perhaps|possibly|probably|either|incorrect|wrong|"
    r"instead|actually|rather|also|hence|thus|therefore|which|where|because)$",
    re.IGNORECASE,
)
_MAX_JOINER = 120


def _joins(gap: str) -> tuple[bool, str | None]:
    """Whether ``gap`` only joins two boxes of one answer; and the label it gives the next box."""
    if len(gap) > _MAX_JOINER:
        return False, None
    label = _LABEL_BEFORE_BOX.search(gap)
    if label is not None:
        gap = gap[: label.start()]
    word = _WORD_AFTER_BOX.match(gap)
    if word is not None and not _NOT_A_JOINER_WORD.match(word[1]) and word[1].lower() not in ("and", "or", "for", "part"):
        gap = gap[word.end() :]  # "\\boxed{3} chairs and \\boxed{5} tables": a word naming what was counted
    rest = _JOINER_NOISE.sub(" ", gap)
    joined = _JOINER_WORDS.fullmatch(rest) is not None
    return joined, (label["label"] if label is not None else None)


def _boxed_answer(text: str, boxes: list[tuple[int, int, str]] | None) -> str | None:
    """The boxes that end ``text`` as one answer: ``\\boxed{(2,2)} \\text{ and } \\boxed{(6,2)}`` -> ``(2,2), (6,2)``.

    Boxes joined only by spacing, commas, "and"/"or", part labels or a label of the next box are
    the parts of one answer (against a single-value gold, several boxes are a hedge); a repeated
    box counts once. Labels are kept when every box has one (``y_1 = \\boxed{..}, y_2 = \\boxed{..}``).
    ``boxes`` are ``_final_boxes(text)``.
    """
    if not boxes:
        return None
    run = [boxes[0]]
    labels: list[str | None] = []
    for box in boxes[1:]:
        joined, label = _joins(text[box[1] : run[-1][0]])
        if not joined:
            break
        labels.append(label)
        run.append(box)
    if len(run) == 1:
        return run[0][2]
    first_label = _LABEL_BEFORE_BOX.search(text, max(0, run[-1][0] - 40), run[-1][0])
    labels.append(first_label["label"] if first_label is not None else None)
    contents = [content for _start, _end, content in reversed(run)]
    labels.reverse()
    if all(labels):
        contents = [f"{label} = {content}" for label, content in zip(labels, contents)]
    return ", ".join(dict.fromkeys(contents))


_ANSWER_PHRASE = re.compile(
    r"(?:final answer|the answer|answer)\s*(?:is|:|=)\s*:?\s*", re.IGNORECASE
)
# After the last box, only a "final answer" phrase restates the answer ("... the answer is correct" does not).
_FINAL_ANSWER_PHRASE = re.compile(r"final answer\s*(?:is|:|=)\s*:?\s*", re.IGNORECASE)
# Inline math may break a line but not a paragraph (as in TeX); an escaped \$ inside does not close it.
_INLINE_MATH = re.compile(r"(?<![\\$])\$((?:\\.|[^$\\\n]|\n(?![ \t]*\n))+?)\$")
_MATH_SPANS = (
    re.compile(r"\$\$(.+?)\$\$", re.DOTALL),
    re.compile(r"\\\[(.+?)\\\]", re.DOTALL),
    re.compile(r"\\\((.+?)\\\)", re.DOTALL),
    _INLINE_MATH,
)
# Delimiter pairs searched from the end (a lazy ".+?" retried after every unclosed opener is quadratic).
_PAIRED_DELIMITERS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"))
_DISPLAY_OPENERS = ("$$", "\\[")
# A number not glued to a word ("QWERTY7Z", "x2" are names): "1 000", ".4", "1,000.5", "3/4", "28%".
_NUMBER = re.compile(r"(?<![A-Za-z_\d.])-?(?:[1-9]\d{0,2}(?: \d{3})+(?![\d,])|\d[\d,]*(?:\.\d+)?|\.\d+)(?:/\d+)?(?:\s?%)?")
# A restated final answer has a digit or some LaTeX ("... the final answer is correct" is no answer).
_ANSWER_LIKE = re.compile(r"[\d\\^=]")
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)|\n")


def _last_math_span(text: str) -> tuple[int, int, str, bool] | None:
    """(start, end, content, is display math) of the math span that starts last."""
    best: tuple[int, int, str, bool] | None = None
    for opener, closer in _PAIRED_DELIMITERS:
        end = text.rfind(closer)
        start = text.rfind(opener, 0, end - len(opener) + 1 if opener == closer else end) if end > 0 else -1
        if start >= 0 and (best is None or start > best[0]):
            best = (start, end + len(closer), text[start + len(opener) : end].strip(), opener in _DISPLAY_OPENERS)
    for match in _INLINE_MATH.finditer(text) if "$" in text else ():
        if best is None or match.start() > best[0]:
            best = (match.start(), match.end(), match.group(1).strip(), False)
    return best


# Markdown emphasis and quotes around the answer ("**Answer:** 7", 'the answer is "7"') are not part of it.
_EMPHASIS = re.compile(r'^(?:\s|\*|\\?"|[\u201c\u201d])+|(?:\s|\*|\\?"|[\u201c\u201d])+$')
# An explanation after the answer ("5 because 2+3=5") is not part of it either.
_EXPLANATION = re.compile(r"\s+(?:because|since|as|which|so|where|when|given|from|by|after|using)\b.*$", re.DOTALL)
_WORD = re.compile(r"(?<!\\)\b[A-Za-z]{2,}\b")
_COMMAND_OR_MATH = re.compile(r"\\[A-Za-z]+|\$[^$]*\$|\\\(.*?\\\)")


def _is_prose(text: str) -> bool:
    """Two or more words outside math and commands: a sentence, not an answer."""
    return len(_WORD.findall(_COMMAND_OR_MATH.sub(" ", text))) >= 2


def _last_statement(text: str, *, across_sentences: bool) -> str | None:
    r"""The last math span, or a number after it (in a later sentence when ``across_sentences``).

    "The volume is $V$, so it is 120" -> ``120``; "Therefore $x \geq 5$ is the solution." -> ``x \geq 5``;
    "... $k = \frac{60}{m}$. Therefore, there are 14 pairs." -> ``14``.
    """
    span = _last_math_span(text)
    number = _last_number(text)
    if span is None or not span[2]:
        return number[2] if number else None
    if number is not None and number[0] >= span[1]:
        between = text[span[1] : number[0]]
        if not across_sentences or span[3] or _SENTENCE_END.search(between):
            return number[2]
    return span[2]


_SPAN_JOINER = re.compile(
    r"\s*(?:,|;|&|\band\b|\bor\b|\b(?:ou|et|oder|und|o|y|или|и)\b|或|和|及|또는|و)\s*(?:\band\b\s*)?", re.IGNORECASE
)


def _leading_spans(text: str) -> list[str]:
    """The math spans ``text`` starts with, when joined by commas or "and"/"or" (``$14$ and $15$``)."""
    spans: list[str] = []
    position = 0
    while len(spans) < 16:
        for pattern in _MATH_SPANS:
            span = pattern.match(text, position)
            if span:
                spans.append(span.group(1).strip())
                position = span.end()
                break
        else:
            break
        joiner = _SPAN_JOINER.match(text, position)
        if joiner is None:
            break
        position = joiner.end()
    return spans


def _last_phrase(text: str, phrase: re.Pattern[str], start: int) -> tuple[re.Match[str] | None, bool]:
    """The last answer phrase (English, or with ``_ANSWER_PHRASE`` another language's) and whether it is foreign."""
    english = None
    if "nswer" in text or "NSWER" in text:  # every English phrase says "answer": a substring test spares the regex
        matches = list(phrase.finditer(text, start))
        english = matches[-1] if matches else None
    foreign = languages.last_phrase(text, start) if phrase is _ANSWER_PHRASE else None
    if foreign is not None and (english is None or foreign.start() > english.start()):
        return foreign, True
    return english, False


def _answer_after_phrase(text: str, phrase: re.Pattern[str] = _ANSWER_PHRASE, start: int = 0) -> str | None:
    match, foreign = _last_phrase(text, phrase, start)
    if match is None:
        return None
    rest = _EMPHASIS.sub("", text[match.end() :])
    spans = _leading_spans(rest)
    if spans:
        return ", ".join(spans)
    line = re.split(r"\n|\.(?:\s|$)", rest, maxsplit=1)[0]
    if foreign:
        return languages.answer_end(line) or None  # "220 €", "220입니다", "220 рублей": the answer leads
    line = _EMPHASIS.sub("", _EXPLANATION.sub("", line))
    if line and _is_prose(line):
        # "The area of $PQRS$ is 48": the sentence names the answer; its last value is it.
        return _last_statement(line, across_sentences=False) or line
    return line or None


_BARE_MATH_LENGTH = 200
# Three letters in a row, or a short English word: prose ("QWERTY7Z" is a name, not "7"); "xy+1" is not.
_PROSE_WORD = re.compile(r"[A-Za-z]{3,}|\b(?:is|of|to|so|we|it|be|as|at|by|on|if|an|or|in)\b", re.IGNORECASE)


def _bare_math(text: str) -> str | None:
    r"""The whole response when it is a bare answer (``\frac{10}{9}``, ``1 000``), not prose."""
    stripped = text.strip()
    if not stripped or len(stripped) > _BARE_MATH_LENGTH or "$" in stripped or "\n" in stripped:
        return None
    letters = re.sub(r"\\[A-Za-z]+", " ", stripped)
    if _PROSE_WORD.search(letters) or not re.search(r"[\d\\]", stripped):
        return None
    return stripped


def extract_answer(text: str, mode: ExtractMode = "boxed") -> str | None:
    """The final answer of a response under ``mode`` ("boxed": the final boxes; "auto": with fallbacks).

    "auto" takes, in order: the final boxes (unless a "final answer" phrase follows them), the
    answer after "the answer is", the whole response when it is a bare expression, and the last
    statement (the last math span, or a number in a later sentence).
    """
    if not isinstance(text, str):
        return None
    boxes = _final_boxes(text) if "\\" in text else []
    if mode == "boxed" or boxes is None:
        return _boxed_answer(text, boxes)
    tail_start = max(len(text) - AUTO_WINDOW, 0)
    if boxes:
        restated = _answer_after_phrase(text, _FINAL_ANSWER_PHRASE, max(boxes[0][1], tail_start))
        if restated and (_ANSWER_LIKE.search(restated) or len(restated) <= 3):
            return restated  # "... \\boxed{310}. Final Answer: The final answer is $10,610$."
        return _boxed_answer(text, boxes)
    tail = languages.half_width(text[tail_start:])  # the fallbacks read the end, where the answer is
    return _answer_after_phrase(tail) or _bare_math(tail) or _last_statement(tail, across_sentences=True)


_NUMBER_WINDOW = 4096
_MAX_NUMBER_LENGTH = 256


def _last_number(text: str) -> tuple[int, int, str] | None:
    """(start, end, text) of the last number, searched backwards in windows (a megabyte of digits is not listed)."""
    end = len(text)
    while end > 0:
        start = edge = max(end - _NUMBER_WINDOW, 0)
        # Widen to the left while a number might cross the window's edge (a number is not longer).
        while start > 0 and edge - start < _MAX_NUMBER_LENGTH and (text[start - 1].isdigit() or text[start - 1] in ",.-/ "):
            start -= 1
        last = None
        for last in _NUMBER.finditer(text, start, end):  # noqa: B007 (the last one is wanted)
            pass
        if last is not None:
            return last.start(), last.end(), last.group().strip()
        end = start
    return None


class UnreadableGold(ValueError):
    """A gold from which no answer can be taken (its last box is not closed)."""


def gold_answer(gold: str) -> str:
    r"""The answer a gold states, by the same rules as a response (docs/math.md, "Golds").

    A gold with boxes is its final boxes (``$$\boxed{2}, \boxed{3}$$`` is ``2, 3``; a reasoning
    trace ending in ``\boxed{004}`` is ``004``); a gold with "the answer is" is what follows;
    any other gold is itself, unwrapped. Raises ``UnreadableGold`` when its last box is not closed.
    """
    text = gold.strip()
    if "\\" in text and _BOX_START.search(text):
        boxes = _final_boxes(text)
        if boxes is None:
            raise UnreadableGold("has an unclosed \\boxed{...}: it is truncated")
        if boxes:
            return _boxed_answer(text, boxes) or ""
    if _ANSWER_PHRASE.search(text):
        answer = _answer_after_phrase(text)
        if answer:
            return unwrap_gold(answer)
    return unwrap_gold(text)


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
