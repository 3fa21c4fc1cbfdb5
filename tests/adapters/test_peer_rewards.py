"""The built-ins against the originals shipped on PyPI, on the same inputs (at least 50 each,
edge cases included), through the adapters: TRL's ``trl.rewards`` (soft overlong punishment,
cosine-scaled reward, repetition penalty) through ``to_trl``; verl's DAPO overlong penalty (its
own DAPO reward manager) and its ``reward_score.gsm8k`` through ``to_verl``. open-r1 (not on
PyPI): ``open_r1_len_reward`` and ``CosineScaledReward.open_r1()`` against its formulas, worked
by hand, and in TRL's real ``GRPOTrainer`` (docs/adapters.md lists every remaining difference)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from adapter_testing import require_module

from rewardkit import reward
from rewardkit.adapters import to_trl, to_verl
from rewardkit.shaping import (
    CosineScaledReward,
    SoftOverlongPunishment,
    TokenRepetitionPenalty,
    len_reward,
    len_reward_scores,
    open_r1_len_reward,
)

GOLDS = [
    "42", "-7", "0", "3.5", r"\frac{1}{3}", r"\frac{3}{4}", r"\sqrt{2}", "2\\pi", "10\\%", "1000",
    r"\{1, 2\}", "(0, 1]", "x = 2", "5 \\text{ cm}", r"\infty", "1,000", "no answer here", "", "a+b", "e^{2}",
]  # fmt: skip
"""Golds a dataset holds: integers, decimals, fractions, roots, percent, sets, intervals,
equations, units, infinity, thousands separators, text that does not parse, an empty one."""


def completions_for(gold: str) -> list[str]:
    """Three completions per gold: the boxed gold, a wrong boxed answer, no boxed answer at all."""
    return [
        f"The work gives \\boxed{{{gold}}}.",
        "So the result is \\boxed{17}",
        f"I think it is {gold} but I am not sure",
    ]


CASES = [(completion, gold) for gold in GOLDS for completion in completions_for(gold)]
EXTRA = [
    ("", "42"),  # an empty completion
    (r"\boxed{42} and then \boxed{41}", "42"),  # two boxed answers: the first counts
    (r"\boxed{\frac{2}{6}}", r"\frac{1}{3}"),  # equal, not equal text
    (r"\boxed{0.3333333}", r"\frac{1}{3}"),
    (r"\boxed{42", "42"),  # malformed LaTeX
    (r"$\boxed{-7}$", "-7"),
]
CASES += EXTRA
LENGTHS = [0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 48, 49, 50, 63, 64, 65, 99, 100, 101, 200]


def test_enough_cases() -> None:
    assert len(CASES) >= 60
    assert len(LENGTHS) * 3 >= 60


# -- TRL: trl.rewards ---------------------------------------------------------------------------


@pytest.mark.parametrize(("max_len", "cache"), [(64, 16), (100, 0), (16, 16), (50, 1)])
def test_soft_overlong_punishment_equals_trls(max_len: int, cache: int) -> None:
    require_module("trl", "the frameworks extra installs TRL, whose trl.rewards is compared")
    from trl.rewards import get_soft_overlong_punishment

    ids = [[7] * length for length in LENGTHS * 3]
    theirs = get_soft_overlong_punishment(max_completion_len=max_len, soft_punish_cache=cache)(
        completion_ids=ids
    )
    ours = to_trl(SoftOverlongPunishment(max_len, cache))(
        prompts=["p"] * len(ids), completions=["c"] * len(ids), completion_ids=ids
    )
    assert ours == theirs
    assert len(ids) >= 50


def token_ids(index: int) -> list[int]:
    """Token ids of varied lengths and repetition: none, some, all repeated; short ones too."""
    length = LENGTHS[index % len(LENGTHS)] * (1 + index % 3)
    period = 1 + index % 5
    return [(position % period) + (index % 2) * position for position in range(length)]


@pytest.mark.parametrize(("ngram_size", "max_penalty"), [(3, -1.0), (1, -0.5), (2, -2.0)])
def test_token_repetition_penalty_equals_trls(ngram_size: int, max_penalty: float) -> None:
    require_module("trl", "the frameworks extra installs TRL, whose trl.rewards is compared")
    from trl.rewards import get_repetition_penalty_reward

    ids = [token_ids(index) for index in range(66)]
    theirs = get_repetition_penalty_reward(ngram_size=ngram_size, max_penalty=max_penalty)(
        completion_ids=ids
    )
    adapter = to_trl(TokenRepetitionPenalty(ngram_size, max_penalty))
    ours = adapter(prompts=["p"] * len(ids), completions=["c"] * len(ids), completion_ids=ids)
    assert ours == theirs
    assert len({value for value in theirs}) > 5  # not all 0.0


def trl_call(cases: list[tuple[str, str]]) -> dict[str, Any]:
    """TRL's reward-function arguments for ``cases`` (conversational completions, token ids)."""
    return {
        "prompts": [[{"role": "user", "content": "solve"}]] * len(cases),
        "completions": [[{"role": "assistant", "content": completion}] for completion, _ in cases],
        "solution": [gold for _, gold in cases],
        "completion_ids": [
            list(range(LENGTHS[index % len(LENGTHS)])) for index in range(len(cases))
        ],
    }


@pytest.mark.parametrize("max_len", [50, 100])
def test_cosine_scaled_reward_trl_equals_trls(max_len: int) -> None:
    require_module("trl", "the frameworks extra installs TRL, whose trl.rewards is compared")
    require_module("math_verify", "the test extra installs math-verify, TRL's grader")
    from trl.rewards import accuracy_reward, get_cosine_scaled_reward

    call = trl_call(CASES)
    theirs = get_cosine_scaled_reward(max_len=max_len)(**call)
    adapter = to_trl(CosineScaledReward.trl(max_len), field_map={"solution": "answer"})
    ours = adapter(**call)
    assert ours == theirs
    accuracy = accuracy_reward(call["completions"], call["solution"])
    assert None in theirs  # golds that do not parse: TRL's None, the adapter's "not applicable"
    assert {0.0, 1.0} <= set(accuracy)
    assert adapter.stats.failures == 0


def test_cosine_scaled_reward_open_r1_worked_examples() -> None:
    require_module("math_verify", "the test extra installs math-verify, open-r1's grader")
    reward = CosineScaledReward.open_r1(max_len=100)
    adapter = to_trl(reward, field_map={"solution": "answer"})
    short, long_right = r"\boxed{42}", r"\boxed{42}" + " " * 190  # 10 and 200 characters
    solution = [
        "$42$",
        "$42$",
        "$42$",
        "42",
    ]  # open-r1 parses golds as LaTeX: a plain 42 does not parse
    values = adapter(
        prompts=["q"] * 4,
        completions=[short, long_right, r"\boxed{41}", r"\boxed{42}"],
        solution=solution,
    )
    # correct: 0.5 + 0.25 (1 + cos(pi L / 100)); 200 chars, uncapped: cos(2 pi) = 1, the maximum again
    assert values[0] == pytest.approx(0.5 + 0.25 * (1 + math.cos(math.pi * 0.1)))
    assert values[1] == pytest.approx(1.0)
    assert values[2] == pytest.approx(
        -0.5 - 0.25 * (1 + math.cos(math.pi * 0.1))
    )  # wrong, 10 chars
    assert values[3] == 1.0  # a gold that does not parse: open-r1 scores it 1.0
    capped = to_trl(
        CosineScaledReward(max_len=100, grader="open-r1"), field_map={"solution": "answer"}
    )
    assert capped(prompts=["q"], completions=[long_right], solution=["$42$"]) == [
        pytest.approx(0.5)
    ]
    builtin = to_trl(CosineScaledReward(max_len=100), field_map={"solution": "answer"})
    assert (
        builtin(prompts=["q"], completions=[short], solution=["42"]) == values[:1]
    )  # rewardkit grades "42"


# -- open-r1's len_reward: over TRL's whole call, against len_reward per prompt group --------------


def test_open_r1_len_reward_ranks_the_whole_call_worked_example() -> None:
    require_module("math_verify", "the test extra installs math-verify, open-r1's grader")
    prompts = ["p", "p", "q", "q"]
    completions = [r"\boxed{4}", r"\boxed{4} " + "x" * 20, r"\boxed{9}" + "y" * 40, r"\boxed{8}"]
    solution = ["$4$", "$4$", "$9$", "$9$"]
    lengths = [len(text) for text in completions]  # 9, 30, 49, 9
    assert lengths == [9, 30, 49, 9]
    whole = to_trl(open_r1_len_reward, field_map={"solution": "answer"})
    # one ranking over all four: min 9, max 49; correct: 0.5 - (L - 9) / 40; wrong: min(0, that)
    assert whole(prompts=prompts, completions=completions, solution=solution) == pytest.approx(
        [0.5, -0.025, -0.5, 0.0]
    )
    grouped = to_trl(len_reward, field_map={"solution": "answer"}, group_size=2)
    # per prompt group: (9, 30) then (49, 9): correct 0.5 - (L - min) / (max - min), wrong min(0, that)
    assert grouped(prompts=prompts, completions=completions, solution=solution) == [
        0.5,
        -0.5,
        -0.5,
        0.0,
    ]
    # open-r1's own gold parsing: a plain "9" does not parse, so the wrong \boxed{8} counts as correct
    plain = whole(prompts=prompts, completions=completions, solution=["$4$", "$4$", "9", "9"])
    assert plain == pytest.approx([0.5, -0.025, -0.5, 0.5])


def test_grpo_trainer_open_r1_len_reward_against_len_reward(tmp_path: Path) -> None:
    """TRL's real GRPOTrainer, 2 prompts of 2 completions per call: ``open_r1_len_reward`` ranks
    the 4 completions together (as open-r1), ``len_reward`` each prompt's 2; the first call of a
    third adapter fails (a failing sample first) without touching the others."""
    trl = require_module("trl", "the frameworks extra installs TRL, whose GRPOTrainer is run here")
    datasets = require_module("datasets", "TRL's trainer takes a datasets.Dataset")
    require_module("math_verify", "the test extra installs math-verify, open-r1's grader")
    from tiny_models import tiny_llama, two_step_grpo_config, word_tokenizer

    from rewardkit.shaping.length import graded_correct
    from rewardkit.shaping.peer_graders import peer_correct

    calls: list[tuple[list[str], list[str], list[float | None], list[float | None]]] = []
    seen: list[int] = []

    @reward(name="records_then_fails_first", auto_register=False)
    def failing_first(final_response: str) -> float:
        seen.append(1)
        if len(seen) == 1:
            raise RuntimeError("first sample fails")
        return 0.0

    whole = to_trl(open_r1_len_reward, field_map={"solution": "answer"})
    grouped = to_trl(len_reward, field_map={"solution": "answer"})

    def both(prompts: Any, completions: Any, **kwargs: Any) -> list[float | None]:
        scores = whole(prompts, completions, **kwargs), grouped(prompts, completions, **kwargs)
        calls.append((list(completions), list(kwargs["solution"]), *scores))
        return scores[0]

    both.__name__ = "open_r1_len"
    prompts = [("what is 6 times 7", "42"), ("what is 2 plus 2", "4")]
    tokenizer = word_tokenizer(
        {word for prompt, answer in prompts for word in f"{prompt} {answer} boxed".split()}
    )
    dataset = datasets.Dataset.from_list(
        [{"prompt": prompt, "solution": answer} for prompt, answer in prompts]
    )
    trainer = trl.GRPOTrainer(
        model=tiny_llama(tokenizer),
        reward_funcs=[to_trl(failing_first), both],
        args=two_step_grpo_config(str(tmp_path)),
        train_dataset=dataset,
        processing_class=tokenizer,
    )
    trainer.train()
    assert trainer.state.global_step == 2
    assert len(calls) == 2
    for completions, solutions, by_call, by_group in calls:
        lengths = [len(text) for text in completions]
        opened = [peer_correct(text, gold, "open-r1") for text, gold in zip(completions, solutions)]
        graded = [graded_correct(text, gold) for text, gold in zip(completions, solutions)]
        assert by_call == len_reward_scores(lengths, [value is not False for value in opened])
        assert by_group == (
            len_reward_scores(lengths[:2], [value is not False for value in graded[:2]])
            + len_reward_scores(lengths[2:], [value is not False for value in graded[2:]])
        )
    assert any(by_call != by_group for _, _, by_call, by_group in calls)


# -- verl: its DAPO manager's overlong penalty and reward_score.gsm8k ------------------------------


@reward(name="peer_zero", auto_register=False)
def zero(final_response: str) -> float:
    """0.0 for every response: under verl's DAPO manager the reward is then its overlong penalty."""
    return 0.0


def test_dapo_overlong_penalty_equals_verls_dapo_manager(verl: Any) -> None:
    """verl's own DAPO manager (``overlong_buffer``) against ``SoftOverlongPunishment`` in
    rewardkit's classic verl manager (which passes ``completion_length``), on 60 responses."""
    from types import SimpleNamespace

    from test_verl_managers import make_batch, scores_at_last_token
    from tiny_models import word_tokenizer
    from verl.workers.reward_manager import get_reward_manager_cls

    import rewardkit.adapters.verl_managers  # noqa: F401  (registers "rewardkit" with verl)

    rows = [(f"question {index}", " ".join(["w"] * (1 + index)), "42") for index in range(60)]
    tokenizer = word_tokenizer(["question", "w", "42", *map(str, range(60))])
    data = make_batch(verl, tokenizer, rows)
    max_resp_len = data.batch["responses"].shape[-1]  # verl's responses never exceed it
    buffer = SimpleNamespace(enable=True, len=24, penalty_factor=1.0, log=False)
    theirs = get_reward_manager_cls("dapo")(
        tokenizer=tokenizer,
        num_examine=0,
        compute_score=to_verl(zero),
        max_resp_len=max_resp_len,
        overlong_buffer_cfg=buffer,
    )(data, return_dict=True)
    ours = get_reward_manager_cls("rewardkit")(
        tokenizer=tokenizer,
        num_examine=0,
        compute_score=to_verl(SoftOverlongPunishment(max_resp_len, 24)),
    )(data, return_dict=True)
    expected = scores_at_last_token(theirs["reward_tensor"], data)
    assert scores_at_last_token(ours["reward_tensor"], data) == pytest.approx(expected, abs=1e-6)
    assert min(expected) < -0.9
    assert expected.count(0.0) > 10


def gsm8k_cases() -> list[tuple[Any, str]]:
    """66 GSM8K responses: strict and missing ``####`` lines, commas, decimals, negatives, dollar
    signs, long responses (verl clips to the last 300 characters), a failing one (None) first."""
    cases: list[tuple[Any, str]] = [(None, "72")]
    for gold in ("72", "1000", "-3", "0.5", "18"):
        cases += [
            (f"so #### {gold}", gold),
            (f"#### {gold}.", gold),
            (f"the answer is {gold}", gold),
            (f"#### {gold} and #### 5", gold),
            ("#### 1,000", gold),
            (f"#### ${gold}", gold),
            ("x" * 400 + f" #### {gold}", gold),
            (f"#### {gold}" + " y" * 200, gold),
            (f"####{gold}", gold),
            (f"#### {gold}\n", gold),
            ("", gold),
            (f"#### -{gold}", gold),
            (f"#### {gold}0", gold),
        ]
    return cases


def test_verls_gsm8k_through_to_verl_equals_the_original() -> None:
    gsm8k = require_module("verl.utils.reward_score.gsm8k", "the frameworks extra installs verl")
    from rewardkit import reward as as_reward

    cases = gsm8k_cases()
    assert len(cases) >= 60
    for options in ({}, {"method": "flexible", "format_score": 0.1, "score": 2.0}):
        compute_score = to_verl(
            as_reward(gsm8k.compute_score, name="verl_gsm8k_peer", auto_register=False),
            field_map={"solution_str": "solution_str", "ground_truth": "ground_truth"},
        )
        ours = [
            compute_score(data_source="openai/gsm8k", solution_str=s, ground_truth=g, **options)
            for s, g in cases
        ]
        assert ours[0]["error"].startswith("AdapterInputError")  # the failing sample first
        theirs = [gsm8k.compute_score(s, g, **options) for s, g in cases[1:]]
        assert [row["score"] for row in ours[1:]] == [float(value) for value in theirs]
        assert len(set(theirs)) >= 2


TRL_ACCURACY_DIFFERENCES = {
    # golds TRL's accuracy_reward does not parse (None: "skip"); math_reward grades them
    **{
        (gold, kind): "TRL None"
        for gold in (r"\sqrt{2}", r"\infty", "no answer here", "a+b", "e^{2}", "")
        for kind in range(3)
    },
    # right by math_reward, wrong by TRL's math_verify configuration
    **{(gold, 0): "TRL 0.0" for gold in ("2\\pi", "10\\%", r"\{1, 2\}", "(0, 1]")},
    # math_verify rounds to 6 digits; rewardkit's grader does not take 0.3333333 for 1/3
    (r"\frac{1}{3}", "0.3333333"): "TRL 1.0",
}


def test_math_reward_against_trls_accuracy_reward() -> None:
    """The built-in ``math_reward`` and TRL's ``accuracy_reward`` on the same 66 completions:
    they agree but for the differences listed (documented in docs/adapters.md)."""
    require_module("trl", "the frameworks extra installs TRL, whose trl.rewards is compared")
    require_module("math_verify", "the test extra installs math-verify, TRL's grader")
    from trl.rewards import accuracy_reward

    call = trl_call(CASES)
    theirs = accuracy_reward(call["completions"], call["solution"])
    adapter = to_trl("math_reward", field_map={"solution": "answer"})
    ours = adapter(**call)
    differences = {}
    for index, ((completion, gold), mine, trl_value) in enumerate(zip(CASES, ours, theirs)):
        if mine != trl_value:
            key = (gold, "0.3333333") if "0.3333333" in completion else (gold, index % 3)
            differences[key] = "TRL None" if trl_value is None else f"TRL {trl_value}"
    assert differences == TRL_ACCURACY_DIFFERENCES
    assert len(CASES) - len(differences) == 43
    assert (
        adapter.stats.failures == 3
    )  # the empty gold: math_reward's bad_gold error, never a 0.0 "wrong"
