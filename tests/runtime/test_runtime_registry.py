"""The registry: lookups, conflicts, reloads, and lazily imported built-ins."""

from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rewardkit import RewardRegistryError, UnknownRewardError, get_reward, list_rewards, reward
from rewardkit.builtin_rewards import BUILTIN_REWARDS


@pytest.fixture
def module_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder on sys.path for reward modules written by the test; they are unloaded after."""
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        del sys.modules[name]


def write_module(folder: Path, name: str, body: str) -> Path:
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    importlib.invalidate_caches()
    return path


def test_lookup_is_case_insensitive_and_lists_names() -> None:
    @reward(name="Runtime_Case_Test")
    def cased(final_response: str) -> float:
        return 1.0

    assert get_reward("runtime_case_test") is cased
    assert get_reward("RUNTIME_CASE_TEST") is cased
    assert "Runtime_Case_Test" in list_rewards()


def test_unknown_name_raises_key_error_with_close_matches() -> None:
    @reward(name="runtime_exact_match")
    def exact(final_response: str) -> float:
        return 1.0

    with pytest.raises(KeyError) as caught:
        get_reward("runtime_exact_mach")
    assert isinstance(caught.value, UnknownRewardError)
    assert str(caught.value) == "no reward named 'runtime_exact_mach'; did you mean 'runtime_exact_match'?"


def test_unknown_name_without_close_match_lists_known_rewards() -> None:
    with pytest.raises(KeyError, match=r"known rewards: .*qa_f1_reward"):
        get_reward("zzzzzz")


def test_two_user_definitions_under_one_name_name_both(module_dir: Path) -> None:
    write_module(module_dir, "rk_first", """
        from rewardkit import reward

        @reward(name="duplicate_name")
        def first(final_response: str) -> float:
            return 1.0
    """)
    write_module(module_dir, "rk_second", """
        from rewardkit import reward


        @reward(name="Duplicate_Name")
        def second(final_response: str) -> float:
            return 0.0
    """)
    importlib.import_module("rk_first")
    with pytest.raises(RewardRegistryError) as caught:
        importlib.import_module("rk_second")
    message = str(caught.value)
    assert "rk_first:4" in message
    assert "rk_second:5" in message
    assert "first" in message
    assert "second" in message


def test_module_reload_replaces_the_registration(module_dir: Path) -> None:
    path = write_module(module_dir, "rk_reloaded", """
        from rewardkit import reward

        @reward
        def reloaded_reward(final_response: str) -> float:
            return 1.0
    """)
    module = importlib.import_module("rk_reloaded")
    assert get_reward("reloaded_reward")(final_response="x").reward == 1.0
    path.write_text(path.read_text().replace("return 1.0", "return 0.5"))
    importlib.invalidate_caches()
    sys.modules["rk_reloaded"].__cached__ = None
    module = importlib.reload(module)
    assert get_reward("reloaded_reward") is module.reloaded_reward
    assert get_reward("reloaded_reward")(final_response="x").reward == 0.5


def test_base_reward_class_conflicts_with_a_function_of_the_same_name(module_dir: Path) -> None:
    write_module(module_dir, "rk_class_conflict", """
        from rewardkit import BaseReward, reward

        @reward(name="judge")
        def judge(final_response: str) -> float:
            return 1.0

        class Judge(BaseReward):
            name = "judge"

            def call(self, final_response: str) -> float:
                return 0.0
    """)
    with pytest.raises(RewardRegistryError, match=r"rk_class_conflict:4 .*rk_class_conflict:8"):
        importlib.import_module("rk_class_conflict")


def test_auto_register_false_stays_out_of_the_registry() -> None:
    @reward(name="runtime_unregistered", auto_register=False)
    def hidden(final_response: str) -> float:
        return 1.0

    with pytest.raises(KeyError):
        get_reward("runtime_unregistered")


def test_user_reward_named_like_a_builtin_takes_the_name_before_the_builtin_loads() -> None:
    sys.modules.pop("rewardkit.qa", None)

    @reward(name="qa_f1_reward")
    def user_qa(final_response: str, answer: str) -> float:
        return 0.25

    assert get_reward("qa_f1_reward") is user_qa
    importlib.import_module("rewardkit.qa")  # the built-in's module loading later does not take it back
    assert get_reward("qa_f1_reward") is user_qa
    assert list_rewards().count("qa_f1_reward") == 1


def test_user_reward_named_like_a_builtin_takes_the_name_after_the_builtin_loaded() -> None:
    builtin = get_reward("qa_f1_reward")
    assert builtin.__module__ == "rewardkit.qa"

    @reward(name="QA_F1_REWARD")
    def user_qa(final_response: str, answer: str) -> float:
        return 0.25

    assert get_reward("qa_f1_reward") is user_qa


def test_builtins_are_listed_and_imported_only_on_demand() -> None:
    code = textwrap.dedent("""
        import sys
        import rewardkit
        heavy = [m for m in ("rewardkit.qa", "rewardkit.math", "sympy", "latex2sympy2_extended", "numpy")
                 if m in sys.modules]
        assert heavy == [], heavy
        assert {"math_reward", "qa_f1_reward"} <= set(rewardkit.list_rewards())
        assert "rewardkit.qa" not in sys.modules
        qa = rewardkit.get_reward("qa_f1_reward")
        assert "rewardkit.qa" in sys.modules and qa.__module__ == "rewardkit.qa"
        print("ok")
    """)
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "ok"


def test_math_reward_is_a_lazily_imported_builtin() -> None:
    assert BUILTIN_REWARDS["math_reward"] == "rewardkit.math.reward"
    math_reward = get_reward("Math_Reward")
    assert math_reward.name == "math_reward"
    assert math_reward.__module__ == "rewardkit.math.reward"
    assert {"final_response", "answer"} <= set(math_reward.parameters)
    assert math_reward(final_response=r"so \boxed{4}", answer="4").reward == 1.0


def test_a_name_that_is_not_a_string_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="a reward name must be a string, got 3"):
        get_reward(3)  # type: ignore[arg-type]
