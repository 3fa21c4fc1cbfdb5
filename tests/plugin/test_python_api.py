"""The ``golden`` and ``reward_case`` fixtures and the parametrize helper, in real pytest runs."""

from __future__ import annotations

import pytest


def test_golden_fixture_passes_and_fails_with_the_pair_report(plug: pytest.Pytester) -> None:
    plug.makepyfile(
        test_golden_api=r"""
        def test_equal(golden):
            verdict = golden.assert_equivalent(r"\frac{1}{2}", "0.5")
            assert verdict.reason == "rational"

        def test_not_equal(golden):
            golden.assert_not_equivalent(r"\boxed{3 \text{ or } 4}", "3")

        def test_strict_rejects_unreduced(golden):
            golden.assert_equivalent(r"\frac{2}{4}", r"\frac{1}{2}", policy="strict")

        def test_custom_grader(golden):
            golden.assert_not_equivalent(" x", "x", grader="plugrewards:same_text")
        """
    )
    result = plug.runpytest()
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*golden check failed at test_golden_api.py:9",
            "*  expected : equivalent",
            "*  verdict  : NOT equivalent (grader: math, policy: strict)",
            "*  rule     : *",
            "*  given    : \\frac{2}{4}",
            "*    normalized: *",
            "*  gold     : \\frac{1}{2}",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*golden check failed at test_golden_api.py:12",
            "*  expected : NOT equivalent",
            "*  verdict  : equivalent (grader: plugrewards:same_text)",
        ]
    )


def test_golden_fixture_rejects_a_policy_its_grader_does_not_have(plug: pytest.Pytester) -> None:
    plug.makepyfile(
        test_policy="""
        def test_typo(golden):
            golden.assert_equivalent("1", "1", policy="strct")

        def test_no_policies(golden):
            golden.assert_equivalent("1", "1", policy="strict", grader="plugrewards:same_text")
        """
    )
    result = plug.runpytest()
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "E*ValueError: unknown policy 'strct' (did you mean 'strict'?); the math grader has lenient, strict",
            "E*ValueError: grader 'plugrewards:same_text' takes no 'policy' (remove it)",
        ]
    )


def test_math_pairs_in_a_golden_file_show_normalized_forms_and_rule(plug: pytest.Pytester) -> None:
    plug.makefile(
        ".toml",
        golden_math=r"""
[[pair]]
id = "half"
given = '\dfrac{1}{2}'
gold = '0.5'

[[pair]]
id = "hedge"
given = '3 \text{ or } 4'
gold = '3'
equivalent = false

[[pair]]
id = "mislabelled"
given = '0.3333'
gold = '\frac13'
note = "a rounded decimal is not a fraction"
""",
    )
    result = plug.runpytest()
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "golden pair 'mislabelled' failed at golden_math.toml:12",
            "  expected : equivalent",
            "  verdict  : NOT equivalent (grader: math, policy: lenient)",
            "  rule     : *",
            "  tag      : WRONG_ANSWER",
            "  given    : 0.3333",
            "    normalized: 0.3333",
            "  gold     : \\frac13",
            "    normalized: *",
            "  note     : a rounded decimal is not a fraction",
        ]
    )


def test_reward_case_fixture_in_sync_and_async_tests(plug: pytest.Pytester) -> None:
    plug.makepyfile(
        test_reward_case=r"""
        import plugrewards

        def test_by_name(reward_case):
            result = reward_case("math_reward", final_response=r"so \boxed{2}", answer="2")
            assert result.reward == 1.0 and result.extras["correct"] is True

        def test_async_reward_from_sync_test(reward_case):
            assert reward_case(plugrewards.async_echo, final_response="7", answer="7").reward == 1.0

        async def test_async_reward_from_async_test(reward_case):
            assert reward_case("plugrewards:async_echo", final_response="7", answer="8").reward == 0.0
            assert (await reward_case.acall(plugrewards.async_echo, final_response="7", answer="7")).reward == 1.0
        """
    )
    plug.runpytest().assert_outcomes(passed=3)


def test_golden_params_loads_cases_for_parametrize(plug: pytest.Pytester) -> None:
    data = plug.mkdir("data")
    (data / "pairs.toml").write_text(
        '[[pair]]\nid = "half"\ngiven = "0.5"\ngold = \'\\frac{1}{2}\'\n\n'
        '[[pair]]\ngiven = "1"\ngold = "2"\n\n'
        '[[reward]]\nid = "len"\nreward = "plugrewards:length_reward"\nfields = { final_response = "abc" }\nexpect = 0.3\n'
    )
    plug.makepyfile(
        test_params="""
        import pytest
        from pytest_rewardkit import golden_params

        @pytest.mark.parametrize("case", golden_params("data/pairs.toml"))
        def test_case(case, golden):
            golden.check(case)

        @pytest.mark.parametrize("case", golden_params("data/pairs.toml", kind="reward"))
        def test_rewards_only(case, golden):
            golden.check(case)
        """
    )
    result = plug.runpytest("-v")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_params.py::test_case[[]half[]] PASSED*",
            "*test_params.py::test_case[[]pair1[]] FAILED*",
            "*test_params.py::test_case[[]len[]] PASSED*",
            "*test_params.py::test_rewards_only[[]len[]] PASSED*",
        ]
    )
    result.stdout.fnmatch_lines(["*golden pair 'pair1' failed at data/pairs.toml:6"])
