"""The runtime's typed errors: each message names the reward and what went wrong, so a
misconfigured reward fails at the first sample instead of silently training on zeros."""

from __future__ import annotations

from collections.abc import Sequence


def describe_error(exc: BaseException) -> str:
    """``"<type>: <message>"``: how a recorded failure reads in a result's ``error`` extra."""
    return f"{type(exc).__name__}: {str(exc) or '(no message)'}"


class RewardError(Exception):
    """Base class of every error the reward runtime raises on bad rewards or bad fields."""


class MissingFieldError(RewardError, TypeError):
    """A reward declares a required parameter that no field of the sample supplies.

    Also a ``TypeError``: it replaces the ``TypeError`` Python would raise for the call.
    """

    def __init__(
        self,
        message: str,
        *,
        reward_name: str,
        parameter: str,
        available: Sequence[str],
        suggestion: str | None,
    ) -> None:
        super().__init__(message)
        self.reward_name = reward_name
        self.parameter = parameter
        self.available = tuple(available)
        self.suggestion = suggestion


class FieldCollisionError(RewardError, TypeError):
    """A task field has the name of a predefined field (``final_response``, ``trajectory``, ...).

    Raised instead of Python's "got multiple values for keyword argument".
    """

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


class RewardShapeError(RewardError, TypeError, ValueError):
    """A reward returned something that is not a reward: ``None``, a dict without ``reward``, a string...

    A ``TypeError`` (a value of the wrong type) and a ``ValueError``: AgentFly's runtime raises
    ``ValueError`` for a bad return shape, so code written for it catches this too.
    """


class RewardValueError(RewardError, ValueError):
    """A reward returned a NaN or infinite value, which would poison training."""


class RewardRegistryError(RewardError):
    """Two different definitions claim one reward name, or a built-in reward cannot be loaded."""


class ResourceTimeoutError(RewardError, TimeoutError):
    """No instance of a shared resource became free within the acquire timeout."""


class UnknownRewardError(RewardError, KeyError):
    """``get_reward`` was asked for a name nobody registered; the message lists close matches."""

    def __str__(self) -> str:  # KeyError would show the message quoted
        return str(self.args[0]) if self.args else ""
