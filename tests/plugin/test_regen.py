"""``--rewardkit-regen`` rewrites only the ``expect`` values of reward cases, and the run still fails."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

TOML = r"""# Reviewed reward cases. Keep this comment.
[[pair]]
id = "label-stays"
given = 'a'
gold = 'b'
grader = "plugrewards:same_text"  # a wrong label: regen must not touch it

[[reward]]
id = "number"
reward = "plugrewards:length_reward"
fields = { final_response = "hello" }  # five characters
expect = 0.9

[[reward]]
id = "inline"
reward = "plugrewards:length_reward"
fields = { final_response = "hi" }
expect = { reward = 1.0, length = 7 }
tolerance = 0.001

[[reward]]
id = "already-right"
reward = "plugrewards:length_reward"
fields = { final_response = "abc" }
expect = 0.3

[[reward]]
id = "subtable"
reward = "plugrewards:async_echo"
[reward.fields]
final_response = "1"
answer = "2"
[reward.expect]
reward = 1.0
matched = true

[[reward]]
id = "new-case"
reward = "plugrewards:length_reward"
fields = { final_response = "abcdefghij" }
"""

EXPECTED_AFTER = (
    TOML.replace("expect = 0.9", "expect = 0.5")
    .replace("expect = { reward = 1.0, length = 7 }", "expect = { reward = 0.2, length = 2 }")
    .replace(
        "[reward.expect]\nreward = 1.0\nmatched = true",
        "[reward.expect]\nreward = 0.0\nmatched = false",
    )
    .replace(
        'fields = { final_response = "abcdefghij" }\n',
        'fields = { final_response = "abcdefghij" }\nexpect = 1.0\n',
    )
)


def test_regen_rewrites_expect_values_only_and_fails(plug: pytest.Pytester) -> None:
    path = plug.path / "golden_regen.toml"
    path.write_text(TOML)
    result = plug.runpytest("--rewardkit-regen")
    result.assert_outcomes(passed=1, failed=5)
    result.stdout.fnmatch_lines(
        [
            "--rewardkit-regen rewrote 'expect' of golden reward case 'number' at golden_regen.toml:8",
            "  before : 0.9",
            "  after  : 0.5",
            "*4 x expect rewritten by --rewardkit-regen (review the diff)",
        ]
    )
    assert path.read_text() == EXPECTED_AFTER
    # The rewritten file is the new truth; the wrong pair label still fails.
    rerun = plug.runpytest()
    rerun.assert_outcomes(passed=5, failed=1)
    rerun.stdout.fnmatch_lines(["*golden pair 'label-stays' failed*"])


def test_a_case_without_expect_is_a_collection_error_unless_regenerating(
    plug: pytest.Pytester,
) -> None:
    plug.makefile(
        ".toml",
        golden_new='[[reward]]\nreward = "plugrewards:length_reward"\nfields = { final_response = "ab" }\n',
    )
    plug.runpytest().assert_outcomes(errors=1)
    plug.runpytest("--rewardkit-regen").assert_outcomes(failed=1)
    plug.runpytest().assert_outcomes(passed=1)


def test_regen_of_jsonl_rewrites_only_the_case_line(plug: pytest.Pytester) -> None:
    lines = [
        '{"id": "pair", "given": "x", "gold": "y", "grader": "plugrewards:same_text"}',
        '{"id": "stale",   "reward": "plugrewards:length_reward", "fields": {"final_response": "abcd"}, "expect": {"reward": 0.1, "length": 1}}',
        '{"id": "fine", "reward": "plugrewards:length_reward", "fields": {"final_response": "a"}, "expect": 0.1}',
    ]
    path = plug.makefile(".jsonl", golden_regen="\n".join(lines))
    plug.runpytest("--rewardkit-regen").assert_outcomes(passed=1, failed=2)
    after = path.read_text().splitlines()
    assert after[0] == lines[0]
    assert after[2] == lines[2]
    assert json.loads(after[1]) == {
        "id": "stale",
        "reward": "plugrewards:length_reward",
        "fields": {"final_response": "abcd"},
        "expect": {"reward": 0.4, "length": 4},
    }


def test_regen_without_tomlkit_is_a_usage_error(
    plug: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # rewardkit without its 'testing' extra has no tomlkit: say so before running anything.
    monkeypatch.setitem(sys.modules, "tomlkit", None)
    plug.makefile(".toml", golden_any=TOML)
    result = plug.runpytest("--rewardkit-regen")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    checkout = Path(__file__).resolve().parents[2]
    result.stderr.fnmatch_lines(
        [f'*--rewardkit-regen needs tomlkit*pip install "{checkout}[[]testing[]]"']
    )
