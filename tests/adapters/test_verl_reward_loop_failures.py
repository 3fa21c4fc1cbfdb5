"""``to_verl`` in verl's trainer path with a failing sample finishing first, 20 repetitions.

The trainer's reward step: ``RewardLoopManager.compute_rm_score`` on Ray with fresh
``RewardLoopWorker`` actors (each loads the reward file in its own process), which builds the
batch's extras columns with ``np.array([info[key] for info in reward_extra_infos])`` keyed by the
first sample's extras; then ``extract_reward`` and ``process_validation_metrics``. Before the
result schema, a failure that finished before any success left its process's extras without
``acc`` and this raised ``KeyError: 'acc'`` (3 of 9 runs sync, 9 of 9 async). The classic
managers that collect extras (``naive``, ``dapo``, ``batch``) get the same batch, failure first
(``prime`` keeps only the scores; test_verl_managers.py runs it with a failing sample).

Each worker's chunk starts with a failing sample: the others wait for the gate file it writes,
then half a second more (``gated_rewards``), so the failure is recorded first in every process.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from test_verl_managers import scores_at_last_token, verl_config
from tiny_models import word_tokenizer

HERE = Path(__file__).resolve().parent
REWARD_FILE = HERE / "gated_rewards.py"
REPETITIONS = 20
RAY_REPETITIONS = int(os.environ.get("RK_RAY_REPETITIONS", "2"))
"""Trainer reward steps on fresh Ray workers per adapter kind (sync, async). Each starts two
new actors that import verl (20-45 s on the shared 2-core machine). The gate files make the
failure finish first in every worker of every step, so the order no longer depends on luck and
two steps per kind prove what twenty did; ``RK_RAY_REPETITIONS=10`` runs the 20-step
campaign of issue 23 (10 sync + 10 async: 395 s here)."""
WORKERS = 2
SETTLE = 0.5

# Two chunks (one per worker), each starting with a failing sample.
ROWS = [
    ("what is 9 minus 1", "boom", "8"),
    ("what is 6 times 7", "the answer is 42", "42"),
    ("what is 2 plus 2", "the answer is 5", "4"),
    ("what is 5 minus 1", "boom", "4"),
    ("what is 3 times 3", "it is 9", "9"),
    ("what is 1 plus 1", "it is 2", "2"),
]
EXPECTED_SCORES = [0.0, 1.0, 0.0, 0.0, 1.0, 1.0]
ERROR = "RuntimeError: boom in the response"


@pytest.fixture(scope="module")
def tokenizer(verl: Any) -> Any:
    return word_tokenizer(word for row in ROWS for text in row for word in text.split())


@pytest.fixture(scope="module")
def tokenizer_dir(tokenizer: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tokenizer saved where verl's workers load it (``actor_rollout_ref.model.tokenizer_path``)."""
    path = tmp_path_factory.mktemp("tokenizer")
    tokenizer.save_pretrained(str(path))
    return path


def make_batch(verl: Any, tokenizer: Any, gates: tuple[Path, Path], settle: float = SETTLE) -> Any:
    """A DataProto as verl's rollout builds it; each half's samples share that half's gate (and
    wait ``settle`` seconds after it opens, where samples run concurrently)."""
    import numpy as np
    from test_verl_managers import make_batch as base_batch

    data = base_batch(verl, tokenizer, rows=ROWS)
    half = len(ROWS) // 2
    data.non_tensor_batch["extra_info"] = np.array(
        [
            {"index": index, "gate": str(gates[index // half]), "settle": settle}
            for index in range(len(ROWS))
        ],
        dtype=object,
    )
    return data


def loop_config(function: str, tokenizer_dir: Path, manager: str = "naive") -> Any:
    from omegaconf import OmegaConf

    config = verl_config(manager, function, path=REWARD_FILE)
    model = {"path": str(tokenizer_dir), "tokenizer_path": str(tokenizer_dir)}
    return OmegaConf.merge(config, {"actor_rollout_ref": {"model": model}, "reward": {"num_workers": WORKERS}})


def check_extras(extra: dict[str, Any], data: Any) -> None:
    """Every key in every row, failed rows filled; verl's validation counts failures as wrong."""
    from verl.trainer.ppo.metric_utils import process_validation_metrics

    assert sorted(extra) == ["acc", "error", "pred", "score"]
    assert [float(value) for value in extra["acc"]] == EXPECTED_SCORES
    assert list(extra["pred"]) == [None, "42", "5", None, "9", "2"]
    assert [bool(value) for value in extra["error"]] == [True, False, False, True, False, False]
    assert extra["error"][0] == ERROR
    data_sources = list(data.non_tensor_batch["data_source"])
    metrics = process_validation_metrics(data_sources, ["u"] * len(ROWS), extra)
    assert metrics["rk_math"]["acc"]["mean@6"] == pytest.approx(0.5)
    assert metrics["rk_math"]["score"]["mean@6"] == pytest.approx(0.5)
    assert "pred" not in metrics["rk_math"]  # strings (and the failures' None) are not averaged


@pytest.mark.slow
@pytest.mark.parametrize("function", ["compute_score", "compute_score_async"])
def test_reward_loop_on_ray_with_fresh_workers(
    verl: Any, tokenizer: Any, tokenizer_dir: Path, ray_session: Any, tmp_path: Path, function: str
) -> None:
    from verl.experimental.reward_loop.reward_loop import RewardLoopManager
    from verl.trainer.ppo.reward import extract_reward

    for repetition in range(RAY_REPETITIONS):
        gates = (tmp_path / f"a-{repetition}", tmp_path / f"b-{repetition}")
        data = make_batch(verl, tokenizer, gates)
        manager = RewardLoopManager(loop_config(function, tokenizer_dir))  # fresh worker actors
        try:
            output = manager.compute_rm_score(data)
        finally:
            for worker in manager.reward_loop_workers:
                ray_session.kill(worker)
        reward_tensor, extra = extract_reward(output)
        assert scores_at_last_token(reward_tensor, data) == EXPECTED_SCORES
        check_extras(extra, data)


@pytest.mark.parametrize("name", ["naive", "dapo", "batch"])
def test_classic_managers_failure_first(verl: Any, tokenizer: Any, tmp_path: Path, name: str) -> None:
    from verl.trainer.ppo.reward import get_custom_reward_fn
    from verl.workers.reward_manager import get_reward_manager_cls

    for repetition in range(REPETITIONS):
        # verl loads the file afresh on every call (no module cache): a new adapter, as in a new process
        compute_score = get_custom_reward_fn(verl_config(name, path=REWARD_FILE))
        manager = get_reward_manager_cls(name)(tokenizer=tokenizer, num_examine=0, compute_score=compute_score)
        gates = (tmp_path / f"a-{repetition}", tmp_path / f"b-{repetition}")
        data = make_batch(verl, tokenizer, gates, settle=0.0)  # these managers score in the rows' order
        if name == "batch":  # one call for the whole batch: nothing else would open the gates
            for gate in gates:
                gate.touch()
        output = manager(data, return_dict=True)
        assert scores_at_last_token(output["reward_tensor"], data) == EXPECTED_SCORES
        check_extras({key: list(values) for key, values in output["reward_extra_info"].items()}, data)


@pytest.mark.parametrize("function", ["compute_score", "compute_score_async"])
def test_reward_loop_managers_in_process_failure_first(verl: Any, tokenizer: Any, tmp_path: Path, function: str) -> None:
    """The reward loop's manager as each worker runs it, 20 fresh adapters."""
    from test_verl_managers import collect, run_reward_loop
    from verl.trainer.ppo.reward import load_reward_manager

    for repetition in range(REPETITIONS):
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            manager = load_reward_manager(verl_config("naive", function, path=REWARD_FILE), tokenizer)
            gates = (tmp_path / f"a-{repetition}", tmp_path / f"b-{repetition}")
            data = make_batch(verl, tokenizer, gates)
            outputs = run_reward_loop(manager, data)
        finally:
            asyncio.set_event_loop(None)
            loop.close()
        assert [output["reward_score"] for output in outputs] == EXPECTED_SCORES
        check_extras(collect(outputs), data)
