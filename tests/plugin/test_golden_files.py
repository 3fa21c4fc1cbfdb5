"""Real pytest runs (pytester) over golden files: outcomes, ids, locations, failure reports."""

from __future__ import annotations

import inspect

import pytest

PAIRS_AND_REWARDS = r"""
# Pairs graded by a plain function, reward cases on small rewards.
[[pair]]
id = "spaces"
given = ' x '
gold = 'x'
grader = "plugrewards:same_text"

[[pair]]
given = '\frac{1}{2}'
gold = '\frac{1}{3}'
equivalent = false
grader = "plugrewards:same_text"

[[pair]]
id = "wrong-label"
given = 'a'
gold = 'b'
grader = "plugrewards:same_text"
note = "labelled equivalent on purpose"

[[reward]]
id = "five-chars"
reward = "plugrewards:length_reward"
fields = { final_response = "hello" }
expect = { reward = 0.5, length = 5 }

[[reward]]
reward = "plug_length_reward"
fields = { final_response = "hello", max_length = 5 }
expect = 1.0
"""


def test_each_case_is_an_item_with_its_id_or_position(plug: pytest.Pytester) -> None:
    plug.makefile(".toml", golden_mixed=PAIRS_AND_REWARDS)
    result = plug.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines(
        [
            "golden_mixed.toml::spaces",
            "golden_mixed.toml::pair1",
            "golden_mixed.toml::wrong-label",
            "golden_mixed.toml::five-chars",
            "golden_mixed.toml::reward1",
        ]
    )


def test_outcomes_and_failure_report_of_a_pair(plug: pytest.Pytester) -> None:
    plug.makefile(".toml", golden_mixed=PAIRS_AND_REWARDS)
    result = plug.runpytest()
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*golden_mixed.toml:14 *wrong-label*",
            "golden pair 'wrong-label' failed at golden_mixed.toml:14",
            "  expected : equivalent",
            "  verdict  : NOT equivalent (grader: plugrewards:same_text)",
            "  rule     : stripped-text",
            "  given    : a",
            "    normalized: a",
            "  gold     : b",
            "    normalized: b",
            "  note     : labelled equivalent on purpose",
        ]
    )


def test_reward_case_failure_shows_fields_expected_got_and_location(plug: pytest.Pytester) -> None:
    plug.makefile(
        ".toml",
        golden_reward=r"""
[[reward]]
id = "too-short"
reward = "plugrewards:length_reward"
fields = { final_response = "hi" }
expect = { reward = 0.5, length = 5 }
tolerance = 0.01
""",
    )
    result = plug.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "golden reward case 'too-short' failed at golden_reward.toml:1",
            "  reward   : plugrewards:length_reward",
            "    final_response = hi",
            "  expected : {'reward': 0.5, 'length': 5}",
            "  got      : reward 0.2, extras {'length': 2}",
            "  mismatch : reward: expected 0.5, got 0.2 (tolerance 0.01)",
            "  mismatch : extras['length']: expected 5, got 2",
        ]
    )


def test_a_reward_that_raises_fails_with_its_traceback(plug: pytest.Pytester) -> None:
    plug.makefile(
        ".toml",
        golden_raise='[[reward]]\nreward = "plugrewards:broken"\nfields = { final_response = "x" }\nexpect = 0.0\n',
    )
    result = plug.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "  raised   : ValueError: cannot grade x",
            "Traceback (most recent call last):",
            "*plugrewards.py*in broken*",
        ]
    )
    # The traceback starts at the reward: no frames of the plugin or the event loop.
    output = result.stdout.str()
    assert "pytest_rewardkit" not in output
    assert "/asyncio/" not in output


def test_the_short_summary_and_junit_xml_say_why_a_case_failed(plug: pytest.Pytester) -> None:
    plug.makefile(".toml", golden_mixed=PAIRS_AND_REWARDS)
    junit = plug.path / "junit.xml"
    result = plug.runpytest("-rf", "-vv", f"--junitxml={junit}")
    result.assert_outcomes(passed=4, failed=1)
    why = "graded NOT equivalent, expected equivalent (rule: stripped-text)"
    result.stdout.fnmatch_lines([f"FAILED golden_mixed.toml::wrong-label - {why}"])
    assert f'message="{why}"' in junit.read_text()
    assert "golden pair 'wrong-label' failed at golden_mixed.toml:14" in junit.read_text()
    # Only the failing case carries a property (its reason): passing cases add no XML noise.
    assert junit.read_text().count("<properties>") == 1
    brief = plug.runpytest("--tb=line")
    brief.stdout.fnmatch_lines([f"golden_mixed.toml:14: {why}"])
    brief.stdout.no_fnmatch_line("*golden pair 'wrong-label' failed*")


def test_async_rewards_are_awaited(plug: pytest.Pytester) -> None:
    plug.makefile(
        ".toml",
        golden_async=r"""
[[reward]]
id = "match"
reward = "plugrewards:async_echo"
[reward.fields]
final_response = " 42 "
answer = "42"
[reward.expect]
reward = 1.0
matched = true

[[reward]]
id = "registered-name"
reward = "plug_async_echo"
fields = { final_response = "41", answer = "42" }
expect = { reward = 0.0, matched = false }
""",
    )
    plug.runpytest().assert_outcomes(passed=2)


def test_jsonl_cases_report_their_line(plug: pytest.Pytester) -> None:
    plug.makefile(
        ".jsonl",
        golden_cases="\n".join(
            [
                '{"id": "ok", "given": "x", "gold": " x", "grader": "plugrewards:same_text"}',
                "",
                '{"given": "x", "gold": "y", "grader": "plugrewards:same_text"}',
                '{"id": "len", "reward": "plugrewards:length_reward", "fields": {"final_response": "abc"}, "expect": 0.3}',
            ]
        ),
    )
    result = plug.runpytest("-v")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        ["*golden_cases.jsonl::ok PASSED*", "*golden pair 'pair1' failed at golden_cases.jsonl:3"]
    )


def test_the_ini_option_sets_which_files_are_golden(plug: pytest.Pytester) -> None:
    plug.makeini(
        "[pytest]\nasyncio_default_fixture_loop_scope = function\nrewardkit_golden_files = answers_*.toml\n"
    )
    case = '[[pair]]\ngiven = "x"\ngold = "x"\ngrader = "plugrewards:same_text"\n'
    plug.makefile(".toml", answers_math=case, golden_ignored=case)
    result = plug.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines(["answers_math.toml::pair0"])
    result.stdout.no_fnmatch_line("*golden_ignored*")


def test_help_lists_the_rewardkit_group_through_the_entry_point(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--help")
    result.stdout.fnmatch_lines(
        [
            "rewardkit: golden answer pairs and reward cases:",
            "  --rewardkit-regen*",
            "  rewardkit_golden_files (args):*",
        ]
    )


def test_terminal_summary_counts_per_file_and_groups_failures(plug: pytest.Pytester) -> None:
    plug.makefile(".toml", golden_mixed=PAIRS_AND_REWARDS)
    plug.makefile(
        ".jsonl",
        golden_more='{"id": "far", "reward": "plugrewards:length_reward", "fields": {"final_response": "abc"}, "expect": 0.9}\n'
        '{"id": "off", "given": "1", "gold": "2", "grader": "plugrewards:same_text"}\n',
    )
    plug.makefile(".toml", golden_bad="[[pair]]\ngiven = 1\n")
    result = plug.runpytest("--continue-on-collection-errors")
    result.stdout.fnmatch_lines(
        [
            "*= rewardkit golden cases =*",
            "golden_bad.toml: not collected: malformed (see ERRORS above)",
            "golden_mixed.toml: 4 passed, 1 failed",
            "golden_more.jsonl: 2 failed",
            "failures by reason:",
            "  2 x graded NOT equivalent, expected equivalent (rule: stripped-text)",
            "      golden_mixed.toml:14 wrong-label",
            "      golden_more.jsonl:2 off",
            "  1 x reward value differs",
            "      golden_more.jsonl:1 far",
        ]
    )


def test_the_plugin_is_invisible_without_golden_files(pytester: pytest.Pytester) -> None:
    # Installed wherever rewardkit is, the plugin must cost an unrelated project nothing:
    # no import of rewardkit (nor hypothesis), no output.
    pytester.makepyfile(
        test_unrelated="""
        import sys

        def test_nothing_of_rewardkit_was_imported():
            loaded = [m for m in sys.modules if m.split(".")[0] in ("rewardkit", "tomlkit")]
            assert loaded == []
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:hypothesispytest")
    result.assert_outcomes(passed=1)
    result.stdout.no_fnmatch_line("*rewardkit golden cases*")


def test_golden_files_need_neither_hypothesis_nor_tomlkit(pytester: pytest.Pytester) -> None:
    # The core install (no 'testing' extra) runs golden files: block both imports.
    pytester.makeconftest(
        'import sys\n\nsys.modules["hypothesis"] = None\nsys.modules["tomlkit"] = None\n'
    )
    pytester.makefile(
        ".toml",
        golden_core=r"""
[[pair]]
given = '\frac{1}{2}'
gold = '0.5'

[[reward]]
reward = "math_reward"
fields = { final_response = 'so \boxed{2}', answer = '2' }
expect = 1.0
""",
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:hypothesispytest")
    result.assert_outcomes(passed=2)


def test_no_summary_without_golden_files(plug: pytest.Pytester) -> None:
    plug.makepyfile(test_plain="def test_ok():\n    pass\n")
    result = plug.runpytest()
    result.assert_outcomes(passed=1)
    result.stdout.no_fnmatch_line("*rewardkit golden cases*")


def test_a_registered_reward_or_a_bool_function_can_grade_pairs(plug: pytest.Pytester) -> None:
    plug.makepyfile(bool_grader="def exact(given, gold):\n    return given == gold\n")
    plug.makefile(
        ".toml",
        golden_graders=r"""
[[pair]]
id = "reward-boxed"
given = 'so \boxed{2}'
gold = '2'
grader = "math_reward"

[[pair]]
id = "reward-unboxed"
given = '2'
gold = '2'
grader = "math_reward"

[[pair]]
id = "bool"
given = 'x'
gold = 'x'
grader = "bool_grader.exact"
""",
    )
    result = plug.runpytest()
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "golden pair 'reward-unboxed' failed at golden_graders.toml:7",
            "  verdict  : NOT equivalent (grader: math_reward)",
            "  rule     : no_answer",
            "  tag      : NO_ANSWER",
        ]
    )


def test_a_failed_pair_names_the_policy_it_was_graded_under(plug: pytest.Pytester) -> None:
    """The policy in effect, not "default": the grader's own default when the pair names none;
    no policy at all for a grader that has none."""
    plug.makefile(
        ".toml",
        golden_policies=r"""
[[pair]]
id = "math-default"
given = '0.3333'
gold = '\frac13'

[[pair]]
id = "math-strict"
given = '\frac{2}{4}'
gold = '\frac12'
policy = "strict"

[[pair]]
id = "function-default"
given = 'X'
gold = 'x'
grader = "plugrewards:cased_text"

[[pair]]
id = "function-named"
given = 'X'
gold = 'y'
grader = "plugrewards:cased_text"
policy = "case-insensitive"

[[pair]]
id = "no-policies"
given = 'a'
gold = 'b'
grader = "plugrewards:same_text"
""",
    )
    result = plug.runpytest()
    result.assert_outcomes(failed=5)
    verdicts = [line for line in result.stdout.lines if line.startswith("  verdict  : ")]
    assert verdicts == [
        "  verdict  : NOT equivalent (grader: math, policy: lenient)",
        "  verdict  : NOT equivalent (grader: math, policy: strict)",
        "  verdict  : NOT equivalent (grader: plugrewards:cased_text, policy: case-sensitive)",
        "  verdict  : NOT equivalent (grader: plugrewards:cased_text, policy: case-insensitive)",
        "  verdict  : NOT equivalent (grader: plugrewards:same_text)",
    ]


def test_the_math_graders_default_policy_is_the_one_the_report_names() -> None:
    from pytest_rewardkit.graders import DEFAULT_MATH_POLICY

    from rewardkit.math import compare_answers

    assert inspect.signature(compare_answers).parameters["policy"].default == DEFAULT_MATH_POLICY


def test_a_policy_for_a_grader_without_policies_is_a_collection_error(
    plug: pytest.Pytester,
) -> None:
    plug.makefile(
        ".toml",
        golden_policy='[[pair]]\ngiven = "x"\ngold = "x"\ngrader = "plugrewards:same_text"\npolicy = "strict"\n',
    )
    result = plug.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "golden_policy.toml:5: [[][[]pair]] 'pair0': grader 'plugrewards:same_text' takes no 'policy'*"
        ]
    )


def test_module_attr_names_resolve_next_to_the_golden_file(pytester: pytest.Pytester) -> None:
    sub = pytester.mkdir("suite")
    (sub / "local_rewards.py").write_text(
        "from rewardkit import reward\n\n@reward(auto_register=False)\ndef half(final_response):\n    return 0.5\n"
    )
    (sub / "golden_local.toml").write_text(
        '[[reward]]\nreward = "local_rewards:half"\nfields = { final_response = "x" }\nexpect = 0.5\n'
    )
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.runpytest().assert_outcomes(passed=1)


def test_xfail_marks_a_known_failure_strictly(plug: pytest.Pytester) -> None:
    plug.makefile(
        ".toml",
        golden_known=r"""
[[pair]]
id = "known-bug"
given = 'a'
gold = 'b'
grader = "plugrewards:same_text"
xfail = "the grader cannot see this yet"

[[pair]]
id = "fixed-bug"
given = 'a'
gold = 'a'
grader = "plugrewards:same_text"
xfail = "was broken once"
""",
    )
    result = plug.runpytest("-rxX")
    result.assert_outcomes(xfailed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "golden_known.toml: 1 failed, 1 xfailed",
            "  1 x a known failure (xfail) now passes: remove its 'xfail'",
            "      golden_known.toml:8 fixed-bug",
        ]
    )
