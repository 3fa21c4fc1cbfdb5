"""Issue 32, item 2, in TRL's real ``GRPOTrainer``: a flat training script (no
``if __name__ == "__main__":``, as TRL's quick-start) whose math_verify reward runs with
``execution="process"``, run as a subprocess. Its top level counts its own executions: it runs
once (worker processes never import ``__main__``; they used to run it again, and every sample
scored the fallback 0.0). The reward fails on the first sample it sees, then grades the rest.
2 steps on CPU, a tiny Llama and a word-level tokenizer built here (nothing from the hub)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from adapter_testing import require_module

HERE = Path(__file__).resolve().parent
SCRIPT_SAFETY = 600.0  # seconds: only against a hang, never a performance bound

REWARDS = """\
import os

from rewardkit import reward


@reward(name="accuracy", auto_register=False, execution="process", timeout=60.0)
def accuracy(final_response: str, answer: str) -> float:
    \"\"\"TRL's accuracy reward (math_verify, default signal timeouts); the first sample ever fails.\"\"\"
    try:
        os.close(os.open(os.environ["FIRST_FAILS"], os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        pass
    else:
        raise RuntimeError("the first sample fails")
    from math_verify import parse, verify

    return float(verify(parse(answer), parse(final_response)))
"""

FLAT_SCRIPT = """\
import json
import os

with open(os.environ["COUNT_FILE"], "a") as count:  # the top level counts its own executions
    count.write(f"{os.getpid()}\\n")

import datasets
import trl
from tiny_models import tiny_llama, two_step_grpo_config, word_tokenizer

from flat_trl_rewards import accuracy
from rewardkit.adapters import to_trl

prompts = [("what is 6 times 7", "42"), ("what is 2 plus 2", "4")]
tokenizer = word_tokenizer({w for p, a in prompts for w in f"{p} {a} the answer is".split()})
dataset = datasets.Dataset.from_list([{"prompt": p, "answer": a} for p, a in prompts])
scorer = to_trl(accuracy, name="accuracy")
trainer = trl.GRPOTrainer(
    model=tiny_llama(tokenizer),
    reward_funcs=[scorer],
    args=two_step_grpo_config(os.environ["OUTPUT_DIR"]),
    train_dataset=dataset,
    processing_class=tokenizer,
)
trainer.train()
print(json.dumps({"steps": trainer.state.global_step, "calls": scorer.stats.calls,
                  "failures": scorer.stats.failures}))
"""


def test_a_flat_grpo_script_with_a_process_reward_runs_its_top_level_once(tmp_path: Path) -> None:
    for name, why in [
        ("trl", "the frameworks extra installs TRL, whose GRPOTrainer is run here"),
        ("datasets", "TRL's trainer takes a datasets.Dataset"),
        ("math_verify", "the test extra installs math-verify, the grader under test"),
    ]:
        require_module(name, why)
    (tmp_path / "flat_trl_rewards.py").write_text(REWARDS)
    (tmp_path / "train.py").write_text(FLAT_SCRIPT)
    count = tmp_path / "count.txt"
    env = dict(
        os.environ,
        COUNT_FILE=str(count),
        FIRST_FAILS=str(tmp_path / "first"),
        OUTPUT_DIR=str(tmp_path / "out"),
        PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
        HF_HUB_OFFLINE="1",
        WANDB_MODE="disabled",
    )
    completed = subprocess.run(
        [sys.executable, "train.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=SCRIPT_SAFETY,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    assert len(count.read_text().splitlines()) == 1
    outcome = json.loads(completed.stdout.splitlines()[-1])
    assert outcome["steps"] == 2
    assert (outcome["calls"], outcome["failures"]) == (8, 1)
    assert "failed on sample 0 under TRL" in completed.stderr  # the adapter's warning, once
    assert completed.stderr.count("RuntimeError: the first sample fails") == 1
