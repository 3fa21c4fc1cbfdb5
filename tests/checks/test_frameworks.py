"""Framework-style reward functions (TRL's, verl's) and signal-based timeouts in threads: known
bugs are flagged, correct functions are not, and the premises hold in the real libraries."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from rewardkit.checks import CheckConfig, ConfigError, ModuleAnalyzer, analyze_module, check_source
from rewardkit.checks.config import load_config_file

from .cli_helpers import run_check

TRL_AND_VERL = CheckConfig(
    framework_rewards=(("trl", "accuracy_reward"), ("trl", "format_reward"), ("verl", "compute_score"))
)


def codes(source: str, config: CheckConfig = TRL_AND_VERL) -> list[tuple[str, int]]:
    found = [(d.code, d.line) for d in check_source(source, "rewards.py", config)]
    # the editor's incremental engine agrees with the one-shot check
    incremental = ModuleAnalyzer().analyze(source, "rewards.py", config).diagnostics
    assert [(d.code, d.line) for d in incremental] == found
    return found


# -- framework functions named in the configuration ---------------------------------------

OPEN_R1_STYLE = '''import re
from math_verify import LatexExtractionConfig, parse, verify


def accuracy_reward(completions, solution, **kwargs):
    """open-r1's: math-verify on the trainer's main thread (TRL calls sync functions there)."""
    contents = [completion[0]["content"] for completion in completions]
    rewards = []
    for content, sol in zip(contents, solution):
        gold = parse(sol, extraction_mode="first_match")
        if len(gold) != 0:
            answer = parse(content, extraction_config=[LatexExtractionConfig()])
            rewards.append(float(verify(gold, answer)))
        else:
            rewards.append(None)
    return rewards


def format_reward(completions, **kwargs):
    pattern = r"^<think>.*?</think>\\s*<answer>.*?</answer>$"
    matches = [re.match(pattern, c[0]["content"], re.DOTALL) for c in completions]
    return [1.0 if match else 0.0 for match in matches]
'''

VERL_STYLE = '''from math_verify import parse, verify


def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    gold = parse(ground_truth, parsing_timeout=None)
    answer = parse(solution_str, parsing_timeout=None)
    ok = verify(gold, answer, timeout_seconds=None)
    return {"score": float(ok), "acc": float(ok)}
'''


@pytest.mark.parametrize("source", [OPEN_R1_STYLE, VERL_STYLE], ids=["open-r1", "verl"])
def test_correct_framework_functions_are_not_flagged(source: str) -> None:
    assert codes(source) == []


KNOWN_BUGS = {
    "trl without **kwargs": (
        "def accuracy_reward(completions, solution):\n"
        "    return [float(c[0]['content'] == s) for c, s in zip(completions, solution)]\n",
        [("RK502", 1)],
    ),
    "trl singular prompt": (
        "def format_reward(prompt, completions, **kwargs):\n"
        "    return [float(len(c) > len(prompt)) for c in completions]\n",
        [("RK502", 1)],
    ),
    "trl returns one float": (
        "def format_reward(completions, **kwargs):\n"
        "    return float(all('<answer>' in c[0]['content'] for c in completions))\n",
        [("RK503", 2)],
    ),
    "trl returns a dict": (
        "def format_reward(completions, **kwargs):\n"
        "    return {'format': [1.0 for _ in completions]}\n",
        [("RK503", 2)],
    ),
    "trl returns one fixed element": (
        "def format_reward(completions, **kwargs):\n    return [1.0]\n",
        [("RK503", 2)],
    ),
    "trl async with math_verify": (
        "from math_verify import parse, verify\n\n"
        "async def accuracy_reward(completions, solution, **kwargs):\n"
        "    return [float(verify(parse(s), parse(c[0]['content']))) "
        "for c, s in zip(completions, solution)]\n",
        [("RK501", 4), ("RK501", 4), ("RK501", 4)],
    ),
    "verl old three-argument signature": (
        "def compute_score(data_source, solution_str, ground_truth):\n"
        "    return float(solution_str == ground_truth)\n",
        [("RK502", 1)],
    ),
    "verl misnamed response": (
        "def compute_score(data_source, response, ground_truth, extra_info=None, **kwargs):\n"
        "    return float(response == ground_truth)\n",
        [("RK502", 1)],
    ),
    "verl dict without score": (
        "def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n"
        "    return {'reward': float(solution_str == ground_truth)}\n",
        [("RK503", 2)],
    ),
    "verl tuple": (
        "def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n"
        "    return float(solution_str == ground_truth), {'acc': 1.0}\n",
        [("RK503", 2)],
    ),
    "verl None on a path": (
        "def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n"
        "    if not solution_str:\n        return None\n"
        "    return float(solution_str == ground_truth)\n",
        [("RK503", 3)],
    ),
    "verl sync with math_verify defaults": (
        "import math_verify\n\n"
        "def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n"
        "    gold = math_verify.parse(ground_truth)\n"
        "    return float(math_verify.verify(gold, math_verify.parse(solution_str)))\n",
        [("RK501", 4), ("RK501", 5), ("RK501", 5)],
    ),
    "verl batched returns a number": (
        "def compute_score(data_sources, solution_strs, ground_truths, extra_infos, **kwargs):\n"
        "    return sum(s == g for s, g in zip(solution_strs, ground_truths)) / len(solution_strs)\n",
        [("RK503", 2)],
    ),
}


@pytest.mark.parametrize("name", sorted(KNOWN_BUGS))
def test_framework_functions_with_known_bugs_are_flagged(name: str) -> None:
    source, expected = KNOWN_BUGS[name]
    assert codes(source) == expected


def test_framework_functions_are_checked_only_when_named() -> None:
    source, _ = KNOWN_BUGS["verl old three-argument signature"]
    assert codes(source, CheckConfig()) == []
    assert codes(source.replace("compute_score", "my_score")) == []
    scoped = CheckConfig(framework_rewards=(("verl", "verl_rewards/*.py:compute_score"),))
    assert check_source(source, "elsewhere.py", scoped) == []
    assert [d.code for d in check_source(source, "verl_rewards/math.py", scoped)] == ["RK502"]
    # and they are no rewards: not listed for hover, no RK1xx/RK2xx on them
    assert analyze_module(source, "r.py", TRL_AND_VERL).rewards == ()


def test_the_configuration_key_is_validated(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[tool.rewardkit.framework_rewards]\ntrl = ["accuracy_reward"]\n'
        'verl = ["rewards/*.py:compute_score"]\n',
        encoding="utf-8",
    )
    config = load_config_file(pyproject)
    assert config.framework_rewards == (
        ("trl", "accuracy_reward"),
        ("verl", "rewards/*.py:compute_score"),
    )
    pyproject.write_text('[tool.rewardkit.framework_rewards]\ntrlx = ["f"]\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown framework 'trlx'"):
        load_config_file(pyproject)
    pyproject.write_text('[tool.rewardkit.framework_rewards]\nverl = ["a.b"]\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="not a function name"):
        load_config_file(pyproject)


def test_the_cli_checks_configured_framework_functions(tmp_path: Path) -> None:
    """A module that imports nothing from rewardkit is still read when it defines a configured
    framework function (users get checks before they port anything)."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.rewardkit.framework_rewards]\nverl = ["compute_score"]\n', encoding="utf-8"
    )
    source, _ = KNOWN_BUGS["verl misnamed response"]
    (tmp_path / "score.py").write_text(source, encoding="utf-8")
    result = run_check(cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith(
        "score.py:1:32: RK502 verl never passes `response` (TypeError on every call): it passes "
        "`solution_str`\n"
    )


# -- plain functions passed to an adapter: rewards, as the adapter calls them -------------------


def test_a_trl_style_function_passed_to_to_trl_is_checked_as_the_adapter_calls_it() -> None:
    source = (
        "from rewardkit import to_trl\n\n"
        "def accuracy(completions, solution, **kwargs):\n"
        "    return [float(c == s) for c, s in zip(completions, solution)]\n\n"
        "reward_funcs = [to_trl(accuracy)]\n"
    )
    diagnostics = check_source(source, "r.py", CheckConfig())
    assert [(d.code, d.line) for d in diagnostics] == [("RK101", 3), ("RK202", 4)]
    analyzer = ModuleAnalyzer()  # the editor's engine, as the module is edited
    assert list(analyzer.analyze(source, "r.py", CheckConfig()).diagnostics) == diagnostics
    unused = source.replace("reward_funcs = [to_trl(accuracy)]\n", "")
    assert analyzer.analyze(unused, "r.py", CheckConfig()).diagnostics == ()
    assert list(analyzer.analyze(source, "r.py", CheckConfig()).diagnostics) == diagnostics
    assert diagnostics[0].message.startswith(
        "`completions` is TRL's own argument, which `to_trl` never passes"
    )
    assert diagnostics[0].data == {"reward": "accuracy", "parameter": "completions", "suggestion": "final_response"}


def test_a_verl_style_function_passed_to_to_verl_and_its_field_map() -> None:
    source = (
        "from rewardkit.adapters import to_verl\n\n"
        "def score(solution_str, ground_truth, **kwargs):\n"
        "    return float(solution_str.strip() == ground_truth)\n\n"
        "compute_score = to_verl(score{options})\n"
    )
    unmapped = check_source(source.format(options=""), "r.py", CheckConfig())
    assert [(d.code, d.data["suggestion"]) for d in unmapped] == [  # type: ignore[index]
        ("RK101", "final_response"),
        ("RK101", "answer"),
    ]
    mapped = source.format(
        options=", field_map={'solution_str': 'solution_str', 'ground_truth': 'ground_truth'}"
    )
    assert check_source(mapped, "r.py", CheckConfig()) == []
    ported = (
        "from rewardkit import reward, to_verl\n\n"
        "@reward\ndef score(final_response, answer, data_source):\n"
        "    return float(final_response.strip() == answer)\n\n"
        "compute_score = to_verl(score, timeout=None)\n"
    )
    assert check_source(ported, "r.py", CheckConfig()) == []


def test_a_function_named_like_an_adapter_argument_elsewhere_is_left_alone() -> None:
    source = (
        "def to_trl(f):\n    return f\n\n"
        "def accuracy(completions, **kwargs):\n    return [1.0 for _ in completions]\n\n"
        "funcs = [to_trl(accuracy)]\n"
    )
    assert check_source(source, "r.py", CheckConfig()) == []


# -- signal-based timeouts -----------------------------------------------------------------

REWARD = (
    "{imports}\nfrom rewardkit import reward\n\n{decorator}\n"
    "def accuracy(final_response, answer):\n    return float({body})\n"
)


@pytest.mark.parametrize(
    ("imports", "body"),
    [
        ("from math_verify import parse, verify", "verify(parse(answer), parse(final_response))"),
        ("import math_verify as mv", "mv.verify(mv.parse(answer), mv.parse(final_response))"),
        (
            "from math_verify.parser import parse\nfrom math_verify.grader import verify",
            "verify(parse(answer), parse(final_response))",
        ),
    ],
)
def test_math_verify_defaults_in_a_sync_reward_are_flagged(imports: str, body: str) -> None:
    source = REWARD.format(imports=imports, decorator="@reward", body=body)
    diagnostics = check_source(source)
    assert [d.code for d in diagnostics] == ["RK501"] * 3
    message = diagnostics[0].message
    assert "calculate_rewards" in message
    assert '`@reward(execution="process")`' in message
    assert "`timeout_seconds=None`" in message or "`parsing_timeout=None`" in message


@pytest.mark.parametrize(
    ("decorator", "body"),
    [
        ('@reward(execution="process")', "verify(parse(answer), parse(final_response))"),
        (
            "@reward",
            "verify(parse(answer, parsing_timeout=None), parse(final_response, None, "
            "parsing_timeout=0), timeout_seconds=None)",
        ),
        ("@reward", "verify(parse(answer, parsing_timeout=t), parse(final_response, **o), "
         "timeout_seconds=t)"),
    ],
    ids=["process", "timeouts-off", "not-literal"],
)
def test_math_verify_without_signals_or_in_a_process_is_fine(decorator: str, body: str) -> None:
    source = REWARD.format(
        imports="from math_verify import parse, verify\nt = None\no = {}", decorator=decorator, body=body
    )
    assert check_source(source) == []


def test_where_the_function_runs_decides() -> None:
    sync = REWARD.format(
        imports="from math_verify import parse, verify",
        decorator="@reward",
        body="verify(parse(answer), parse(final_response))",
    )
    async_ = sync.replace("def accuracy", "async def accuracy")
    assert check_source(async_) == []  # awaited on the caller's loop, often the main thread
    agentfly = sync.replace("from rewardkit import reward", "from agentfly.rewards import reward")
    assert check_source(agentfly) == []  # AgentFly's runtime calls sync rewards inline
    plain = sync.replace("@reward\n", "").replace("from rewardkit import reward", "from rewardkit import to_trl, to_verl")
    assert check_source(plain + "f = to_trl(accuracy)\n") == []  # TRL's main thread
    assert {d.code for d in check_source(plain + "f = to_trl(accuracy, timeout=5)\n")} == {"RK501"}
    assert {d.code for d in check_source(plain + "f = to_verl(accuracy)\n")} == {"RK501"}
    assert check_source(plain + "f = to_verl(accuracy, execution='process')\n") == []
    assert {d.code for d in check_source(async_ + "from rewardkit import to_trl\nf = to_trl(accuracy)\n")} == {"RK501"}


@pytest.mark.parametrize(
    ("code", "flagged"),
    [
        ("import timeout_decorator\n\n@timeout_decorator.timeout(5)\ndef grade(x):\n    return 1.0\n", True),
        ("import timeout_decorator\n\n@timeout_decorator.timeout(5, use_signals=False)\n"
         "def grade(x):\n    return 1.0\n", False),
        ("from verl.utils.py_functional import timeout_limit\n\n@timeout_limit(5, use_signals=True)\n"
         "def grade(x):\n    return 1.0\n", True),
        ("from verl.utils.py_functional import timeout_limit\n\n@timeout_limit(5)\n"
         "def grade(x):\n    return 1.0\n", False),
        ("import signal\n\ndef grade(x):\n    signal.signal(signal.SIGALRM, print)\n    return 1.0\n", True),
        ("import stopit\n\ndef grade(x):\n    with stopit.SignalTimeout(5):\n        return 1.0\n", True),
        ("import stopit\n\ndef grade(x):\n    with stopit.ThreadingTimeout(5):\n        return 1.0\n", False),
    ],
)
def test_other_signal_timeouts_of_the_field_reached_through_helpers(code: str, flagged: bool) -> None:
    """timeout_decorator, verl's timeout_limit, stopit, signal itself; the reward calls a module
    helper that uses one (through another helper too)."""
    source = (
        code + "\nfrom rewardkit import reward\n\ndef check(x):\n    return grade(x)\n\n"
        "@reward\ndef r(final_response):\n    return check(final_response)\n"
    )
    found = [d for d in check_source(source) if d.code == "RK501"]
    assert bool(found) is flagged
    if flagged:
        assert "`check`: it calls" in found[0].message


def test_the_premise_math_verify_defaults_fail_in_a_thread() -> None:
    """The real library: with its default timeouts `parse` raises in any thread but the main
    one, and works there with `parsing_timeout=None` (what RK501 tells the user)."""
    from math_verify import parse

    outcomes: dict[str, object] = {}

    def run() -> None:
        try:
            outcomes["default"] = parse("$\\frac{1}{2}$")
        except ValueError as error:
            outcomes["default"] = error
        outcomes["off"] = parse("$\\frac{1}{2}$", parsing_timeout=None)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    assert isinstance(outcomes["default"], ValueError)
    assert "threaded environment" in str(outcomes["default"])
    assert outcomes["off"]


def test_a_base_reward_with_math_verify_defaults() -> None:
    source = (
        "from math_verify import parse, verify\nfrom rewardkit import BaseReward\n\n"
        "class Accuracy(BaseReward):\n    name = 'accuracy'\n{execution}\n"
        "    def call(self, final_response, answer):\n"
        "        return float(verify(parse(answer), parse(final_response)))\n"
    )
    assert {d.code for d in check_source(source.format(execution=""))} == {"RK501"}
    assert check_source(source.format(execution="    execution = 'process'")) == []
