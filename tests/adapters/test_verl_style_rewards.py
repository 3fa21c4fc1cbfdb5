"""Rewards written the verl/TinyZero/search-r1 way (``return score if ok else format_score``, with
``score=1.0``/``score: float = 1.0`` parameters) adapt as written: a number parameter (annotated,
or with a number default) or a ``-> float`` return settles the result schema (issue 32.4)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Optional

import pytest
import verl_style_rewards as ported
from adapter_testing import require_module

from rewardkit import reward
from rewardkit.adapters import to_agentfly, to_openrlhf, to_trl, to_verl
from rewardkit.runtime.define.errors import RewardShapeError
from rewardkit.schema import ResultSchemaError, result_schema

HERE = Path(__file__).resolve().parent
VERL_NAMES = {"solution_str": "solution_str", "ground_truth": "ground_truth"}

MULTIPLY = [  # (solution_str, ground_truth): a sample the reward fails on first
    (None, "42"),
    ("User: 6*7? Assistant: <answer>42</answer>", "42"),
    ("User: 6*7? Assistant: <answer>41</answer>", "42"),
    ("User: 6*7? Assistant: no answer tag", "42"),
]
COUNTDOWN = [
    (None, {"target": 24, "numbers": [2, 3, 4]}),
    ("Assistant: <answer>(2 + 4) * 4</answer>", {"target": 24, "numbers": [2, 4, 4]}),
    ("Assistant: <answer>2 * 3 * 4</answer>", {"target": 25, "numbers": [2, 3, 4]}),
    ("Assistant: <answer>2 * 3 * 5</answer>", {"target": 24, "numbers": [2, 3, 4]}),
    ("Assistant: <answer>2 * (3 +</answer>", {"target": 24, "numbers": [2, 3]}),
    ("Assistant: nothing", {"target": 24, "numbers": [2, 3, 4]}),
]
SEARCH = [
    (None, {"target": ["Paris"]}),
    ("<answer>x</answer> ... <answer>The Paris</answer>", {"target": ["paris"]}),
    ("<answer>x</answer> ... <answer>Paris, France</answer>", {"target": ["paris"]}),
    ("<answer>x</answer> ... <answer>Lyon</answer>", {"target": ["paris"]}),
    ("only <answer>Paris</answer>", {"target": ["paris"]}),
]
GSM8K = [
    (None, "72"),
    ("so #### 72", "72"),
    ("so #### 7", "72"),
    ("72", "72"),
    ("#### 1,000", "1000"),
]

CASES = {
    "multiply": (ported.multiply_score, MULTIPLY),
    "countdown": (ported.countdown_score, COUNTDOWN),
    "search_r1_em": (ported.compute_score_em, SEARCH),
    "search_r1_subem": (ported.compute_score_subem, SEARCH),
    "annotated_em": (ported.annotated_em, SEARCH),
    "decorated": (ported.decorated, MULTIPLY),
}


def _original(function: Any, solution_str: Any, ground_truth: Any) -> tuple[float, str]:
    target = getattr(function, "__wrapped__", function)
    try:
        return float(target(solution_str, ground_truth)), ""
    except Exception as exc:  # the adapter's fallback and error text
        return 0.0, f"{type(exc).__name__}: {exc}"


@pytest.mark.parametrize("case", sorted(CASES))
def test_ported_rewards_adapt_as_written_and_score_like_the_original(case: str) -> None:
    function, rows = CASES[case]
    compute_score = to_verl(
        function if hasattr(function, "__wrapped__") else reward(function, auto_register=False),
        field_map=VERL_NAMES,
    )
    assert compute_score.schema.keys == ()
    got = [
        compute_score(data_source="d", solution_str=s, ground_truth=g, extra_info={})
        for s, g in rows
    ]
    expected = [_original(function, s, g) for s, g in rows]
    assert [(row["score"], bool(row["error"])) for row in got] == [
        (score, bool(error)) for score, error in expected
    ]
    assert got[0]["error"].startswith(
        ("TypeError", "AdapterInputError")
    )  # the failing sample first
    assert {0.0, 1.0} <= {score for score, _ in expected}  # `return 0` and `return score` both met


def test_verls_installed_gsm8k_through_every_adapter() -> None:
    """verl's gsm8k wrapped as is (verl's argument names) and called from a port with rewardkit's."""
    file = require_module(
        "verl_style_reward_file", "the frameworks extra installs verl, whose gsm8k it wraps"
    )
    expected = [_original(file.gsm8k.compute_score, s, g)[0] for s, g in GSM8K]
    assert expected == [0.0, 1.0, 0.0, 0.0, 1.0]
    as_installed = reward(
        file.gsm8k.compute_score, name="verl_gsm8k_as_installed", auto_register=False
    )

    verl = to_verl(as_installed, field_map=VERL_NAMES)
    rows = [verl(data_source="gsm8k", solution_str=s, ground_truth=g) for s, g in GSM8K]
    assert [row["score"] for row in rows] == expected
    assert rows[0]["error"]
    assert file.compute_score(data_source="gsm8k", solution_str="#### 3", ground_truth="3") == {
        "score": 1.0,
        "error": "",
    }

    port = file.gsm8k_reward
    trl = to_trl(port)
    assert (
        trl(prompts=["q"] * 5, completions=[s for s, _ in GSM8K], answer=[g for _, g in GSM8K])
        == expected
    )

    openrlhf = to_openrlhf(port, return_tensors=False)
    texts = [f"Q: {s}" for s, _ in GSM8K[1:]]
    assert (
        openrlhf(texts, ["Q: "] * len(texts), [g for _, g in GSM8K[1:]])["rewards"] == expected[1:]
    )

    agentfly = to_agentfly(port)
    results = [
        asyncio.run(agentfly(final_response=s, trajectory=[], id="t", answer=g)) for s, g in GSM8K
    ]
    assert [row["reward"] for row in results] == expected
    assert results[0]["error"]
    assert not results[1]["error"]
    assert all(adapter.schema.keys == () for adapter in (verl, trl, openrlhf, agentfly))


def test_verls_gsm8k_in_verls_own_naive_manager(verl: Any) -> None:
    """verl loads the file by path and its naive manager scores a DataProto, a failing row first."""
    from test_verl_managers import make_batch, scores_at_last_token, verl_config
    from tiny_models import word_tokenizer
    from verl.trainer.ppo.reward import get_custom_reward_fn
    from verl.workers.reward_manager import get_reward_manager_cls

    rows = [
        ("q one", "", "72"),
        ("q two", "so #### 72", "72"),
        ("q three", "so #### 7", "72"),
        ("q four", "#### 1,000", "1000"),
    ]
    tokenizer = word_tokenizer(word for row in rows for text in row for word in text.split())
    config = verl_config("naive", path=HERE / "verl_style_reward_file.py")
    manager = get_reward_manager_cls("naive")(
        tokenizer=tokenizer, num_examine=0, compute_score=get_custom_reward_fn(config)
    )
    data = make_batch(verl, tokenizer, rows)
    output = manager(data, return_dict=True)
    assert scores_at_last_token(output["reward_tensor"], data) == [0.0, 1.0, 0.0, 1.0]
    assert sorted(output["reward_extra_info"]) == ["error", "score"]


def test_a_number_annotation_on_the_return_settles_what_cannot_be_read() -> None:
    helper: Any = None

    def judged(final_response: str) -> float:
        return helper.score(final_response)

    def optional(final_response: str) -> Optional[float]:  # noqa: UP045  (the typing spelling, read too)
        return helper.score(final_response)

    assert result_schema(judged).keys == ()
    assert result_schema(optional).keys == ()


def test_a_parameter_without_a_number_annotation_or_default_is_named_in_the_error() -> None:
    with pytest.raises(ResultSchemaError) as raised:
        to_verl(reward(ported.returns_a_parameter, auto_register=False), field_map=VERL_NAMES)
    message = str(raised.value)
    assert "the parameter `bonus`" in message
    assert "`bonus: float`" in message
    assert "`-> float`" in message
    assert "verl_style_rewards.py" in message


def test_verls_math_reward_adapts_and_math_dapos_score_key_says_how_to_wrap_it() -> None:
    math_reward = require_module(
        "verl.utils.reward_score.math_reward", "the frameworks extra installs verl"
    )
    math_dapo = require_module(
        "verl.utils.reward_score.math_dapo", "the frameworks extra installs verl"
    )
    compute_score = to_verl(
        reward(math_reward.compute_score, name="verl_math", auto_register=False),
        field_map=VERL_NAMES,
    )
    rows = [(None, "2"), (r"so \boxed{2}", "2"), (r"so \boxed{3}", "2")]
    assert [
        compute_score(data_source="math", solution_str=s, ground_truth=g)["score"] for s, g in rows
    ] == [0.0, 1.0, 0.0]
    with pytest.raises(RewardShapeError, match=r"return \{'reward': result\['score'\], \.\.\.\}"):
        to_verl(
            reward(math_dapo.compute_score, name="verl_math_dapo", auto_register=False),
            field_map=VERL_NAMES,
        )
