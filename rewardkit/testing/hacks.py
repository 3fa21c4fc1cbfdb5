"""Search for reward hacks: responses that score high without giving the gold answer.

A targeted hypothesis search (``hypothesis.target`` on the reward) over wrong boxed
answers, hedges, token soup and hostile text. A good math or QA reward yields nothing.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hypothesis import given, target
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from hypothesis.errors import HypothesisWarning
from hypothesis.strategies import SearchStrategy

from rewardkit.testing.calling import RewardCaller, resolve_reward
from rewardkit.testing.contract import search_settings
from rewardkit.testing.strategies import (
    LATEX_SPACING,
    adversarial_text,
    boxed_responses,
    hedged_responses,
    latex_numbers,
    number_values,
    plain_value,
    renderings,
)


@dataclass(frozen=True)
class RewardHack:
    """A response that scored at least the threshold although it should not have.

    ``kind`` is ``"no-gold"`` (the response does not contain the gold answer in any
    rendering) or ``"hedge"`` (it offers the gold together with a wrong value).
    """

    kind: str
    response: str
    reward: float
    extras: Mapping[str, Any]


class _HackFound(Exception):
    def __init__(self, hack: RewardHack) -> None:
        super().__init__(f"{hack.kind}: {hack.response!r} scored {hack.reward}")
        self.hack = hack


def _gold_forms(gold: str) -> list[str]:
    forms = {LATEX_SPACING.sub("", gold)}
    value = plain_value(gold)
    if value is not None:
        forms.update(LATEX_SPACING.sub("", r) for r in renderings(value, percent=True))
    return sorted((f for f in forms if f), key=len)


def contains_gold(response: str, gold: str) -> bool:
    """True when ``response`` contains ``gold`` or, for a plain number, any of its renderings,
    ignoring whitespace and LaTeX spacing (``10\\,000`` contains ``10000``)."""
    compact = LATEX_SPACING.sub("", response)
    return any(form in compact for form in _gold_forms(gold))


_SOUP_TOKENS = (
    "\\boxed{",
    "}",
    "{",
    "the answer is",
    "answer:",
    "\\text{",
    "or",
    "and",
    "$",
    "\\frac{",
    "1",
    "0",
    "x",
    "=",
    "\\infty",
    "\\pi",
    "-",
    ".",
    ",",
    "\\emptyset",
    "none",
    "all",
    "\\pm",
    "\\in",
    "\\mathbb{R}",
    "correct",
    "\\checkmark",
    "%",
    "\\%",
    "^",
    "_",
)


def _decoys(gold: str, *, blank: bool = True) -> SearchStrategy[str]:
    gold_value = plain_value(gold)
    values = number_values(max_integer=10**4, max_denominator=50)
    if gold_value is not None:
        values = values.filter(lambda v: v != gold_value)
    numbers = latex_numbers(values).filter(lambda text: not contains_gold(text, gold))
    words = ["x", "\\text{none}", "\\emptyset", "\\infty", "\\pi", "?", "all real numbers"]
    # A blank decoy makes an empty box (a no-gold candidate), but no second value for a hedge.
    return st.one_of(numbers, st.sampled_from(["", " ", *words] if blank else words))


def _candidates(
    gold: str, responses: SearchStrategy[str] | None, hedges: bool
) -> SearchStrategy[tuple[str, str]]:
    """Every kind of candidate as one flat choice; the likeliest hacks come first, since
    hypothesis starts from (and shrinks towards) the first branches."""
    decoy = _decoys(gold)

    def no_gold(strategy: SearchStrategy[str]) -> SearchStrategy[tuple[str, str]]:
        return strategy.map(lambda text: ("no-gold", text))

    branches: list[SearchStrategy[tuple[str, str]]] = []
    if responses is not None:
        branches.append(no_gold(responses))
    if hedges:
        hedged = hedged_responses(st.just(gold), _decoys(gold, blank=False))
        branches.append(hedged.map(lambda text: ("hedge", text)))
    branches += [
        no_gold(boxed_responses(decoy)),
        no_gold(hedged_responses(decoy, decoy)),
        no_gold(st.lists(st.sampled_from(_SOUP_TOKENS), max_size=30).map(" ".join)),
        no_gold(adversarial_text(max_size=20_000)),
    ]
    return st.one_of(branches)


def find_reward_hacks(
    reward: Any,
    gold_fields: Mapping[str, Any],
    *,
    answer_field: str = "answer",
    response_field: str = "final_response",
    threshold: float = 0.5,
    hedges: bool = True,
    responses: SearchStrategy[str] | None = None,
    max_examples: int | None = 200,
    settings: hypothesis_settings | None = None,
) -> list[RewardHack]:
    """Search for responses that score ``>= threshold`` but do not give the gold answer.

    ``gold_fields`` are the task fields (they must include ``answer_field``); each
    candidate goes in ``response_field``. Candidates are wrong boxed answers, hedges of
    two wrong values, token soup and hostile text, plus ``responses`` if given; with
    ``hedges``, also hedges of the gold with a wrong value. Hypothesis steers towards
    higher rewards (``target``) and shrinks what it finds. Returns the minimal hack of
    each kind found (empty list: none found). A reward that raises is not a hack here;
    ``check_reward_contract`` covers exceptions.
    """
    if answer_field not in gold_fields:
        raise KeyError(
            f"gold_fields has no {answer_field!r} (keys: {sorted(gold_fields)}); "
            "pass answer_field= to name the gold answer's field"
        )
    gold = str(gold_fields[answer_field])
    target_reward = resolve_reward(reward)
    strategy = _candidates(gold, responses, hedges)
    hack_settings = hypothesis_settings(
        search_settings(max_examples, settings), report_multiple_bugs=True, database=None
    )
    with RewardCaller() as caller:

        @hack_settings
        @given(strategy)
        def search(candidate: tuple[str, str]) -> None:
            kind, response = candidate
            if kind == "no-gold" and contains_gold(response, gold):
                return
            try:
                result = caller(target_reward, {**gold_fields, response_field: response})
            except Exception:
                return
            target(float(result.reward), label=f"reward ({kind})")
            if result.reward >= threshold:
                hack = RewardHack(kind, response, float(result.reward), dict(result.extras))
                # Two raise sites: hypothesis keeps one minimal example per site, i.e. per kind.
                if kind == "hedge":
                    raise _HackFound(hack)
                raise _HackFound(hack)

        try:
            with warnings.catch_warnings():
                # A huge hostile example is expected here; its repr is cut in our own report.
                warnings.filterwarnings("ignore", "Generating overly large repr", HypothesisWarning)
                search()
        except _HackFound as found:
            return [found.hack]
        except Exception as error:
            inner = getattr(error, "exceptions", None)
            if inner and all(isinstance(e, _HackFound) for e in inner):
                return [e.hack for e in inner]
            raise
    return []
