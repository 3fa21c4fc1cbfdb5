"""The base of every rule: metadata, VALID/INVALID examples, and hooks over collected facts."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rewardkit.checks.model import Diagnostic, Fix, Severity, Span

if TYPE_CHECKING:
    from rewardkit.checks.config import CheckConfig
    from rewardkit.checks.discovery import ClassFacts, RewardFacts


@dataclass(frozen=True)
class Invalid:
    """An example a rule must flag: its source, the 1-based line of the diagnostic and, optionally,
    the source after applying the diagnostic's first fix."""

    code: str
    line: int
    expected_fix: str | None = None


class Rule:
    """Base of all rules: metadata plus hooks that turn collected facts into diagnostics."""

    code: ClassVar[str]
    severity: ClassVar[Severity]
    summary: ClassVar[str]
    """One line for the rule reference."""
    VALID: ClassVar[tuple[str, ...]] = ()
    INVALID: ClassVar[tuple[Invalid, ...]] = ()
    EXAMPLE_TASK_FIELDS: ClassVar[tuple[str, ...]] = ()
    """Task fields declared when the examples are checked (RK101 and RK104 need some)."""

    def check_reward(self, facts: RewardFacts, config: CheckConfig) -> Iterable[Diagnostic]:
        """Diagnostics for one reward function (or ``call`` method)."""
        return ()

    def check_class(self, facts: ClassFacts, config: CheckConfig) -> Iterable[Diagnostic]:
        """Diagnostics for one ``BaseReward`` subclass."""
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
