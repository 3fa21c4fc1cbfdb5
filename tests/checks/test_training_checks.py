"""Checks for rewards that go silently wrong inside training (issue 32.9, 37.7), through the real
``rewardkit check``: one run over a project holding each case, and the editor's incremental
engine agreeing with it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rewardkit.checks import ModuleAnalyzer, analyze_module
from rewardkit.checks.config import load_config

from .cli_helpers import run_check

FILES = {
    # 32.9 (a): math_verify imported inside the helper the reward calls (RK501 missed it)
    "helper_import.py": (
        "from rewardkit import reward\n"
        "\n"
        "def is_equiv(response, gold):\n"
        "    from math_verify import parse, verify\n"
        "\n"
        "    return verify(parse(gold), parse(response))\n"
        "\n"
        "def is_equiv_module(response, gold):\n"
        "    import math_verify as mv\n"
        "\n"
        "    return mv.verify(mv.parse(gold), mv.parse(response))\n"
        "\n"
        "def is_equiv_off(response, gold):\n"
        "    from math_verify import parse, verify\n"
        "\n"
        "    gold = parse(gold, parsing_timeout=None)\n"
        "    return verify(gold, parse(response, parsing_timeout=None), timeout_seconds=None)\n"
        "\n"
        "@reward\n"
        "def accuracy(final_response, answer):\n"
        "    return float(is_equiv(final_response, answer))\n"  # line 21
        "\n"
        "@reward\n"
        "def accuracy_module(final_response, answer):\n"
        "    return float(is_equiv_module(final_response, answer))\n"  # line 25
        "\n"
        "@reward\n"
        "def accuracy_off(final_response, answer):\n"
        "    return float(is_equiv_off(final_response, answer))\n"
        "\n"
        '@reward(execution="process")\n'
        "def accuracy_process(final_response, answer):\n"
        "    return float(is_equiv(final_response, answer))\n"
    ),
    # 32.9 (b): TRL's quick-start shape, flat, with a reward in process mode
    "train_flat.py": (
        "from datasets import load_dataset\n"
        "from trl import GRPOTrainer\n"
        "from rewardkit import reward\nfrom rewardkit.adapters import to_trl\n"
        "\n"
        'dataset = load_dataset("trl-lib/tldr", split="train")\n'
        "\n"
        '@reward(execution="process")\n'  # line 8
        "def short(final_response):\n"
        "    return -float(len(final_response))\n"
        "\n"
        "def concise(final_response):\n"  # line 12
        "    return float(len(final_response) < 200)\n"
        "\n"
        "trainer = GRPOTrainer(\n"
        '    model="Qwen/Qwen2-0.5B-Instruct",\n'
        '    reward_funcs=[to_trl(short), to_trl(concise, execution="process")],\n'
        "    train_dataset=dataset,\n"
        ")\n"
        "trainer.train()\n"
    ),
    "train_main.py": (
        "from rewardkit import reward\nfrom rewardkit.adapters import to_trl\n"
        "\n"
        '@reward(execution="process")\n'  # line 4
        "def brief(final_response):\n"
        "    return -float(len(final_response))\n"
        "\n"
        'if __name__ == "__main__":\n'
        "    print(to_trl(brief))\n"
    ),
    "evaluate_script.py": (  # calculate_rewards in process mode, from a script
        "import asyncio\n"
        "\n"
        "from rewardkit import calculate_rewards, reward\n"
        "\n"
        "@reward\n"
        "def equal(final_response, answer):\n"  # line 6
        "    return float(final_response == answer)\n"
        "\n"
        'if __name__ == "__main__":\n'
        '    samples = [{"final_response": "4", "answer": "4"}]\n'
        '    print(asyncio.run(calculate_rewards(equal, samples, execution="process")))\n'
    ),
    "process_rewards.py": (  # a module of rewards, imported by the script: fine
        "from rewardkit import reward\n"
        "\n"
        '@reward(execution="process")\n'
        "def terse(final_response):\n"
        "    return -float(len(final_response))\n"
    ),
    # 32.9 (c): a group reward adapted for TRL with and without group_size
    "groups.py": (
        "from rewardkit import group_reward\nfrom rewardkit.adapters import to_trl\n"
        "\n"
        "@group_reward\n"
        "def shortest(final_response):\n"  # line 5
        "    m = min(len(r) for r in final_response)\n"
        "    return [float(len(r) == m) for r in final_response]\n"
        "\n"
        "@group_reward\n"
        "def sized(final_response):\n"
        "    m = min(len(r) for r in final_response)\n"
        "    return [float(len(r) == m) for r in final_response]\n"
        "\n"
        '@group_reward(over="batch")\n'
        "def batch(final_response):\n"
        "    return [1.0 for _ in final_response]\n"
        "\n"
        "funcs = [to_trl(shortest), to_trl(sized, group_size=8), to_trl(batch)]\n"
        "\n"
        "def evaluate(prompts, completions):\n"
        "    return scorer(prompts=prompts, completions=completions)\n"
        "\n"
        "scorer = to_trl(shortest)\n"
        "sized_scorer = to_trl(sized, group_size=8)\n"
        'print(sized_scorer(prompts=["q"] * 8, completions=["a"] * 8))\n'
        'print(to_trl(batch)(prompts=["q"] * 2, completions=["a", "b"]))\n'
    ),
    # 32.9 (d): rewards that return None without writing `return None`
    "nones.py": (
        "from rewardkit import NOT_APPLICABLE, reward\n"
        "\n"
        "def grade(response, gold):\n"
        "    if response.strip() == gold:\n"
        "        return 1.0\n"
        "\n"
        "@reward\n"
        "def exact(final_response, answer):\n"
        "    return grade(final_response, answer)\n"  # line 9
        "\n"
        "@reward\n"
        "def boxed(final_response, answer):\n"
        "    score = None\n"
        "    if '\\\\boxed' in final_response:\n"
        "        score = float(answer in final_response)\n"
        "    return score\n"  # line 16
        "\n"
        "@reward\n"
        "def trl_style(final_response, answer):\n"
        "    return float(answer in final_response) if answer else None\n"  # line 20
        "\n"
        "@reward\n"
        "def applicable(final_response, answer):\n"
        "    if not answer:\n"
        "        return NOT_APPLICABLE\n"
        "    return float(answer in final_response)\n"
        "\n"
        "@reward(none_as_zero=True)\n"
        "def zero(final_response, answer):\n"
        "    return grade(final_response, answer)\n"
    ),
    # 37.7: a misspelled column in a TRL function
    "trl_functions.py": (
        "def accuracy_reward(completions, solutoin, **kwargs):\n"
        "    return [float(c[0]['content'] == s) for c, s in zip(completions, solutoin)]\n"
        "\n"
        "def format_reward(completions, solution, **kwargs):\n"
        "    return [float(c[0]['content'] == s) for c, s in zip(completions, solution)]\n"
    ),
}

PYPROJECT = (
    "[tool.rewardkit]\n"
    'task_fields = ["solution", "answer"]\n'
    "[tool.rewardkit.framework_rewards]\n"
    'trl = ["accuracy_reward", "format_reward"]\n'
)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("training_checks")
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    for name, text in FILES.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def reported(project: Path) -> dict[str, list[dict[str, object]]]:
    """``rewardkit check --format json`` over the project, by file."""
    result = run_check("--format", "json", "--no-cache", ".", cwd=project)
    assert result.returncode == 1, result.stderr
    by_file: dict[str, list[dict[str, object]]] = {name: [] for name in FILES}
    for item in json.loads(result.stdout):
        by_file[str(item["path"])].append(item)
    return by_file


def found(reported: dict[str, list[dict[str, object]]], name: str) -> list[tuple[object, object]]:
    return [(item["code"], item["line"]) for item in reported[name]]


@pytest.mark.parametrize("name", sorted(FILES))
def test_the_editor_engine_agrees_with_the_command(project: Path, name: str, reported) -> None:
    config = load_config(project / name)
    text = FILES[name]
    incremental = ModuleAnalyzer().analyze(text, name, config).diagnostics
    once = analyze_module(text, name, config).diagnostics
    assert [(d.code, d.line) for d in incremental] == [(d.code, d.line) for d in once]
    assert [(d.code, d.line) for d in once] == found(reported, name)


def test_math_verify_imported_inside_a_helper_is_flagged(reported) -> None:
    assert found(reported, "helper_import.py") == [("RK501", 21), ("RK501", 25)]
    first = reported["helper_import.py"][0]
    assert "`is_equiv`: it calls `math_verify.verify`" in str(first["message"])
    assert 'execution="process"' in str(first["message"])


def test_process_mode_in_a_script_is_flagged(reported) -> None:
    assert found(reported, "train_flat.py") == [("RK504", 8), ("RK504", 12)]
    decorator, adapter = (str(item["message"]) for item in reported["train_flat.py"])
    assert decorator.startswith('`execution="process"` runs `short` in worker processes')
    assert "`trainer.train()` at its top level" in decorator
    assert adapter.startswith('`to_trl(concise, execution="process")` runs `concise`')
    assert "move the reward to a module next to the script and import it" in adapter
    assert "RewardLoadError" in adapter
    assert found(reported, "train_main.py") == [("RK504", 4)]
    assert 'an `if __name__ == "__main__":` block' in str(reported["train_main.py"][0]["message"])
    assert found(reported, "process_rewards.py") == []
    assert found(reported, "evaluate_script.py") == [("RK504", 6)]
    message = str(reported["evaluate_script.py"][0]["message"])
    assert message.startswith('`calculate_rewards(equal, ..., execution="process")` runs `equal`')


def test_a_trl_group_reward_without_group_size_is_flagged(reported) -> None:
    assert found(reported, "groups.py") == [("RK505", 5)]
    [item] = reported["groups.py"]
    assert item["severity"] == "warning"
    assert "this module calls `to_trl(shortest)` itself" in str(item["message"])
    assert "pass `group_size=` your `GRPOConfig.num_generations`" in str(item["message"])


def test_a_reward_that_can_return_none_is_flagged(reported) -> None:
    assert found(reported, "nones.py") == [("RK206", 9), ("RK206", 16), ("RK206", 20)]
    messages = [str(item["message"]) for item in reported["nones.py"]]
    assert "`grade` can return `None` (it can reach the end of its body: a forgotten" in messages[0]
    assert "`score` can still be `None` here" in messages[1]
    assert "conditional expression gives `None`" in messages[2]
    assert all("return `rewardkit.NOT_APPLICABLE`" in message for message in messages)


def test_a_misspelled_column_in_a_trl_function_is_flagged(reported) -> None:
    assert found(reported, "trl_functions.py") == [("RK502", 1)]
    [item] = reported["trl_functions.py"]
    assert item["column"] == 33  # `solutoin`
    assert "did you mean `solution`?" in str(item["message"])
    assert "TypeError on every call" in str(item["message"])


SCRIPT = (
    "from rewardkit import reward\n"
    "from rewardkit.adapters import to_trl\n"
    "\n"
    '@reward(execution="process")\n'
    "def brief(final_response):\n"
    "    return -float(len(final_response))\n"
    "\n"
    'if __name__ == "__main__":\n'
    '    print(to_trl(brief)(prompts=["q"], completions=["four"]))\n'
)


def test_what_rk504_flags_is_what_the_runtime_refuses(tmp_path: Path) -> None:
    """The premise, in the real runtime: run as a script, the reward is refused; the check says
    so before the run."""
    script = tmp_path / "train.py"
    script.write_text(SCRIPT, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert run.returncode != 0
    assert "RewardLoadError" in run.stderr
    assert "defined in __main__" in run.stderr
    checked = run_check("--no-cache", "train.py", cwd=tmp_path)
    assert checked.returncode == 1
    assert checked.stdout.startswith("train.py:4:9: RK504 ")


GROUP_SCRIPT = (
    "from rewardkit import group_reward\n"
    "from rewardkit.adapters import to_trl\n"
    "\n"
    "@group_reward\n"
    "def shortest(final_response):\n"
    "    m = min(len(r) for r in final_response)\n"
    "    return [float(len(r) == m) for r in final_response]\n"
    "\n"
    "scorer = to_trl(shortest)\n"
    'print(scorer(prompts=["q"] * 4, completions=["a", "bb", "c", "dd"]))\n'
)


def test_what_rk505_flags_is_what_the_adapter_refuses(tmp_path: Path) -> None:
    """The premise, in the real adapter: called outside a trainer, a run of 4 equal prompts
    (one group of 4, or two of 2?) is refused; the check warns before the run."""
    script = tmp_path / "evaluate.py"
    script.write_text(GROUP_SCRIPT, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert run.returncode != 0
    assert "group_size=<GRPOConfig.num_generations>" in run.stderr
    checked = run_check("--no-cache", "evaluate.py", cwd=tmp_path)
    assert checked.returncode == 0  # a warning
    assert checked.stdout.startswith("evaluate.py:5:5: RK505 ")
    fixed = GROUP_SCRIPT.replace("to_trl(shortest)", "to_trl(shortest, group_size=2)")
    script.write_text(fixed, encoding="utf-8")
    assert subprocess.run([sys.executable, str(script)], cwd=tmp_path, timeout=300).returncode == 0
    assert "RK505" not in run_check("--no-cache", "evaluate.py", cwd=tmp_path).stdout
