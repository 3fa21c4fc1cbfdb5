"""The plugin runs a reward the way training will (issue 23, item 2): in the reward's execution
mode and under its timeout, or the ones the ini options name. A real math_verify reward, whose
default timeouts use signals, fails in a golden case as it fails in training's reward threads,
and passes once it runs in worker processes."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator

import pytest

from rewardkit.reward_processes import reward_processes

MODULE = textwrap.dedent(
    '''
    """Rewards grading with math_verify as TRL's accuracy reward does (default timeouts)."""
    import time

    from rewardkit import reward


    def score(final_response, answer):
        from math_verify import parse, verify

        return float(verify(parse(answer), parse(final_response)))


    @reward(name="mv_default", auto_register=False)
    def mv_default(final_response: str, answer: str) -> float:
        return score(final_response, answer)


    @reward(name="mv_process", auto_register=False, execution="process", timeout=60)
    def mv_process(final_response: str, answer: str) -> float:
        return score(final_response, answer)


    @reward(name="slow", auto_register=False)
    def slow(final_response: str) -> float:
        time.sleep(20)
        return 1.0
    '''
)


def golden(reward: str) -> str:
    return (
        f'[[reward]]\nid = "half"\nreward = "mvrewards:{reward}"\n'
        "fields = { final_response = 'It is $\\frac{1}{2}$', answer = '$0.5$' }\nexpect = 1.0\n"
    )


@pytest.fixture
def mv(plug: pytest.Pytester) -> Iterator[pytest.Pytester]:
    plug.makepyfile(mvrewards=MODULE)
    yield plug
    reward_processes.shutdown()


def test_a_signal_grader_fails_as_in_training_threads_naming_the_mode(mv: pytest.Pytester) -> None:
    mv.makefile(".toml", golden_mv=golden("mv_default"))
    result = mv.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*raised   : SignalInThreadError: reward 'mv_default' on the case ran with execution='thread'*execution='process'*",
        ]
    )


def test_a_signal_grader_declared_for_processes_passes(mv: pytest.Pytester) -> None:
    mv.makefile(".toml", golden_mv=golden("mv_process"))
    mv.runpytest().assert_outcomes(passed=1)


def test_the_ini_options_run_rewards_as_the_training_config_does(mv: pytest.Pytester) -> None:
    mv.makefile(".toml", golden_mv=golden("mv_default"))
    mv.makeini(
        "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"
        "rewardkit_execution = process\nrewardkit_timeout = 60\n"
    )
    mv.runpytest().assert_outcomes(passed=1)


def test_the_ini_timeout_bounds_each_call(mv: pytest.Pytester) -> None:
    mv.makefile(
        ".toml",
        golden_slow='[[reward]]\nreward = "mvrewards:slow"\nfields = { final_response = "x" }\nexpect = 1.0\n',
    )
    mv.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\nrewardkit_timeout = 0.5\n")
    result = mv.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*raised   : TimeoutError: reward 'slow' on the case took longer than 0.5 s"]
    )


def test_the_reward_case_fixture_runs_rewards_the_same_way(mv: pytest.Pytester) -> None:
    mv.makepyfile(
        test_fixture=textwrap.dedent(
            """
            import pytest
            from rewardkit.runtime.define.errors import SignalInThreadError
            from mvrewards import mv_default, mv_process

            FIELDS = {"final_response": "It is $\\\\frac{1}{2}$", "answer": "$0.5$"}

            def test_in_a_thread_it_fails(reward_case):
                with pytest.raises(SignalInThreadError):
                    reward_case(mv_default, **FIELDS)

            def test_in_a_process_it_scores(reward_case):
                assert reward_case(mv_process, **FIELDS).reward == 1.0

            async def test_awaited_in_a_process_it_scores(reward_case):
                assert (await reward_case.acall(mv_process, **FIELDS)).reward == 1.0
            """
        )
    )
    mv.runpytest().assert_outcomes(passed=3)


@pytest.mark.parametrize(
    ("ini", "message"),
    [
        (
            "rewardkit_execution = processes",
            "*rewardkit_execution must be one of inline, thread, process*",
        ),
        ("rewardkit_timeout = soon", "*rewardkit_timeout must be positive seconds, got 'soon'*"),
    ],
)
def test_bad_ini_options_are_usage_errors(plug: pytest.Pytester, ini: str, message: str) -> None:
    plug.makeini(f"[pytest]\nasyncio_default_fixture_loop_scope = function\n{ini}\n")
    result = plug.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_the_plugins_execution_modes_are_the_runtimes() -> None:
    """The plugin keeps its own copy (it imports nothing of rewardkit at start-up): the same modes."""
    from pytest_rewardkit.plugin import EXECUTION_MODES

    from rewardkit.runtime.define.options import EXECUTION_MODES as RUNTIME_MODES

    assert EXECUTION_MODES == RUNTIME_MODES
