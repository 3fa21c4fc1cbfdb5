"""``rewardkit.runtime.define.schema``: a reward's extras keys known before its first call, the same on every sample."""

from __future__ import annotations

import logging
import pickle
from typing import Any

import pytest
from adapter_rewards import dapo_like, exact, picky

from rewardkit import BaseReward, RewardResult, reward
from rewardkit.adapters import to_agentfly, to_openrlhf, to_trl, to_verl
from rewardkit.math.reward import math_reward
from rewardkit.qa import qa_f1_reward
from rewardkit.schema import ResultSchemaError, result_schema


def _grade(response: str, answer: str) -> dict[str, Any]:
    pred = response.split()[-1] if response.split() else ""
    return {"reward": float(pred == answer), "acc": pred == answer, "pred": pred}


@reward(auto_register=False)
def through_a_helper(final_response: str, answer: str) -> dict[str, Any]:
    if not final_response:
        raise ValueError("empty")
    return _grade(final_response, answer)


@reward(auto_register=False)
def built_locally(final_response: str) -> dict[str, Any]:
    result = {"reward": 0.0, "length": len(final_response)}
    if final_response.endswith("?"):
        result["question"] = True
        result["note"] = "asks back"
    return result


@reward(auto_register=False)
def numbers_only(final_response: str, answer: str) -> float:
    if not final_response:
        return 0
    return 1.0 if answer in final_response else -abs(len(final_response) - len(answer)) / 10


@reward(auto_register=False)
def conditional(final_response: str) -> Any:
    return {"reward": 1.0, "kind": "long"} if len(final_response) > 9 else RewardResult(0.0, {"size": 1})


@reward(auto_register=False)
async def asks_a_judge(final_response: str) -> Any:
    return await judge(final_response)  # type: ignore[name-defined]  # noqa: F821


@reward(auto_register=False)
def mutated_by_a_call(final_response: str) -> dict[str, Any]:
    result = {"reward": 1.0}
    add_metrics(result)  # type: ignore[name-defined]  # noqa: F821
    return result


@reward(auto_register=False, extra_keys={"verdict": str, "confidence": float})
async def declared_judge(final_response: str) -> Any:
    return await judge(final_response)  # type: ignore[name-defined]  # noqa: F821


class Stateful(BaseReward, auto_register=False):
    name = "schema_stateful"

    def call(self, final_response: str) -> dict[str, Any]:
        return dict(reward=1.0, hits=final_response.count("x"))


class StatefulDeclared(BaseReward, auto_register=False):
    name = "schema_stateful_declared"
    extra_keys = ("score_a",)

    def call(self, final_response: str) -> Any:
        return self.client(final_response)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("target", "keys", "kinds"),
    [
        (through_a_helper, ("acc", "pred"), {"acc": "number", "pred": "other"}),
        (built_locally, ("length", "question", "note"), {"length": "number", "question": "number", "note": "text"}),
        (numbers_only, (), {}),
        (conditional, ("kind", "size"), {"kind": "text", "size": "number"}),
        (exact, ("matched", "length"), {"matched": "number", "length": "number"}),
        (picky, (), {}),
        (dapo_like, ("acc", "pred"), {"acc": "number", "pred": "any"}),
        (qa_f1_reward, ("f1", "em", "precision", "recall"), dict.fromkeys(("f1", "em", "precision", "recall"), "number")),
    ],
    ids=lambda value: getattr(value, "name", None),
)
def test_keys_read_from_the_returns(target: Any, keys: tuple[str, ...], kinds: dict[str, str]) -> None:
    schema = result_schema(target)
    assert (schema.keys, dict(schema.kinds), schema.source) == (keys, kinds, "returns")
    assert dict(schema.fills) == dict.fromkeys(keys)


def test_keys_of_a_base_reward_and_a_lambda() -> None:
    assert result_schema(Stateful()).keys == ("hits",)
    assert result_schema(lambda final_response: {"reward": 1.0, "n": 2}).keys == ("n",)


def test_declared_keys_win_and_carry_kinds() -> None:
    schema = result_schema(declared_judge)
    assert (schema.keys, dict(schema.kinds), schema.source) == (
        ("verdict", "confidence"),
        {"verdict": "text", "confidence": "number"},
        "declared",
    )
    assert result_schema(StatefulDeclared()).keys == ("score_a",)
    assert result_schema(math_reward).kinds == {"correct": "number", "tag": "text", "reason": "text"}
    assert result_schema(through_a_helper, extra_keys=["acc"]).keys == ("acc",)  # the adapter's option first
    assert result_schema(asks_a_judge, extra_keys=()).keys == ()


@pytest.mark.parametrize(
    ("target", "why"),
    [
        (asks_a_judge, r"line \d+: it returns `await judge\(final_response\)`"),
        (mutated_by_a_call, r"line \d+: it returns `result`, a dict changed by calls or aliases"),
    ],
)
def test_unknown_keys_are_a_loud_error_naming_extra_keys(target: Any, why: str) -> None:
    with pytest.raises(ResultSchemaError, match=why) as caught:
        result_schema(target)
    message = str(caught.value)
    assert target.name in message
    assert "test_result_schema.py:" in message
    assert "extra_keys" in message
    # ... when the adapter is built, never at a sample.
    for wrap in (to_verl, to_trl, to_openrlhf, to_agentfly):
        with pytest.raises(ResultSchemaError, match="extra_keys"):
            wrap(target)


@pytest.mark.parametrize(
    ("extra_keys", "message"),
    [("acc", "not the string"), (["reward"], "cannot hold 'reward'"), (["a", "a"], "twice"), ([1], "non-empty string")],
)
def test_bad_declarations(extra_keys: Any, message: str) -> None:
    with pytest.raises((TypeError, ValueError), match=message):
        result_schema(exact, extra_keys=extra_keys)


def test_conform_fills_missing_drops_unknown_and_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    schema = result_schema(built_locally).with_fills({"question": False})
    assert schema.conform(None) == {"length": None, "question": False, "note": None}
    assert schema.conform({"length": 3}) == {"length": 3, "question": False, "note": None}
    with caplog.at_level(logging.WARNING, logger="rewardkit.schema"):
        assert schema.conform({"length": 3, "surprise": 1}) == {"length": 3, "question": False, "note": None}
        schema.conform({"length": 4, "question": True, "note": "n", "surprise": 2})
        assert schema.conform({"length": 5, "question": True, "other": 0}) == {"length": 5, "question": True, "note": None}
    assert caplog.text.count("'surprise'") == 1
    assert caplog.text.count("'other'") == 1  # as many keys as the schema, one of them unknown
    assert "extra_keys" in caplog.text
    assert pickle.loads(pickle.dumps(schema)).conform(None) == schema.conform(None)
