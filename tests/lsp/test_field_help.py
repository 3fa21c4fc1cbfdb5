"""Hover and completion text from the engine's reward definitions (pure functions, no server)."""

from __future__ import annotations

from rewardkit_lsp.field_help import field_completions, hover_text, parameter_at

from rewardkit.checks import CheckConfig, ModuleAnalyzer, TaskField

SOURCE = (
    "from agentfly.rewards import reward\nfrom agentfly.envs import CodeEnv\n\n"
    "@reward(name='code', env_cls=CodeEnv, pool_size=8)\n"
    "async def code(final_response, answer, env):\n"
    "    return float(await env.step(final_response) == answer)\n"
)
CONFIG = CheckConfig(task_fields={"answer": TaskField("answer", "editor", "rewardkit.taskFields")})


def test_env_of_an_env_cls_reward_is_explained_and_offered() -> None:
    [reward] = ModuleAnalyzer().analyze(SOURCE, None, CONFIG).rewards
    line = SOURCE.splitlines()[4]
    found = parameter_at((reward,), 5, line.index("env"))
    assert found is not None
    assert "an instance of the decorator's `env_cls`" in hover_text(*found, CONFIG)
    answer = parameter_at((reward,), 5, line.index("answer"))
    assert answer is not None
    assert "declared in the editor settings (rewardkit.taskFields)" in hover_text(*answer, CONFIG)
    labels = [item["label"] for item in field_completions(reward, CONFIG, 5, line.index(" env"))]
    assert "env" not in labels  # already declared
    assert {"trajectory", "context", "id"} <= set(labels)
