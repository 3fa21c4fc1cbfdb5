"""The base of every rule: metadata, VALID/INVALID examples, and hooks over collected facts."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rewardkit.checks.config import PRESETS, CheckConfig, TaskField
from rewardkit.checks.model import Diagnostic, Fix, Severity, Span

if TYPE_CHECKING:
    from rewardkit.checks.discovery import ClassFacts, GroupRewardFacts
    from rewardkit.checks.facts import RewardFacts


@dataclass(frozen=True)
class Invalid:
    """An example a rule must flag: its source, the 1-based line of the diagnostic and the source
    after applying the diagnostic's first fix (required when the rule has a ``TRANSFORM``)."""

    code: str
    line: int
    expected_fix: str | None = None
    task_fields: tuple[str, ...] | None = None
    """The task fields declared when it is checked (``None``: the rule's ``EXAMPLE_TASK_FIELDS``)."""
    preset: str | None = None
    """The ``preset`` configured when it is checked."""


@dataclass(frozen=True)
class Valid:
    """An example a rule must leave alone, checked under a configuration of its own (plain
    strings in ``VALID`` use the rule's ``EXAMPLE_TASK_FIELDS``)."""

    code: str
    task_fields: tuple[str, ...] | None = None
    preset: str | None = None


Example = str | Valid | Invalid


class Rule:
    """Base of all rules: metadata plus hooks that turn collected facts into diagnostics."""

    code: ClassVar[str]
    severity: ClassVar[Severity]
    summary: ClassVar[str]
    """One line for the rule reference."""
    VALID: ClassVar[tuple[str | Valid, ...]] = ()
    INVALID: ClassVar[tuple[Invalid, ...]] = ()
    TRANSFORM: ClassVar[str | None] = None
    """The transform its fixes apply (one of :data:`rewardkit.checks.fixes.TRANSFORM_KINDS`,
    run by :mod:`rewardkit.checks.transforms`); ``None``: the rule has no fix. Every ``INVALID``
    example of a rule with a fix sets ``expected_fix`` (a test holds both)."""
    EXAMPLE_TASK_FIELDS: ClassVar[tuple[str, ...]] = ()
    """Task fields declared when the examples are checked (RK101 and RK104 need some)."""
    EXAMPLE_FRAMEWORK_REWARDS: ClassVar[tuple[tuple[str, str], ...]] = ()
    """(framework, function) pairs configured as ``framework_rewards`` when the examples are checked."""

    @classmethod
    def example_settings(cls, example: Example) -> tuple[tuple[str, ...], str | None]:
        """(task fields, preset) an example is checked with."""
        if isinstance(example, str):
            return cls.EXAMPLE_TASK_FIELDS, None
        fields = example.task_fields if example.task_fields is not None else cls.EXAMPLE_TASK_FIELDS
        return fields, example.preset

    @classmethod
    def example_config(cls, example: Example) -> CheckConfig:
        """The configuration an example is checked with."""
        fields, preset = cls.example_settings(example)
        return CheckConfig(
            task_fields={name: TaskField(name, "pyproject") for name in fields},
            injected_fields=PRESETS[preset] if preset else {},
            preset=preset,
            framework_rewards=cls.EXAMPLE_FRAMEWORK_REWARDS,
        )

    def check_reward(self, facts: RewardFacts, config: CheckConfig) -> Iterable[Diagnostic]:
        """Diagnostics for one reward function (or ``call`` method)."""
        return ()

    def check_framework(self, facts: RewardFacts, config: CheckConfig) -> Iterable[Diagnostic]:
        """Diagnostics for one framework function (``facts.framework``: ``trl`` or ``verl``)."""
        return ()

    def check_class(self, facts: ClassFacts, config: CheckConfig) -> Iterable[Diagnostic]:
        """Diagnostics for one ``BaseReward`` subclass."""
        return ()

    def check_group(self, facts: GroupRewardFacts, config: CheckConfig) -> Iterable[Diagnostic]:
        """Diagnostics for one ``@group_reward`` function."""
        return ()

    @classmethod
    def diagnostic(
        cls,
        span: Span,
        message: str,
        *,
        fixes: Sequence[Fix] = (),
        data: dict[str, Any] | None = None,
    ) -> Diagnostic:
        """A diagnostic of this rule at ``span``."""
        return Diagnostic(
            code=cls.code,
            severity=cls.severity,
            message=message,
            line=span.line,
            column=span.column,
            end_line=span.end_line,
            end_column=span.end_column,
            fixes=tuple(fixes),
            data=data,
        )


def reward_data(reward: RewardFacts, **values: Any) -> dict[str, Any]:
    """A diagnostic's ``data``: the reward's name and rule-specific values."""
    return {"reward": reward.definition.name or reward.definition.function_name, **values}
