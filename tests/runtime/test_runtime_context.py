"""Context and shared resources: rollout sharing, the global pool, timeouts and cleanup."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from rewardkit import (
    Context,
    ResourceManager,
    ResourceSpec,
    ResourceTimeoutError,
    RewardError,
    RewardResult,
    calculate_reward,
    calculate_rewards,
    reward,
)


class WebShopEnv:
    """A small stateful stand-in for the WebShop environment: a cart the tool fills."""

    instances: list[WebShopEnv] = []  # noqa: RUF012

    def __init__(self) -> None:
        self.cart: list[str] = []
        self.closed = False
        WebShopEnv.instances.append(self)

    async def step(self, action: str, value: str = "") -> dict[str, Any]:
        await asyncio.sleep(0)
        if action == "add_to_cart":
            self.cart.append(value)
            return {"observation": f"added {value}"}
        if action == "get_reward":
            return {"reward": 1.0 if "blue shirt" in self.cart else 0.0, "cart": list(self.cart)}
        raise ValueError(f"unknown action {action!r}")

    async def close(self) -> None:
        self.closed = True


@pytest.fixture
def resources() -> ResourceManager:
    WebShopEnv.instances.clear()
    return ResourceManager()


async def test_seed_webshop_pattern_tool_and_reward_share_one_env(resources: ResourceManager) -> None:
    # AgentFly's documented example, imports switched to rewardkit.
    WebShopSpec = ResourceSpec(key="webshop", factory=WebShopEnv, close=lambda env: env.close())

    async def webshop_browser(action: str, value: str, context: Context) -> str:
        env = await context.acquire_resource(spec=WebShopSpec, id=context.rollout_id, scope="rollout", backend="local")
        result = await env.step(action, value)
        return result["observation"]

    @reward(name="webshop_reward")
    async def webshop_reward(final_response: str, context: Context, **data: Any) -> dict:
        env = await context.acquire_resource(spec=WebShopSpec, id=context.rollout_id, scope="rollout", backend="local")
        result = await env.step("get_reward")
        return {"reward": result["reward"], "cart_size": len(result["cart"])}

    async with Context(rollout_id="rollout-1", resources=resources) as context:
        tool_context = Context(rollout_id="rollout-1", resources=resources)  # the tool's own view of the rollout
        assert await webshop_browser("add_to_cart", "blue shirt", tool_context) == "added blue shirt"
        result = await calculate_reward(webshop_reward, final_response="bought it", context=context, task_id=3)
    assert result == RewardResult(1.0, {"cart_size": 1})
    assert len(WebShopEnv.instances) == 1
    assert WebShopEnv.instances[0].closed  # ended with the rollout


async def test_rollouts_get_their_own_instances_and_concurrent_acquires_share_one(resources: ResourceManager) -> None:
    created: list[int] = []

    async def slow_factory() -> dict[str, int]:
        await asyncio.sleep(0.01)
        created.append(1)
        return {"n": len(created)}

    spec = ResourceSpec(key="env", factory=slow_factory)
    first = Context("a", resources=resources)
    second = Context("b", resources=resources)
    same = await asyncio.gather(*(first.acquire_resource(spec) for _ in range(5)))
    assert all(env is same[0] for env in same)
    other = await second.acquire_resource(spec)
    assert other is not same[0]
    assert len(created) == 2


async def test_global_scope_waits_for_a_free_instance_and_times_out(resources: ResourceManager) -> None:
    spec = ResourceSpec(key="browser", factory=object, max_instances=1)
    holder = Context("holder", resources=resources)
    waiter = Context("waiter", resources=resources)
    held = await holder.acquire_resource(spec, scope="global")
    assert await holder.acquire_resource(spec, scope="global") is held  # same rollout: same instance

    with pytest.raises(ResourceTimeoutError) as caught:
        await waiter.acquire_resource(spec, scope="global", timeout=0.05)
    assert "resource 'browser'" in str(caught.value)
    assert "max_instances=1" in str(caught.value)
    assert isinstance(caught.value, RewardError)

    pending = asyncio.ensure_future(waiter.acquire_resource(spec, scope="global", timeout=5))
    await asyncio.sleep(0.01)
    assert not pending.done()
    await holder.release_resource("global")
    assert await pending is held  # handed over, not re-created
    assert resources.in_use("browser") == 1


async def test_global_instances_are_reused_across_rollouts(resources: ResourceManager) -> None:
    spec = ResourceSpec(key="pool", factory=object, max_instances=2)
    seen = []
    for rollout in range(5):
        async with Context(f"r{rollout}", resources=resources) as context:
            seen.append(await context.acquire_resource(spec, scope="global"))
    assert len({id(instance) for instance in seen}) == 1
    assert resources.in_use("pool") == 1


async def test_cleanup_runs_when_the_reward_raises_and_no_waiter_is_left_hanging(resources: ResourceManager) -> None:
    closed: list[object] = []
    spec_global = ResourceSpec(key="judge", factory=object, close=closed.append, max_instances=1)
    spec_rollout = ResourceSpec(key="sandbox", factory=list, close=closed.append)

    @reward(auto_register=False)
    async def crashes(context: Context) -> float:
        await context.acquire_resource(spec_global, scope="global")
        await context.acquire_resource(spec_rollout)
        raise RuntimeError("reward bug")

    @reward(auto_register=False)
    async def patient(context: Context) -> float:
        await context.acquire_resource(spec_global, scope="global", timeout=5)
        return 1.0

    async def run(reward_fn: Any, rollout_id: str) -> RewardResult | None:
        async with Context(rollout_id, resources=resources) as context:
            return await calculate_reward(reward_fn, context=context)

    outcomes = await asyncio.gather(run(crashes, "r1"), run(patient, "r2"), return_exceptions=True)
    assert isinstance(outcomes[0], RuntimeError)
    assert outcomes[1] == RewardResult(1.0)
    assert len(closed) == 1
    assert isinstance(closed[0], list)
    assert resources.in_use("judge") == 1  # the global one went back to the pool


async def test_a_cancelled_waiter_does_not_swallow_an_instance(resources: ResourceManager) -> None:
    spec = ResourceSpec(key="single", factory=object, max_instances=1)
    holder = Context("h", resources=resources)
    instance = await holder.acquire_resource(spec, scope="global")
    cancelled_waiter = asyncio.ensure_future(Context("c", resources=resources).acquire_resource(spec, scope="global"))
    await asyncio.sleep(0.01)
    cancelled_waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled_waiter
    await holder.release_resource("global")
    assert await Context("n", resources=resources).acquire_resource(spec, scope="global", timeout=1) is instance


async def test_failing_factory_frees_its_place_in_the_pool(resources: ResourceManager) -> None:
    attempts = 0

    def flaky() -> object:
        nonlocal attempts
        attempts += 1
        if attempts == 1:
            raise ConnectionError("backend down")
        return object()

    spec = ResourceSpec(key="flaky", factory=flaky, max_instances=1)
    with pytest.raises(ConnectionError):
        await Context("a", resources=resources).acquire_resource(spec, scope="global")
    assert await Context("b", resources=resources).acquire_resource(spec, scope="global", timeout=1) is not None


async def test_end_resource_global_closes_and_frees_capacity(resources: ResourceManager) -> None:
    closed: list[object] = []

    async def close(instance: object) -> None:
        closed.append(instance)

    spec = ResourceSpec(key="gpu", factory=object, close=close, max_instances=1)
    context = Context("a", resources=resources)
    first = await context.acquire_resource(spec, scope="global")
    await context.end_resource("global")
    assert closed == [first]
    assert resources.in_use("gpu") == 0
    second = await Context("b", resources=resources).acquire_resource(spec, scope="global", timeout=1)
    assert second is not first
    await resources.aclose()
    assert closed == [first, second]


async def test_close_errors_do_not_stop_other_closes(resources: ResourceManager) -> None:
    closed: list[str] = []

    def bad_close(instance: object) -> None:
        raise OSError("close failed")

    bad = ResourceSpec(key="bad", factory=object, close=bad_close)
    good = ResourceSpec(key="good", factory=object, close=lambda _: closed.append("good"))
    context = Context("r", resources=resources)
    await context.acquire_resource(bad)
    await context.acquire_resource(good)
    with pytest.raises(OSError, match="close failed"):
        await context.end_resource()
    assert closed == ["good"]


async def test_context_fields_and_argument_errors(resources: ResourceManager) -> None:
    context = Context("r1", group_id="g", metadata={"split": "train"}, final_response="42",
                      trajectory=[{"role": "user", "content": "6*7?"}], resources=resources)
    assert (context.rollout_id, context.group_id, context.metadata, context.final_response) == (
        "r1", "g", {"split": "train"}, "42")
    assert context.trajectory[0]["content"] == "6*7?"
    assert Context("r2").metadata == {}
    assert Context("r2").trajectory == []
    spec = ResourceSpec(key="k", factory=object)
    with pytest.raises(ValueError, match="backend 'ray' is not supported"):
        await context.acquire_resource(spec, backend="ray")
    with pytest.raises(ValueError, match="scope must be 'rollout' or 'global'"):
        await context.acquire_resource(spec, scope="session")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="spec must be a ResourceSpec"):
        await context.acquire_resource("k")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_instances must be a positive integer"):
        ResourceSpec(key="k", factory=object, max_instances=0)
    with pytest.raises(ValueError, match="rollout_id must be a non-empty string"):
        Context("")


async def test_one_key_cannot_name_two_different_specs(resources: ResourceManager) -> None:
    context = Context("r", resources=resources)
    await context.acquire_resource(ResourceSpec(key="env", factory=list))
    assert await context.acquire_resource(ResourceSpec(key="env", factory=list)) == []  # equal spec: fine
    with pytest.raises(ValueError, match=r"resource key 'env' names two different specs"):
        await context.acquire_resource(ResourceSpec(key="env", factory=dict))
    await context.acquire_resource(ResourceSpec(key="pool", factory=list), scope="global")
    with pytest.raises(ValueError, match=r"resource key 'pool' names two different specs"):
        await Context("other", resources=resources).acquire_resource(
            ResourceSpec(key="pool", factory=list, max_instances=3), scope="global"
        )


async def test_contexts_through_a_batch(resources: ResourceManager) -> None:
    spec = ResourceSpec(key="counter", factory=lambda: {"calls": 0})

    @reward(auto_register=False)
    async def counts(context: Context, id: str) -> float:
        env = await context.acquire_resource(spec)
        env["calls"] += 1
        assert id == context.rollout_id
        return float(env["calls"])

    contexts = [Context(f"r{i // 2}", resources=resources) for i in range(6)]
    results = await calculate_rewards(counts, [{"context": c, "id": c.rollout_id} for c in contexts], concurrency=1)
    assert [r.reward for r in results] == [1.0, 2.0, 1.0, 2.0, 1.0, 2.0]
    await resources.aclose()


@pytest.mark.parametrize("scope", ["global", "rollout"])
async def test_an_acquire_still_waiting_when_its_rollout_ends_hands_the_instance_back(
    resources: ResourceManager, scope: str
) -> None:
    closed: list[object] = []
    gate = asyncio.Event()

    async def slow_factory() -> object:
        await gate.wait()
        return object()

    spec = ResourceSpec(key=f"late-{scope}", factory=slow_factory, close=closed.append, max_instances=1)
    rollout = Context("ended", resources=resources)
    # A tool still waiting for the resource when the rollout's cleanup runs (e.g. a task the
    # reward started and never awaited): the cleanup cannot see an instance not made yet.
    late = asyncio.ensure_future(rollout.acquire_resource(spec, scope=scope))  # type: ignore[arg-type]
    await asyncio.sleep(0.01)
    await rollout.close()
    gate.set()
    with pytest.raises(RuntimeError, match=rf"resource 'late-{scope}' for 'ended': the rollout ended"):
        await late
    if scope == "rollout":
        assert len(closed) == 1  # closed, not leaked
    else:
        # returned to the pool: the next rollout gets it at once instead of timing out
        assert resources.in_use(spec.key) == 1
        assert await Context("next", resources=resources).acquire_resource(spec, scope="global", timeout=1) is not None
        assert resources.in_use(spec.key) == 1
