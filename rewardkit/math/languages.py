"""Responses in other languages: final-answer phrases, the end of an answer, full-width characters.

The languages of common math data sets: Chinese, Japanese, Korean, French, German, Spanish,
Russian, Arabic (English is ``extraction._ANSWER_PHRASE``). "答案是 220。", "la réponse est 220 €",
"Ответ: 220." and "답은 220입니다." all answer 220.
"""

from __future__ import annotations

import re

#: Full-width ASCII (U+FF01-U+FF5E) as ASCII, the ideographic space and CJK punctuation as theirs:
#: "２２０" is 220, "。" ends a sentence. One character for one, so positions are kept.
HALF_WIDTH = str.maketrans(
    {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}
    | {0x3000: " ", 0x3002: ".", 0x3001: ",", 0xFF61: "."}
)

# Each phrase ends where the answer starts (its colon or verb included).
_PHRASES = (
    r"(?:最终|最後的|所以|因此|故)?答案\s*(?:应该|應該)?\s*(?:是|为|為|:)",  # Chinese
    r"答\s*:",
    r"(?:最終的な)?(?:答え|解答|答)\s*(?:は|:)",  # Japanese
    r"(?:최종\s*)?(?:정답|답)\s*(?:은|는|:)",  # Korean
    r"(?:la\s+)?r[ée]ponse\s+(?:finale\s+)?(?:est|:)|r[ée]ponse\s+(?:finale\s*)?:",  # French
    r"(?:die\s+)?(?:endg[üu]ltige\s+)?antwort\s+(?:ist|lautet|:)|antwort\s*:",  # German
    r"(?:la\s+)?respuesta\s+(?:final\s+)?(?:es|:)|respuesta\s*:",  # Spanish
    r"(?:окончательный\s+)?ответ\s*(?::|—|-|равен|будет)",  # Russian
    r"(?:الإجابة|الاجابة|الجواب)\s*(?:النهائية\s*|النهائي\s*)?(?:هي|هو|:)",  # Arabic
)
ANSWER_PHRASE = re.compile(r"(?:" + "|".join(_PHRASES) + r")\s*:?\s*", re.IGNORECASE)
# Cheap substring tests before the phrase search over a long response.
_MARKERS = (
    "答",
    "解答",
    "답",
    "ponse",
    "PONSE",
    "ntwort",
    "NTWORT",
    "espuesta",
    "ESPUESTA",
    "твет",
    "ТВЕТ",
    "جواب",
    "جابة",
)
#: Where an answer written in another language ends: a letter of a CJK, Hangul or Arabic script,
#: or a word of three or more letters that is no LaTeX command ("220 euros", "220 рублей").
_AFTER_ANSWER = re.compile(
    r"\s*(?:[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\u0600-\u06ff]|(?<![\\A-Za-z])[^\W\d_]{3,}).*$",
    re.DOTALL,
)


def half_width(text: str) -> str:
    """Full-width digits, letters and punctuation as ASCII ("２２０。" -> "220.")."""
    return text if text.isascii() else text.translate(HALF_WIDTH)


def last_phrase(text: str, start: int = 0) -> re.Match[str] | None:
    """The last final-answer phrase of another language in ``text``, or None."""
    if not any(marker in text for marker in _MARKERS):
        return None
    match = None
    for match in ANSWER_PHRASE.finditer(text, start):  # noqa: B007 - the last one
        pass
    return match


def answer_end(line: str) -> str:
    """The answer at the start of ``line``, without the words that follow it in another language."""
    return _AFTER_ANSWER.sub("", line).strip()
