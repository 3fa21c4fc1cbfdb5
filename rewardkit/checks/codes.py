"""The diagnostic codes, at the bottom of the layering: configuration validates ``select`` and
``ignore`` against them without importing the rules (which import the configuration's types)."""

from __future__ import annotations

from collections.abc import Iterable

RULE_CODES: tuple[str, ...] = (
    "RK101",
    "RK102",
    "RK103",
    "RK104",
    "RK201",
    "RK202",
    "RK203",
    "RK204",
    "RK205",
    "RK206",
    "RK301",
    "RK302",
    "RK303",
    "RK401",
    "RK402",
    "RK501",
    "RK502",
    "RK503",
    "RK504",
    "RK505",
    "RK506",
    "RK900",
    "RK901",
    "RK902",
)
"""Every code a rule reports, in order (a test keeps it equal to the codes of ``RULES``)."""


def unknown_code_prefixes(prefixes: Iterable[str]) -> list[str]:
    """The ``select``/``ignore`` prefixes no rule code starts with (a typo such as ``RK2010``)."""
    return [
        prefix for prefix in prefixes if not any(code.startswith(prefix) for code in RULE_CODES)
    ]
