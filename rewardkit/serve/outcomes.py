"""What one served sample comes back as: its reward, its extras (the reward's fixed key set) and,
when it failed, a typed ``SampleFailure``. Pure data, shared by the server and the client."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from rewardkit.adapters.messages import AdapterInputError
from rewardkit.runtime.define.errors import MissingFieldError, RewardShapeError, RewardValueError


class FailureKind(str, Enum):
    """Why a served sample failed (its ``failure.tag``); the batch around it still succeeds."""

    TIMEOUT = "timeout"
    """The reward took longer than the per-sample timeout (or never got a thread in time)."""
    REWARD_ERROR = "reward_error"
    """The reward raised."""
    BAD_RESULT = "bad_result"
    """The reward returned something that is not a reward (``None``, NaN, a dict without ``reward``)."""
    BAD_SAMPLE = "bad_sample"
    """The sample could not be turned into the reward's fields (a required field missing, a
    query that does not contain its prompt)."""

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class SampleFailure:
    """A failed sample: ``tag`` (a ``FailureKind`` value), the exception's ``type`` and ``message``."""

    tag: str
    type: str
    message: str

    @classmethod
    def of(cls, exc: BaseException, *, timed_out: bool = False) -> SampleFailure:
        """Classify ``exc``, raised while scoring one sample (``exc.original``, when set, is the
        error it stands for: a field error found before the call)."""
        exc = getattr(exc, "original", None) or exc
        if timed_out:
            kind = FailureKind.TIMEOUT
        elif isinstance(exc, (AdapterInputError, MissingFieldError)):
            kind = FailureKind.BAD_SAMPLE
        elif isinstance(exc, (RewardShapeError, RewardValueError)):
            kind = FailureKind.BAD_RESULT
        else:
            kind = FailureKind.REWARD_ERROR
        return cls(kind.value, type(exc).__name__, str(exc) or "(no message)")

    @property
    def text(self) -> str:
        """``"<type>: <message>"``, as adapters write a failure in their ``error`` extra."""
        return f"{self.type}: {self.message}"

    def as_json(self) -> dict[str, str]:
        return {"tag": self.tag, "type": self.type, "message": self.message}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SampleFailure:
        return cls(str(data.get("tag", FailureKind.REWARD_ERROR.value)), str(data.get("type", "")), str(data.get("message", "")))


@dataclass(frozen=True)
class SampleOutcome:
    """One sample's served result: ``reward`` (the fallback when it failed), ``extras`` (every key
    of the reward's schema, the documented fill value where a failed sample has none) and
    ``failure`` (``None`` on success); ``applicable`` is ``False`` when the reward said it does
    not apply to the sample (``NOT_APPLICABLE``: not a failure; ``reward`` is then 0.0)."""

    reward: float
    extras: Mapping[str, Any]
    failure: SampleFailure | None = None
    applicable: bool = True

    @property
    def ok(self) -> bool:
        return self.failure is None

    def as_json(self) -> dict[str, Any]:
        return {
            "reward": self.reward,
            "extras": dict(self.extras),
            "failure": None if self.failure is None else self.failure.as_json(),
            "applicable": self.applicable,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SampleOutcome:
        failure = data.get("failure")
        return cls(
            float(data["reward"]),
            dict(data.get("extras") or {}),
            None if failure is None else SampleFailure.from_json(failure),
            applicable=bool(data.get("applicable", True)),
        )


class RemoteSampleError(RuntimeError):
    """A sample the server scored as failed (``failure`` says why); raised by ``RemoteReward`` when
    it is called like a local reward, so ``calculate_rewards`` and the adapters record it."""

    def __init__(self, reward_name: str, failure: SampleFailure) -> None:
        super().__init__(f"remote reward {reward_name!r} failed on the server ({failure.tag}): {failure.text}")
        self.reward_name = reward_name
        self.failure = failure


__all__ = ["FailureKind", "RemoteSampleError", "SampleFailure", "SampleOutcome"]
