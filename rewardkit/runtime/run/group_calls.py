"""A group reward's call as one call of the per-sample runner: a group runs where a sample runs
(the same execution modes, ``"process"`` included, timeouts and failure rules)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from rewardkit.runtime.define.options import ExecutionMode
from rewardkit.runtime.define.rewards import as_reward
from rewardkit.runtime.run.execution import CONFIGURATION_ERRORS, SampleRunner


class GroupCall:
    """A group reward seen as a reward of one call per group: ``invoke({"samples": [...]})`` is
    ``invoke_group`` of those samples. What lets groups run on the per-sample path
    (``SampleRunner``): the same execution modes (``"process"`` included), timeouts, and failure
    rules (``StopIteration``, ``SystemExit``, a reward's own ``CancelledError`` are recorded as
    ``RewardAbortedError``; only ``KeyboardInterrupt`` propagates)."""

    is_group: ClassVar[bool] = True  # as_reward leaves it as it is (in a worker process too)
    binding = None  # a call ships its samples whole

    def __init__(self, reward: Any) -> None:
        self.reward = reward
        self.name: str = reward.name
        self.is_async: bool = reward.is_async
        self.timeout: float | None = getattr(reward, "timeout", None)
        self.execution: ExecutionMode | None = getattr(reward, "execution", None)
        self.__wrapped__ = getattr(reward, "__wrapped__", None) or type(reward)
        """What defines the reward (a worker process loads its module as the caller did)."""

    def invoke(self, call: Mapping[str, Any]) -> Any:
        return self.reward.invoke_group(call["samples"])

    def __reduce__(self) -> tuple[Any, ...]:
        return (GroupCall, (self.reward,))


class GroupCallReference:
    """Finds a ``GroupCall`` in a worker process through an adapter's ``RewardReference``."""

    def __init__(self, reference: Any) -> None:
        self.reference = reference

    def resolve(self) -> GroupCall:
        return GroupCall(as_reward(self.reference.resolve()))


def group_runner(
    reward: Any,
    *,
    execution: ExecutionMode | None = None,
    timeout: float | None = None,
    configuration: tuple[type[BaseException], ...] = CONFIGURATION_ERRORS,
    reference: Any = None,
) -> SampleRunner:
    """The runner of ``reward``'s group calls: ``await runner.run({"samples": group}, where)``
    returns one ``RewardResult`` per sample or raises ``SampleFailure``. A sync group reward
    runs in ``reward_threads`` unless ``execution`` (or the reward) says otherwise."""
    return SampleRunner(
        GroupCall(reward),
        execution=execution,
        timeout=timeout,
        untimed="thread",
        place="the group of {}",
        configuration=configuration,
        reference=None if reference is None else GroupCallReference(reference),
    )


def describe_group(indices: Sequence[int]) -> str:
    """``samples[0, 1, 2]``: the samples of a group, for error messages."""
    shown = ", ".join(str(index) for index in indices[:8])
    return f"samples[{shown}{', ...' if len(indices) > 8 else ''}]"


__all__ = ["GroupCall", "GroupCallReference", "describe_group", "group_runner"]
