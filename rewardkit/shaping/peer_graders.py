"""Correctness as open-r1 and TRL decide it, for the shaping rewards that claim their behaviour.

Both grade with ``math_verify`` (Hugging Face's ``math-verify`` package, installed separately:
``pip install math-verify``), each with its own parsing configuration, read from their sources
(open-r1's ``len_reward``/``get_cosine_scaled_reward``, TRL 1.16's ``accuracy_reward``):

* open-r1: the gold parsed as LaTeX (first match); the completion parsed with boxed answers first
  and no match without an anchor; ``verify(completion, gold)``.
* TRL: the gold parsed with math_verify's defaults; the completion as open-r1 but normalising
  units only; ``verify(gold, completion)``.

A gold that does not parse gives ``None``: each caller says what that scores. open-r1 parses the
gold as LaTeX only, so a plain ``42`` does not parse (``$42$`` or ``\\boxed{42}`` does). math_verify bounds
parsing and verification with ``signal.alarm``, which only the main thread may use: off the main
thread those bounds are off (as TRL does), and the adapter's ``timeout`` with
``execution="process"`` is what bounds a runaway expression.
"""

from __future__ import annotations

import functools
import threading
from typing import Any, Literal

PeerGrader = Literal["open-r1", "trl"]

INSTALL_HINT = "pip install math-verify"


def _math_verify() -> Any:
    try:
        import math_verify
    except ImportError as exc:  # an optional dependency: say how to get it
        raise ImportError(
            f"open-r1's and TRL's grading use the math-verify package, which is not installed: {INSTALL_HINT}"
        ) from exc
    return math_verify


@functools.cache
def _completion_config(grader: PeerGrader) -> list[Any]:
    """The completion's extraction configuration (built once: latex2sympy prints a deprecation
    notice for open-r1's ``equations=True`` each time one is built)."""
    from latex2sympy2_extended import NormalizationConfig

    math_verify = _math_verify()

    if grader == "open-r1":
        normalization = NormalizationConfig(
            nits=False,
            malformed_operators=False,
            basic_latex=True,
            equations=True,
            boxed=True,  # type: ignore[arg-type]  # open-r1 passes True, not "all"
            units=True,
        )
    else:
        normalization = NormalizationConfig(units=True)
    return [
        math_verify.LatexExtractionConfig(
            normalization_config=normalization,
            boxed_match_priority=0,
            try_extract_without_anchor=False,
        )
    ]


def peer_correct(completion: str, gold: str, grader: PeerGrader) -> bool | None:
    """Whether ``completion`` answers ``gold`` as ``grader`` (open-r1 or TRL) decides it;
    ``None`` when the gold does not parse."""
    math_verify = _math_verify()
    main = threading.current_thread() is threading.main_thread()
    if grader == "open-r1":
        parsing, verifying = (5, 5) if main else (None, None)
        gold_config = [math_verify.LatexExtractionConfig()]
        parsed_gold = math_verify.parse(
            gold,
            extraction_config=gold_config,
            extraction_mode="first_match",
            parsing_timeout=parsing,
        )
    elif grader == "trl":
        parsing, verifying = (10, 5) if main else (None, None)
        parsed_gold = math_verify.parse(gold, parsing_timeout=parsing)
    else:
        raise ValueError(f"grader must be 'open-r1' or 'trl', got {grader!r}")
    if not parsed_gold:
        return None
    parsed = math_verify.parse(
        completion,
        extraction_config=_completion_config(grader),
        extraction_mode="first_match",
        parsing_timeout=parsing,
    )
    if grader == "open-r1":
        return bool(math_verify.verify(parsed, parsed_gold, timeout_seconds=verifying))
    return bool(math_verify.verify(parsed_gold, parsed, timeout_seconds=verifying))
