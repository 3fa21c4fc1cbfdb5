"""TRL group rewards take the group size from the trainer (``num_generations``) or from
``group_size=``, never guessed from runs of equal prompts (issue 32.1, 37.10): a dataset that
repeats a prompt puts two of its groups side by side, and interleaved prompts are no groups at
all. Without either, only a size the prompts leave no choice about is used (a prime run length).
The adapter alone with TRL's call shapes, then TRL's real ``GRPOTrainer.train()`` (2 steps on
CPU, tiny model built here) on a dataset that repeats one prompt, a failing group first."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from adapter_testing import require_module
from tiny_models import tiny_llama, two_step_grpo_config, word_tokenizer

from rewardkit import group_reward
from rewardkit.adapters import to_trl
from rewardkit.adapters.trl import TrlReward, trainer_group_size

SIZES: list[int] = []
_FIRST = threading.Event()


def share_of_words(texts: list[str]) -> list[float]:
    """The right group reward: each completion's share of its group's words (+1 each)."""
    total = sum(1 + len(text.split()) for text in texts)
    return [(1 + len(text.split())) / total for text in texts]


@group_reward(name="trl_word_share", auto_register=False)
def word_share(final_response: list[str]) -> list[float]:  # rewardkit: ignore[RK505]
    """``share_of_words`` over the group; the first group ever scored fails (a judge warming up)."""
    SIZES.append(len(final_response))
    if not _FIRST.is_set():
        _FIRST.set()
        raise RuntimeError("judge warming up")
    return share_of_words(final_response)


class FakeTrainer:
    """What the adapter reads of TRL's trainer: ``num_generations(_eval)``, ``model.training``
    and the bound ``_log_metric``/``_log_completion_extra`` TRL passes as callbacks."""

    def __init__(
        self, num_generations: int, num_generations_eval: int | None = None, training: bool = True
    ) -> None:
        self.num_generations = num_generations
        self.num_generations_eval = num_generations_eval or num_generations
        self.model = type("Model", (), {"training": training})()
        self.metrics: dict[str, float] = {}

    def _log_metric(self, name: str, value: float) -> None:
        self.metrics[name] = value

    def _log_completion_extra(self, column: str, values: list[Any]) -> None:
        pass


def _call(
    adapter: TrlReward, prompts: list[str], trainer: FakeTrainer | None = None
) -> list[float | None]:
    callbacks = (
        {}
        if trainer is None
        else {"log_metric": trainer._log_metric, "log_extra": trainer._log_completion_extra}
    )
    return adapter(
        prompts=prompts, completions=[f"w{i} " * (i + 1) for i in range(len(prompts))], **callbacks
    )


def test_the_group_size_comes_from_the_calling_trainer() -> None:
    _FIRST.set()
    SIZES.clear()
    adapter = to_trl(word_share)
    # one prompt repeated by the dataset: two groups of 2 side by side, never one group of 4
    rewards = _call(adapter, ["p", "p", "p", "p"], FakeTrainer(num_generations=2))
    assert SIZES == [2, 2]
    assert rewards == [*share_of_words(["w0 ", "w1 " * 2]), *share_of_words(["w2 " * 3, "w3 " * 4])]
    SIZES.clear()
    _call(
        adapter, ["p"] * 6, FakeTrainer(num_generations=2, num_generations_eval=3, training=False)
    )
    assert SIZES == [3, 3]  # evaluation: num_generations_eval
    assert trainer_group_size({"log_metric": print}) is None


def test_without_a_trainer_only_a_size_the_prompts_leave_no_choice_about_is_used() -> None:
    _FIRST.set()
    SIZES.clear()
    adapter = to_trl(word_share)
    assert _call(
        adapter, ["p", "p", "q", "q"]
    ) == [  # runs of 2: groups of 2 (TRL's size is at least 2)
        *share_of_words(["w0 ", "w1 " * 2]),
        *share_of_words(["w2 " * 3, "w3 " * 4]),
    ]
    _call(
        adapter, ["p", "p", "q", "q", "q", "q", "r", "r"]
    )  # a run of 4 with runs of 2: two groups
    _call(adapter, ["p", "p", "p"])
    assert SIZES == [2, 2, 2, 2, 2, 2, 3]
    with pytest.raises(TypeError, match=r"group_size=<GRPOConfig.num_generations>") as raised:
        _call(
            adapter, ["p", "p", "p", "p"]
        )  # one group of 4, or a repeated prompt's two groups of 2?
    assert "trl_word_share" in str(raised.value)
    assert "may each be one group or several" in str(raised.value)
    assert _call(to_trl(word_share, group_size=2), ["p", "p", "p", "p"]) == [
        *share_of_words(["w0 ", "w1 " * 2]),
        *share_of_words(["w2 " * 3, "w3 " * 4]),
    ]


@pytest.mark.parametrize(
    ("prompts", "trainer", "group_size", "message"),
    [
        (
            ["a", "b", "a", "b"],
            FakeTrainer(2),
            None,
            "hold different prompts",
        ),  # interleaved: no groups
        (["a", "b", "a", "b"], None, 2, "hold different prompts"),
        (["a", "b", "a", "b"], None, None, "interleaved prompts are no groups"),
        (["a", "a", "b", "b", "b"], None, None, "not runs of equal prompts of one size"),
        (["a", "a", "a"], FakeTrainer(2), None, "do not split into groups of 2"),
        (
            ["a", "a", "a", "a"],
            FakeTrainer(2),
            4,
            "disagrees with the calling trainer's num_generations=2",
        ),
    ],
)
def test_groups_that_do_not_fit_are_refused(
    prompts: list[str], trainer: FakeTrainer | None, group_size: int | None, message: str
) -> None:
    _FIRST.set()
    with pytest.raises(TypeError, match=message):
        _call(to_trl(word_share, group_size=group_size), prompts, trainer)


class RecordingTrlReward(TrlReward):
    """The TRL adapter, keeping each call's completions and outcomes (TRL's own logs keep the last step only)."""

    calls: list[list[tuple[str, str, float | None, str | None]]]

    def __call__(
        self, prompts: Any, completions: Any, completion_ids: Any = None, **kwargs: Any
    ) -> Any:
        self._texts = (list(prompts), list(completions))
        return super().__call__(prompts, completions, completion_ids, **kwargs)

    def report(self, scored: Any, log_extra: Any, log_metric: Any) -> list[float | None]:
        prompts, texts = self._texts
        self.calls.append(
            [(p, t, item.reward, item.error) for p, t, item in zip(prompts, texts, scored)]
        )
        return super().report(scored, log_extra, log_metric)


def test_grpo_trainer_scores_a_repeated_prompts_groups_apart(tmp_path: Path) -> None:
    trl = require_module("trl", "the frameworks extra installs TRL, whose GRPOTrainer is run here")
    datasets = require_module("datasets", "TRL's trainer takes a datasets.Dataset")
    require_module("transformers", "TRL's trainer trains a transformers model")

    _FIRST.clear()
    SIZES.clear()
    prompt = "what is 6 times 7"
    tokenizer = word_tokenizer(f"{prompt} 42 the answer is".split())
    dataset = datasets.Dataset.from_list(
        [{"prompt": prompt, "answer": "42"}] * 4
    )  # one prompt, four rows
    adapter = RecordingTrlReward(word_share)  # no group_size: the trainer's num_generations (2)
    adapter.calls = []
    trainer = trl.GRPOTrainer(
        model=tiny_llama(tokenizer),
        reward_funcs=[adapter],
        args=two_step_grpo_config(str(tmp_path)),
        train_dataset=dataset,
        processing_class=tokenizer,
    )
    trainer.train()

    assert trainer.state.global_step == 2
    assert SIZES == [2, 2, 2, 2]  # 4 completions of one prompt per step: two groups, never one of 4
    rows = [row for call in adapter.calls for row in call]
    assert len(rows) == 8
    assert all(row[0] == prompt for row in rows)
    failed = [index for index, row in enumerate(rows) if row[3] is not None]
    assert len(failed) == 2  # the first group scored failed: both its samples, nothing else
    assert failed in ([0, 1], [2, 3])  # in the first step
    for start in range(0, 8, 2):
        pair = rows[start : start + 2]
        if start in failed:
            assert [row[2] for row in pair] == [0.0, 0.0]
            assert all(row[3] == "RuntimeError: judge warming up" for row in pair)
            continue
        assert [row[2] for row in pair] == share_of_words([row[1] for row in pair])
    for call in adapter.calls:  # what consecutive equal prompts would have given: one group of 4
        merged = share_of_words([row[1] for row in call])
        assert all(row[2] != value for row, value in zip(call, merged) if row[3] is None)
    assert adapter.stats.failures == 2
