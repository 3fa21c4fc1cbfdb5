"""``to_verl`` inside every reward manager of verl's release (the ``frameworks`` extra), on CPU.

verl loads ``verl_reward_file.py`` by path as a user's config makes it do
(``custom_reward_function.path``/``.name``, through ``get_custom_reward_fn`` and
``load_reward_manager``), and its real managers score a real ``DataProto`` decoded with a
word-level tokenizer built here: the classic ``naive``, ``dapo``, ``batch`` and ``prime``
managers, and the reward loop's ``naive``, ``dapo``, ``gdpo``, ``rate_limited`` and ``remote``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from tiny_models import word_tokenizer

HERE = Path(__file__).resolve().parent
REWARD_FILE = HERE / "verl_reward_file.py"

# (prompt, response, ground truth): right, wrong, and a response the reward fails on.
ROWS = [
    ("what is 6 times 7", "the answer is 42", "42"),
    ("what is 2 plus 2", "the answer is 5", "4"),
    ("what is 9 minus 1", "boom", "8"),
    ("what is 3 times 3", "it is 9", "9"),
]
EXPECTED_SCORES = [1.0, 0.0, 0.0, 1.0]
ERROR = "RuntimeError: boom in the response"


@pytest.fixture(scope="module")
def tokenizer(verl: Any) -> Any:
    return word_tokenizer(word for row in ROWS for text in row for word in text.split())


def make_batch(verl: Any, tokenizer: Any, rows: list[tuple[str, str, str]] = ROWS) -> Any:
    """A DataProto as verl's rollout builds it: left-padded prompts, right-padded responses."""
    import numpy as np
    import torch

    prompts = [tokenizer.encode(prompt) for prompt, _, _ in rows]
    responses = [tokenizer.encode(response) for _, response, _ in rows]
    prompt_width, response_width = max(map(len, prompts)), max(map(len, responses)) + 2
    pad = tokenizer.pad_token_id
    prompt_ids = torch.tensor([[pad] * (prompt_width - len(ids)) + ids for ids in prompts])
    response_ids = torch.tensor([ids + [pad] * (response_width - len(ids)) for ids in responses])
    attention = torch.tensor(
        [
            [0] * (prompt_width - len(p)) + [1] * len(p) + [1] * len(r) + [0] * (response_width - len(r))
            for p, r in zip(prompts, responses)
        ]
    )
    return verl.DataProto.from_dict(
        tensors={
            "prompts": prompt_ids,
            "responses": response_ids,
            "input_ids": torch.cat([prompt_ids, response_ids], dim=1),
            "attention_mask": attention,
        },
        non_tensors={
            "data_source": np.array(["rk_math"] * len(rows), dtype=object),
            "reward_model": np.array([{"ground_truth": gold, "style": "rule"} for _, _, gold in rows], dtype=object),
            "extra_info": np.array([{"index": index, "split": "test"} for index in range(len(rows))], dtype=object),
            "uid": np.array([f"uid-{index}" for index in range(len(rows))], dtype=object),
        },
    )


def verl_config(manager: str, function: str = "compute_score", path: Path = REWARD_FILE) -> Any:
    from omegaconf import OmegaConf

    return OmegaConf.create(
        {
            "reward": {
                "custom_reward_function": {"path": str(path), "name": function, "reward_kwargs": {}},
                "reward_manager": {"name": manager, "source": "register", "module": None},
                "reward_model": {"enable": False},
                "sandbox_fusion": None,
                "reward_kwargs": {},
                "max_concurrent": 4,
                "timeout": 60.0,
                "num_workers": 1,
            },
            "trainer": {"experiment_name": "rewardkit-test"},
        }
    )


def scores_at_last_token(reward_tensor: Any, data: Any) -> list[float]:
    prompt_width = data.batch["prompts"].shape[-1]
    lengths = data.batch["attention_mask"][:, prompt_width:].sum(dim=-1)
    return [float(reward_tensor[index, int(length) - 1]) for index, length in enumerate(lengths)]


def assert_extras(extra: dict[str, list[Any]]) -> None:
    """The adapter's extras, one value per sample and the same keys for all, ``acc`` included."""
    assert sorted(extra) == ["acc", "error", "pred", "score"]
    assert extra["score"] == EXPECTED_SCORES
    assert extra["acc"] == [True, False, 0.0, True]  # the failed sample's acc is 0.0, not missing
    assert extra["pred"] == ["42", "5", None, "9"]
    assert extra["error"] == ["", "", ERROR, ""]


# -- the classic managers (verl.workers.reward_manager) ------------------------------------


@pytest.mark.parametrize("name", ["naive", "dapo", "batch"])
def test_classic_managers(verl: Any, tokenizer: Any, name: str) -> None:
    from verl.trainer.ppo.reward import get_custom_reward_fn
    from verl.workers.reward_manager import get_reward_manager_cls

    manager = get_reward_manager_cls(name)(
        tokenizer=tokenizer, num_examine=0, compute_score=get_custom_reward_fn(verl_config(name))
    )
    data = make_batch(verl, tokenizer)
    output = manager(data, return_dict=True)
    assert scores_at_last_token(output["reward_tensor"], data) == EXPECTED_SCORES
    assert_extras(dict(output["reward_extra_info"]))
    if name == "batch":  # one call with the plural lists; it writes acc from the scores itself
        assert data.batch["acc"].tolist() == EXPECTED_SCORES


def test_classic_prime_manager_in_its_process_pool(verl: Any, tokenizer: Any) -> None:
    # prime runs compute_score positionally in a ProcessPoolExecutor and reads float(result[0])
    # from anything that is not a number; before VerlScore every sample scored 0.0 there.
    from verl.trainer.ppo.reward import get_custom_reward_fn
    from verl.workers.reward_manager import get_reward_manager_cls

    manager = get_reward_manager_cls("prime")(
        tokenizer=tokenizer, num_examine=0, compute_score=get_custom_reward_fn(verl_config("prime"))
    )
    data = make_batch(verl, tokenizer)
    output = manager(data, return_dict=True)
    assert scores_at_last_token(output["reward_tensor"], data) == EXPECTED_SCORES
    assert data.batch["acc"].tolist() == EXPECTED_SCORES


# -- the reward loop (verl.experimental.reward_loop) ---------------------------------------


def run_reward_loop(manager: Any, data: Any) -> list[dict[str, Any]]:
    """What RewardLoopWorker.compute_score_batch does: one run_single task per sample, gathered."""

    async def batch() -> list[dict[str, Any]]:
        return list(await asyncio.gather(*(manager.run_single(data[index : index + 1]) for index in range(len(data)))))

    return manager.loop.run_until_complete(batch())  # type: ignore[no-any-return]


def collect(outputs: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """The trainer's reward_extra_infos_dict: each key's values over the batch."""
    extra: dict[str, list[Any]] = {}
    for output in outputs:
        for key, value in output["reward_extra_info"].items():
            extra.setdefault(key, []).append(value)
    return extra


@pytest.mark.parametrize("name", ["naive", "dapo", "gdpo", "rate_limited"])
@pytest.mark.parametrize("function", ["compute_score", "compute_score_async"])
def test_reward_loop_managers(
    verl: Any, tokenizer: Any, event_loop_of_a_worker: asyncio.AbstractEventLoop, name: str, function: str
) -> None:
    from verl.trainer.ppo.metric_utils import process_validation_metrics
    from verl.trainer.ppo.reward import load_reward_manager

    manager = load_reward_manager(verl_config(name, function), tokenizer)
    if name != "rate_limited":
        assert manager.is_async_reward_score is (function == "compute_score_async")
    data = make_batch(verl, tokenizer)
    outputs = run_reward_loop(manager, data)
    assert [output["reward_score"] for output in outputs] == EXPECTED_SCORES
    extra = collect(outputs)
    assert_extras(extra)
    # verl's validation makes `acc` the headline metric; the failed sample counts as wrong.
    metrics = process_validation_metrics(list(data.non_tensor_batch["data_source"]), ["u"] * len(ROWS), extra)
    assert metrics["rk_math"]["acc"]["mean@4"] == 0.5
    assert "error" not in metrics["rk_math"]  # strings are not aggregated


def test_reward_loop_remote_manager_on_ray(
    verl: Any, tokenizer: Any, event_loop_of_a_worker: asyncio.AbstractEventLoop, ray_session: Any
) -> None:
    from verl.trainer.ppo.reward import load_reward_manager

    manager = load_reward_manager(verl_config("remote"), tokenizer)
    data = make_batch(verl, tokenizer)
    outputs = run_reward_loop(manager, data)
    assert [output["reward_score"] for output in outputs] == EXPECTED_SCORES
    assert_extras(collect(outputs))
