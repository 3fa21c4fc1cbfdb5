"""Golden pairs from tests/math/pairs/*.toml: each pair labelled with the rule that must decide it,
checked with the sandbox and in-process (``sandbox=False``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from rewardkit.math import FailureTag, compare_answers, grade

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the project supports 3.10 through tomli
    import tomli as tomllib

PAIRS_DIR = Path(__file__).parent / "pairs"


def _load_pairs() -> list[Any]:
    params = []
    for path in sorted(PAIRS_DIR.glob("*.toml")):
        document = tomllib.loads(path.read_text(encoding="utf-8"))
        given_is = document["given_is"]
        for index, pair in enumerate(document["pair"], 1):
            label = f"{path.stem}-{index}-{pair['rule']}-{pair['policy']}"
            params.append(pytest.param(given_is, pair, id=label))
    return params


@pytest.mark.parametrize(("given_is", "pair"), _load_pairs())
@pytest.mark.parametrize("sandbox", [True, False], ids=["sandbox", "in-process"])
def test_pair(given_is: str, pair: dict[str, Any], sandbox: bool) -> None:
    options = {"policy": pair["policy"], "sandbox": sandbox}
    if given_is == "response":
        response = "x" * pair.get("pad", 0) + pair["given"]  # pad: reasoning before the response's end
        verdict = grade(response, pair["gold"], extract=pair.get("extract", "boxed"), **options)
    else:
        verdict = compare_answers(pair["given"], pair["gold"], **options)
    assert (verdict.correct, verdict.reason) == (pair["equivalent"], pair["rule"]), dict(verdict.detail)
    if pair["equivalent"]:
        assert verdict.tag is None
    elif pair["rule"] == "no_answer":
        assert verdict.tag is FailureTag.NO_ANSWER
    elif pair["rule"] in ("bad_gold", "crash"):
        assert verdict.tag is FailureTag.HARNESS_ERROR
        # The gold as written (issue 26 item 9): no Python repr, no doubled backslashes.
        assert f"gold '{pair['gold']}'" in verdict.detail["error"]
    else:
        assert verdict.tag is FailureTag.WRONG_ANSWER


def test_every_pairs_file_has_pairs_for_both_policies() -> None:
    policies = set()
    for path in PAIRS_DIR.glob("*.toml"):
        policies |= {pair["policy"] for pair in tomllib.loads(path.read_text(encoding="utf-8"))["pair"]}
    assert policies == {"lenient", "strict"}
