"""Realistic reward modules that are correct: the checks must stay silent on them (no false positives).

AgentFly-style rewards (``env_cls`` environments, injected ids), every way a body can end in
``return``/``raise``, awaited ``Context`` calls in all their spellings, a ``BaseReward`` base
class whose subclasses only set ``name``. Checked with ``GOOD_TASK_FIELDS`` and the AgentFly preset.
"""

AGENTFLY_STYLE = r'''"""AgentFly-style rewards."""
from __future__ import annotations

import asyncio
import json
import math
import re
from typing import Any

from agentfly.rewards.reward_base import reward
from agentfly.envs.python_env import PythonSandboxEnv


def _extract_code(text: str) -> str | None:
    match = re.search(r"```python\n(.*?)```", text, re.S)
    return match.group(1) if match else None


@reward(name="code_reward", env_cls=PythonSandboxEnv, pool_size=16)
async def code_reward(final_response: str, test_cases: list[str], env) -> dict[str, Any]:
    code = _extract_code(final_response)
    if code is None:
        return {"reward": 0.0, "passed": 0, "total": len(test_cases)}
    passed = 0
    for case in test_cases:
        out = await env.step(code + "\n" + case)
        if "Error" not in out:
            passed += 1
    return {"reward": passed / max(1, len(test_cases)), "passed": passed, "total": len(test_cases)}


@reward(name="tool_use_reward")
def tool_use_reward(final_response, trajectory, gold_actions, finish_reason=None):
    used = [m for m in trajectory if m.get("role") == "tool"]
    if finish_reason == "length":
        return 0.0
    score = len(used) / max(1, len(gold_actions))
    result = {"reward": min(1.0, score)}
    result["n_tools"] = len(used)
    return result


@reward(name="loop_reward")
def loop_reward(final_response):
    for line in final_response.splitlines():
        if line.startswith("ANSWER:"):
            return 1.0
    else:
        return 0.0


@reward(name="while_reward")
def while_reward(final_response):
    attempts = 0
    while True:
        attempts += 1
        if attempts > 3:
            return 0.0
        if final_response:
            return 1.0


@reward(name="match_reward")
def match_reward(final_response, answer):
    match answer:
        case "yes":
            return float("yes" in final_response)
        case _:
            return 0.0


@reward(name="try_reward")
def try_reward(final_response, answer):
    try:
        value = float(final_response)
    except ValueError:
        return 0.0
    else:
        return float(math.isclose(value, float(answer)))


@reward(name="with_reward")
def with_reward(final_response):
    with open("/dev/null") as f:
        return float(bool(f))


@reward(name="assert_reward")
def assert_reward(final_response):
    assert final_response is not None
    return 1.0


@reward(name="sys_exit_reward")
def exit_reward(final_response):
    if not final_response:
        raise SystemExit(1)
    return 1.0


@reward(name="json_reward")
def json_reward(final_response: str, answer: str) -> float:
    try:
        data = json.loads(final_response)
    except json.JSONDecodeError:
        return 0.0
    return float(data.get("answer") == answer)


@reward(name="gather_reward")
async def gather_reward(final_response, context, question):
    judge, sandbox = await asyncio.gather(
        context.acquire_resource("judge"), context.acquire_resource("sandbox")
    )
    task = asyncio.create_task(context.acquire_resource("x"))
    extra = await task
    return await judge.score(question, final_response)


@reward(name="deferred_await")
async def deferred(final_response, context):
    pending = context.acquire_resource("judge")
    judge = await pending
    try:
        return await judge.score(final_response)
    finally:
        await context.release_resource(judge)


@reward(name="to_thread")
async def to_thread(final_response):
    import subprocess
    result = await asyncio.to_thread(subprocess.run, ["true"])
    return float(result.returncode == 0)


@reward(name="kwargs_only")
def kwargs_only(*, final_response, answer):
    return float(final_response == answer)


@reward(name="ids")
def ids(final_response, id, chain_id, group_id, chain_idx, group_idx):
    return 1.0


@reward(name="nested_helper")
def nested_helper(final_response):
    def inner(x):
        if x:
            return None
    inner(final_response)
    return 1.0


@reward(name="lambda_default")
def lambda_default(final_response, answer=""):
    key = lambda s: s.strip()
    return float(key(final_response) == key(answer))


@reward(name="ternary_none", none_as_zero=True)
def maybe(final_response):
    return None if not final_response else 1.0


@reward(name="os_exit")
def os_exit(final_response):
    if final_response:
        return 1.0
    raise NotImplementedError


@reward(name="numpy_reward")
def numpy_reward(final_response, answer):
    import numpy as np
    scores = np.array([1.0, 0.0])
    return float(np.mean(scores))


@reward(name="tuple_like")
def tuple_like(final_response, answer):
    f1 = 0.5
    return {"reward": f1, **{"extra": 1}}
'''

CLASSES_AND_CONTEXT = r'''from typing import Any
import rewardkit as rk
from rewardkit import BaseReward, Context


class JudgeBase(BaseReward):
    """Shared judge logic; subclasses pick the rubric."""

    rubric = "default"

    async def call(self, final_response: str, question: str, context: Context) -> float:
        judge = await context.acquire_resource("judge")
        return await judge.score(question, final_response, rubric=self.rubric)


class StrictJudge(JudgeBase):
    name = "strict_judge"
    rubric = "strict"


class LenientJudge(JudgeBase):
    name = "lenient_judge"
    rubric = "lenient"


@rk.reward(name="ctx_reward")
async def ctx_reward(final_response: str, context: Context) -> float:
    box = await context.acquire_resource("sandbox")
    return float(await box.run(final_response))


@rk.reward(name="typed")
def typed(final_response: str, answer: str, **_: Any) -> dict[str, float]:
    metrics: dict[str, float] = {}
    metrics["reward"] = float(final_response == answer)
    metrics["len"] = float(len(final_response))
    return metrics


@rk.reward(name="early")
def early(final_response: str, answer: str) -> float:
    if not final_response:
        return 0.0
    try:
        return float(final_response.strip() == answer.strip())
    except AttributeError:
        return 0.0


@rk.reward(name="gen_like")
def gen_like(final_response: str) -> float:
    scores = [1.0 for _ in final_response]
    return sum(scores) / max(1, len(scores))


@rk.reward(name="conditional_dict")
def conditional_dict(final_response: str, answer: str):
    result = {"reward": 0.0, "matched": False}
    if final_response == answer:
        result.update(reward=1.0, matched=True)
    return result


@rk.reward(name="star_import_like")
def uses_kwargs(**fields):
    return float(fields.get("final_response") == fields.get("answer"))
'''

GOOD_MODULES = {"agentfly_style": AGENTFLY_STYLE, "classes_and_context": CLASSES_AND_CONTEXT}
GOOD_TASK_FIELDS = ("answer", "question", "test_cases", "gold_actions")
