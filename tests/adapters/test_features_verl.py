"""verl: rewardkit's reward managers give a ``to_verl`` reward the prompt (``raw_prompt``), the
response's token ids and its GRPO group (``uid``), inside verl's real manager interfaces (the
classic ``AbstractRewardManager`` and the reward loop's ``RewardManagerBase``, loaded as a
user's config loads them), with a real ``DataProto``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from adapter_testing import require_module
from test_verl_managers import make_batch as base_batch
from test_verl_managers import run_reward_loop, scores_at_last_token
from tiny_models import word_tokenizer

from rewardkit.runtime.define.errors import MissingFieldError

HERE = Path(__file__).resolve().parent
REWARD_FILE = HERE / "verl_features_file.py"

# (prompt, response, uid): two groups of two; the last prompt has no "what" (not applicable)
ROWS = [
    ("what is 6 times 7", "the answer is 42", "g1"),
    ("what is 6 times 7", "42", "g1"),
    ("say 2 plus 2", "it is four", "g2"),
    ("say 2 plus 2", "4", "g2"),
]


@pytest.fixture(scope="module")
def verl() -> Any:
    return require_module("verl", "the frameworks extra installs verl, whose reward manager interfaces are tested here")


@pytest.fixture(scope="module")
def tokenizer(verl: Any) -> Any:
    return word_tokenizer(word for row in ROWS for text in row[:2] for word in text.split())


def make_batch(verl: Any, tokenizer: Any, rows: list[tuple[str, str, str]] = ROWS) -> Any:
    """verl's rollout batch (``test_verl_managers``), with chat ``raw_prompt`` messages and each row's ``uid``."""
    import numpy as np

    data = base_batch(verl, tokenizer, rows=[(prompt, response, "x") for prompt, response, _ in rows])
    data.non_tensor_batch["raw_prompt"] = np.array(
        [[{"role": "system", "content": "be brief"}, {"role": "user", "content": prompt}] for prompt, _, _ in rows],
        dtype=object,
    )
    data.non_tensor_batch["uid"] = np.array([uid for _, _, uid in rows], dtype=object)
    return data


def config(function: str, *, n: int | None = None) -> Any:
    from omegaconf import OmegaConf

    settings: dict[str, Any] = {
        "reward": {
            "custom_reward_function": {"path": str(REWARD_FILE), "name": function, "reward_kwargs": {}},
            "reward_manager": {
                "name": "RewardkitRewardLoopManager",
                "source": "importlib",
                "module": {"path": "pkg://rewardkit.adapters.verl_managers", "name": "custom_reward_manager"},
            },
            "reward_model": {"enable": False},
            "sandbox_fusion": None,
            "num_workers": 1,
        },
    }
    if n is not None:
        settings["actor_rollout_ref"] = {"rollout": {"n": n}}
    return OmegaConf.create(settings)


def response_ids(tokenizer: Any, index: int) -> list[int]:
    return tokenizer.encode(ROWS[index][1])


@pytest.mark.parametrize("n", [2, None])
@pytest.mark.usefixtures("event_loop_of_a_worker")
def test_reward_loop_manager_gives_prompt_ids_and_not_applicable(
    verl: Any, tokenizer: Any, n: int | None
) -> None:
    from verl.trainer.ppo.reward import load_reward_manager

    manager = load_reward_manager(config("compute_score_prompt", n=n), tokenizer)
    outputs = run_reward_loop(manager, make_batch(verl, tokenizer))
    lengths = [len(response_ids(tokenizer, index)) for index in range(4)]
    assert [output["reward_score"] for output in outputs] == [lengths[0], lengths[1], 0.0, 0.0]
    first = outputs[0]["reward_extra_info"]
    assert first == {"score": lengths[0], "prompt_words": 5, "tokens": lengths[0], "turns": 3, "error": ""}
    # not applicable: verl needs a number (0.0), the extras are missing, and it is no failure
    assert outputs[2]["reward_extra_info"] == {"score": 0.0, "prompt_words": None, "tokens": None, "turns": None, "error": ""}
    assert manager.adapter.stats.failures == 0


@pytest.mark.parametrize("n", [2, None])
@pytest.mark.usefixtures("event_loop_of_a_worker")
def test_reward_loop_manager_scores_each_uid_group_together(
    verl: Any, tokenizer: Any, n: int | None
) -> None:
    from verl.trainer.ppo.reward import load_reward_manager

    manager = load_reward_manager(config("compute_score_group", n=n), tokenizer)
    outputs = run_reward_loop(manager, make_batch(verl, tokenizer))
    assert [output["reward_score"] for output in outputs] == [0.8, 0.2, 0.75, 0.25]
    assert [output["reward_extra_info"]["group_size"] for output in outputs] == [2, 2, 2, 2]


@pytest.mark.usefixtures("event_loop_of_a_worker")
def test_an_incomplete_group_fails_loudly_after_the_wait(verl: Any, tokenizer: Any) -> None:
    from verl.trainer.ppo.reward import load_reward_manager

    manager = load_reward_manager(config("compute_score_group", n=3), tokenizer)
    manager.group_wait = 0.2  # a group of 3 of which this worker only ever sees 2
    outputs = run_reward_loop(manager, make_batch(verl, tokenizer)[:2])
    for output in outputs:
        assert output["reward_score"] == 0.0
        assert "2 of 3 samples reached this reward worker" in output["reward_extra_info"]["error"]
        assert "reward.num_workers=1" in output["reward_extra_info"]["error"]


def test_classic_rewardkit_manager_whole_batch(verl: Any, tokenizer: Any) -> None:
    from verl.trainer.ppo.reward import get_custom_reward_fn
    from verl.workers.reward_manager import get_reward_manager_cls

    import rewardkit.adapters.verl_managers  # noqa: F401  (registers "rewardkit" with verl)

    data = make_batch(verl, tokenizer)
    for function, expected in (("compute_score_group", [0.8, 0.2, 0.75, 0.25]), ("compute_score_prompt", None)):
        compute_score = get_custom_reward_fn(config(function))
        manager = get_reward_manager_cls("rewardkit")(tokenizer=tokenizer, num_examine=0, compute_score=compute_score)
        output = manager(data, return_dict=True)
        scores = scores_at_last_token(output["reward_tensor"], data)
        if expected is None:
            expected = [float(len(response_ids(tokenizer, 0))), float(len(response_ids(tokenizer, 1))), 0.0, 0.0]
        assert scores == pytest.approx(expected)
        assert len(set(map(len, output["reward_extra_info"].values()))) == 1  # one value per sample for every key


def test_verls_own_managers_cannot_give_these_fields_and_say_so(verl: Any, tokenizer: Any) -> None:
    from verl.trainer.ppo.reward import get_custom_reward_fn
    from verl.workers.reward_manager import get_reward_manager_cls

    data = make_batch(verl, tokenizer)
    naive = get_reward_manager_cls("naive")(tokenizer=tokenizer, num_examine=0, compute_score=get_custom_reward_fn(config("compute_score_prompt")))
    with pytest.raises(MissingFieldError, match=r"pkg://rewardkit\.adapters\.verl_managers"):
        naive(data, return_dict=True)
    batch = get_reward_manager_cls("batch")(tokenizer=tokenizer, num_examine=0, compute_score=get_custom_reward_fn(config("compute_score_group")))
    with pytest.raises(TypeError, match="no uid to group by"):
        batch(data, return_dict=True)


def test_trainer_path_on_ray_groups_by_uid(verl: Any, tokenizer: Any, ray_session: Any, tmp_path: Path) -> None:
    """verl's trainer reward step: ``RewardLoopManager.compute_rm_score`` on Ray, a fresh
    ``RewardLoopWorker`` loading rewardkit's manager by ``pkg://`` path and the reward file."""
    from omegaconf import OmegaConf
    from verl.experimental.reward_loop.reward_loop import RewardLoopManager
    from verl.trainer.ppo.reward import extract_reward

    tokenizer.save_pretrained(str(tmp_path))
    model = {"path": str(tmp_path), "tokenizer_path": str(tmp_path)}
    settings = OmegaConf.merge(config("compute_score_group", n=2), {"actor_rollout_ref": {"model": model}})
    data = make_batch(verl, tokenizer)
    manager = RewardLoopManager(settings)
    try:
        output = manager.compute_rm_score(data)
    finally:
        for worker in manager.reward_loop_workers:
            ray_session.kill(worker)
    reward_tensor, extra = extract_reward(output)
    assert scores_at_last_token(reward_tensor, data) == pytest.approx([0.8, 0.2, 0.75, 0.25])
    assert list(extra["group_size"]) == [2, 2, 2, 2]
    assert list(extra["error"]) == ["", "", "", ""]


def test_a_batch_reward_in_verls_batch_manager(verl: Any, tokenizer: Any) -> None:
    from verl.trainer.ppo.reward import get_custom_reward_fn
    from verl.workers.reward_manager import get_reward_manager_cls

    data = make_batch(verl, tokenizer)
    manager = get_reward_manager_cls("batch")(tokenizer=tokenizer, num_examine=0, compute_score=get_custom_reward_fn(config("compute_score_batch")))
    output = manager(data, return_dict=True)
    # lengths: "the answer is 42" (16), "42" (2), "it is four" (10), "4" (1): one call ranks all four
    assert scores_at_last_token(output["reward_tensor"], data) == pytest.approx([1.0, 1 / 3, 2 / 3, 0.0])
