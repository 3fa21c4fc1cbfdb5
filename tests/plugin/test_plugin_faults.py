"""The plugin in odd places: every error of a golden file at once at the bad key's line (issue
26 item 14), files that only look like golden files (item 3), a reward module that exits at
import (issue 27 item 5), deep nesting and huge integers (item 17), and the example run without
pytest-asyncio (issue 26 item 16). Each through a real pytest run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def collection_error(result: pytest.RunResult) -> None:
    """One collection error, reported as text (no traceback, no INTERNALERROR)."""
    result.assert_outcomes(errors=1)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    text = result.stdout.str()
    assert "INTERNALERROR" not in text
    assert "Traceback" not in text


def test_every_error_of_a_toml_file_is_reported_at_once_at_its_key(plug: pytest.Pytester) -> None:
    plug.makefile(
        ".toml",
        golden_many="""\
[[pair]]
id = "fine"
given = "1"
gold = "1"
grader = "plugrewards:same_text"

[[pair]]
id = "typo"
given = "1"
gold = "1"
equivelent = false

[[pair]]
id = "float"
given = 0.5
gold = "1"

[[reward]]
id = "bad-reward"
reward = "no_such_reward_xyz"
expect = 1.0

[[reward]]
id = "bad-field"
reward = "plugrewards:length_reward"
expect = 0.1
[reward.fields]
final_response = "x"
max_lenght = 3

[[reward]]
id = "bad-expect"
reward = "plugrewards:length_reward"
fields = { final_response = "x" }
[reward.expect]
reward = "high"

[[pair]]
id = "fine"
given = "2"
gold = "2"
grader = "plugrewards:same_text"
""",
    )
    result = plug.runpytest()
    collection_error(result)
    result.stdout.fnmatch_lines(
        [
            "golden_many.toml:11: [[][[]pair]] 'typo': unknown key 'equivelent' (did you mean 'equivalent'?)*",
            "golden_many.toml:15: [[][[]pair]] 'float': 'given' must be a string, got float 0.5*",
            "golden_many.toml:20: [[][[]reward]] 'bad-reward': unknown reward 'no_such_reward_xyz'*",
            "golden_many.toml:27: [[][[]reward]] 'bad-field': field 'max_lenght' is not a parameter*",
            "golden_many.toml:36: [[][[]reward]] 'bad-expect': 'expect.reward' must be a finite number, got 'high'",
            "golden_many.toml:39: duplicate case id 'fine' (first used at line 1)",
        ],
        consecutive=True,
    )


def test_every_error_of_a_jsonl_file_is_reported_at_once_at_its_line(plug: pytest.Pytester) -> None:
    plug.makefile(
        ".jsonl",
        golden_many='{"given": "1", "gold": "1", "grader": "plugrewards:same_text"}\n'
        '{"given": "1", "gold": \n'
        '{"given": "1", "gold": "1", "equivelent": false}\n'
        "\n"
        '{"reward": "plugrewards:length_reward", "fields": {"final_response": "x"}, "expect": "1"}\n',
    )
    result = plug.runpytest()
    collection_error(result)
    result.stdout.fnmatch_lines(
        [
            "golden_many.jsonl:2: invalid JSON: *",
            "golden_many.jsonl:3: [[][[]pair]] 'pair1': unknown key 'equivelent'*",
            "golden_many.jsonl:5: [[][[]reward]] 'reward0': 'expect' must be a finite number, got '1'",
        ],
        consecutive=True,
    )


def test_files_that_only_match_the_pattern_are_left_alone(plug: pytest.Pytester) -> None:
    data = plug.mkpydir("tests") / "data"
    data.mkdir()
    (data / "golden_outputs.jsonl").write_text(
        '{"input": "2+2", "output": "4"}\n{"input": "3+3", "output": "6", "reward": 0.5}\n'
    )
    (data / "golden_settings.toml").write_text('[tool]\nname = "snapshot"\n[[runs]]\nseed = 1\n')
    plug.makepyfile(test_real="def test_real():\n    assert True\n")
    result = plug.runpytest()
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.OK
    assert "rewardkit golden cases" not in result.stdout.str()


def test_a_misspelt_golden_file_is_still_ours(plug: pytest.Pytester) -> None:
    plug.makefile(".toml", golden_typo='[[pairs]]\ngiven = "1"\ngold = "1"\n')
    plug.makefile(".jsonl", golden_typo='{"kind": "pair", "given": "1"}\n')
    result = plug.runpytest()
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines_random(
        [
            "golden_typo.toml:1: unknown top-level key 'pairs' (did you mean 'pair'?)*",
            "golden_typo.jsonl:1: [[][[]pair]] 'pair0': missing required key 'gold'",
        ]
    )


@pytest.mark.parametrize(
    "exit_code",
    [
        "raise SystemExit(3)",
        "import sys; sys.exit('no GPU here')",
        "import pytest; pytest.skip('x', allow_module_level=True)",
    ],
)
def test_a_reward_module_exiting_at_import_is_a_collection_error_not_an_internal_error(
    plug: pytest.Pytester, exit_code: str
) -> None:
    plug.makepyfile(exiting_rewards=f"{exit_code}\n")
    plug.makefile(
        ".toml",
        golden_exit='[[reward]]\nid = "r"\nreward = "exiting_rewards:score"\nexpect = 1.0\n',
    )
    result = plug.runpytest()
    collection_error(result)
    result.stdout.fnmatch_lines(
        [
            "golden_exit.toml:3: [[][[]reward]] 'r': cannot resolve 'exiting_rewards:score': importing 'exiting_rewards' raised *"
        ]
    )


def nested(levels: int) -> str:
    return "[" * levels + "1" + "]" * levels


@pytest.mark.parametrize(
    ("suffix", "content", "message"),
    [
        (
            ".toml",
            '[[reward]]\nreward = "plugrewards:length_reward"\nexpect = 1.0\n'
            f"fields = {{ final_response = {nested(3000)} }}\n",
            "golden_odd.toml:4: invalid TOML: nested more than 100 levels deep (the parser ran out of stack)",
        ),
        (
            ".toml",
            f'[[pair]]\ngiven = "1"\ngold = {"7" * 5000}\n',
            "golden_odd.toml:3: invalid TOML: an integer with more digits than Python converts (at most 4,300)",
        ),
        (
            ".toml",
            f'[[reward]]\nreward = "plugrewards:length_reward"\nexpect = 1.0\nfields = {{ final_response = "x", extra = {nested(150)} }}\n',
            "golden_odd.toml:1: [[][[]reward]] 'reward0': values nested more than 100 levels deep*",
        ),
        (
            ".jsonl",
            '{"given": "1", "gold": "1", "grader": "plugrewards:same_text"}\n'
            f'{{"given": "1", "gold": {nested(100_000)}}}\n',
            "golden_odd.jsonl:2: invalid JSON: nested too deeply for the parser (it ran out of stack)",
        ),
        (
            ".jsonl",
            f'{{"given": "1", "gold": {"7" * 5000}}}\n',
            "golden_odd.jsonl:1: invalid JSON: an integer with more digits than Python converts (at most 4,300)",
        ),
    ],
    ids=["deep-toml", "huge-toml-integer", "deep-toml-value", "deep-json", "huge-json-integer"],
)
def test_deep_nesting_and_huge_integers_are_file_line_errors(
    plug: pytest.Pytester, suffix: str, content: str, message: str
) -> None:
    plug.makefile(suffix, golden_odd=content)
    result = plug.runpytest()
    collection_error(result)
    result.stdout.fnmatch_lines([message])


def test_the_example_runs_without_pytest_asyncio_and_without_a_config_warning(
    tmp_path: Path,
) -> None:
    """`pytest examples/plugin` in an environment with only rewardkit[testing]: pytest-asyncio's
    plugin is switched off (-p no:asyncio) to stand for its absence, and config warnings are errors."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:asyncio",
            "-p",
            "no:cacheprovider",
            "-W",
            "error::pytest.PytestConfigWarning",
            "--collect-only",
            "-q",
            "examples/plugin",
        ],
        cwd=REPO,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "asyncio_mode" not in done.stdout + done.stderr
    assert "golden_answers.toml::half-as-decimal" in done.stdout
