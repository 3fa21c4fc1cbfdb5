"""Issue 32, item 3: a ``weighted_sum`` in a reward file that verl loads by path, in verl's real
reward loop, with process mode (a failing sample first).

(a) The whole sum in worker processes (``to_verl(total, execution="process")``): the workers load
its components from the file as the plain rewards are loaded (verl's module name cannot be
imported), instead of ``RewardLoadError: No module named 'custom_module...'`` out of the loop.
(b) The sum in verl's own threads, or in rewardkit's reward threads: its math_verify component,
declared ``execution="process"`` (its default timeouts use ``signal.alarm``), still runs in its
worker processes, instead of failing on every sample with ``SignalInThreadError``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_verl_managers import collect, make_batch, run_reward_loop, verl_config
from tiny_models import word_tokenizer

from rewardkit.reward_processes import reward_processes

REWARD_FILE = Path(__file__).resolve().parents[1] / "runtime" / "process_sum_reward_file.py"

# (prompt, response, ground truth): the failing sample first, then right, wrong, right.
ROWS = [
    ("what is 9 minus 1", "boom", "8"),
    ("what is 6 times 7", "the answer is $42$", "42"),
    ("what is 2 plus 2", "$5$", "4"),
    ("what is 3 times 3", "so it is $9$ then", "9"),
]
EXPECTED_SCORES = [0.0, 1.5, 0.5, 1.0]  # 1.0 * accuracy + 0.5 * (at most four words)
EXPECTED_ACCURACY = [None, 1.0, 0.0, 1.0]
ERROR = "RewardComponentError: component 'mv_accuracy' of weighted reward 'total' failed: RuntimeError: boom in the response"


@pytest.fixture(scope="module")
def tokenizer(verl: Any) -> Any:
    return word_tokenizer(word for row in ROWS for text in row for word in text.split())


@pytest.fixture(autouse=True)
def processes() -> Iterator[None]:
    yield
    reward_processes.shutdown()


@pytest.mark.parametrize(
    "function", ["compute_score", "compute_score_in_process", "compute_score_in_threads"]
)
def test_a_sum_from_a_file_by_path_in_verls_reward_loop(
    verl: Any, tokenizer: Any, event_loop_of_a_worker: Any, function: str
) -> None:
    from verl.trainer.ppo.reward import load_reward_manager

    manager = load_reward_manager(verl_config("naive", function, path=REWARD_FILE), tokenizer)
    data = make_batch(verl, tokenizer, rows=ROWS)
    outputs = run_reward_loop(manager, data)
    assert [output["reward_score"] for output in outputs] == EXPECTED_SCORES
    extra = collect(outputs)
    assert extra["error"][0] == ERROR
    assert extra["error"][1:] == [""] * 3
    assert extra["mv_accuracy"] == EXPECTED_ACCURACY
    assert extra["short"] == [None, 1.0, 1.0, 0.0]  # a failed sample's extras are filled
    pids = extra["mv_accuracy/pid"]
    assert pids[0] is None
    assert os.getpid() not in pids[1:]  # math_verify ran on the main thread of a worker process
    (stats,) = [entry for entry in reward_processes.stats() if entry.calls]
    assert stats.reward == ("total" if function == "compute_score_in_process" else "mv_accuracy")
    assert (stats.calls, stats.crashes, stats.timeouts, stats.restarts) == (4, 0, 0, 0)
