"""Stage 4, hedging: an answer that offers several candidates is wrong, in every policy.

Several candidates in a list (``3, 4, 5``, ``3 \\text{ or } 4``, ``\\pm 3``) against a single-valued
gold are caught where the gold decides the structure (``comparison``); this module catches the
hedging words that mark a non-committal answer (``4 \\text{ (or maybe 5)}``).
"""

from __future__ import annotations

import re

_HEDGE_WORDS = re.compile(
    r"\b(maybe|perhaps|possibly|probably|either|unsure|not sure|might|could be|or so)\b", re.IGNORECASE
)


# An alternative offered in parentheses: "4 (or 5)", "4 \\text{ (and 5)}".
_PARENTHESIZED_ALTERNATIVE = re.compile(r"\(\s*(or|and)\b", re.IGNORECASE)


def hedge_words(text: str) -> set[str]:
    """The hedging words in ``text``, lowercased (``"4 (or maybe 5)"`` -> ``{"maybe", "(or"}``)."""
    words = {word.lower() for word in _HEDGE_WORDS.findall(text)}
    return words | {"(" + word.lower() for word in _PARENTHESIZED_ALTERNATIVE.findall(text)}


def is_hedged(answer: str, gold: str) -> bool:
    """True when the answer uses a hedging word the gold does not (a gold may legitimately say "either")."""
    words = hedge_words(answer)
    return bool(words) and not words <= hedge_words(gold)
