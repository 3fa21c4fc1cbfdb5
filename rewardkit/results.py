"""``RewardResult``: the one validated shape every reward's return value is turned into."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any, NamedTuple

from rewardkit.errors import RewardShapeError, RewardValueError

_MAX_SHOWN = 80
_new_tuple = tuple.__new__


def _show(value: object) -> str:
    """A short ``repr`` of a returned value for error messages."""
    text = repr(value)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 3] + "..."


def _is_numpy_real_scalar(value: object) -> bool:
    """A numpy scalar or 0-d array holding a bool, int or float (checked without importing numpy)."""
    if type(value).__module__ != "numpy" or getattr(value, "ndim", None) != 0:
        return False
    return isinstance(value.item(), (bool, int, float))  # type: ignore[attr-defined]


def _item_hint(value: object) -> str:
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        return " (a tensor or array? return a single number, e.g. `.item()`)"
    return ""


def _who(reward_name: str | None) -> str:
    return f"reward {reward_name!r}" if reward_name else "the reward"


def _as_reward_value(value: object, reward_name: str | None, where: str) -> float:
    """Convert a returned reward value to a finite ``float`` or raise a typed error naming it."""
    if value.__class__ is float:
        number = value
    elif isinstance(value, numbers.Real) or _is_numpy_real_scalar(value):
        # int, bool, Fraction, numpy numbers; numpy.bool_ and 0-d arrays are not numbers.Real
        try:
            number = float(value)  # type: ignore[arg-type]
        except OverflowError:
            raise RewardValueError(
                f"{_who(reward_name)} returned {where}{_show(value)}, too large for a float"
            ) from None
    else:
        raise RewardShapeError(
            f"{_who(reward_name)} returned {where}{_show(value)} of type "
            f"{type(value).__name__}; expected a real number{_item_hint(value)}"
        )
    if not math.isfinite(number):
        raise RewardValueError(
            f"{_who(reward_name)} returned a non-finite reward {where}{number!r}; "
            "NaN and infinite rewards poison training"
        )
    return number


class _RewardResultFields(NamedTuple):
    reward: float
    extras: dict[str, Any]


class RewardResult(_RewardResultFields):
    """A reward's value and its extras (diagnostics such as ``f1``, ``em``), immutable.

    ``reward`` is always a finite ``float``; build one from whatever a reward returned
    with :meth:`from_raw`. It is a named tuple (``reward, extras = result`` works) so that
    making one costs next to nothing on the per-sample path.
    """

    __slots__ = ()

    def __new__(cls, reward: float, extras: dict[str, Any] | None = None) -> RewardResult:
        if reward.__class__ is not float or reward - reward != 0.0:
            reward = _as_reward_value(reward, None, "")
        if extras is None:
            extras = {}
        elif not isinstance(extras, dict):
            raise TypeError(f"RewardResult extras must be a dict, got {type(extras).__name__}")
        return _new_tuple(cls, (reward, extras))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RewardResult):
            return tuple.__eq__(self, other)
        return False if isinstance(other, tuple) else NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = tuple.__hash__  # raises TypeError: extras is a dict

    def __repr__(self) -> str:
        return f"RewardResult(reward={self.reward!r}, extras={self.extras!r})"

    def __getitem__(self, key: Any) -> Any:
        """``result["reward"]`` and ``result["<extra>"]`` as on AgentFly's result dict (which
        runners index by name); integer indices and slices work as on any tuple."""
        if key.__class__ is str:
            return self.reward if key == "reward" else self.extras[key]
        return tuple.__getitem__(self, key)

    def _replace(self, **changes: Any) -> RewardResult:
        return RewardResult(changes.pop("reward", self.reward), changes.pop("extras", self.extras), **changes)

    def as_dict(self) -> dict[str, Any]:
        """The AgentFly-style flat dict: ``{"reward": ..., **extras}``."""
        return {**self.extras, "reward": self.reward}

    @classmethod
    def from_raw(
        cls,
        raw: object,
        *,
        reward_name: str | None = None,
        none_as_zero: bool = False,
    ) -> RewardResult:
        """Validate what a reward returned and turn it into a ``RewardResult``.

        Accepts a real number (``bool`` becomes 1.0/0.0, numpy scalars work), a dict with
        a ``reward`` key (other keys become extras) or a ``RewardResult``. Anything else raises
        ``RewardShapeError``; NaN or infinity raises ``RewardValueError``. ``None`` is an error
        unless ``none_as_zero`` (AgentFly's legacy behaviour) is set.
        """
        kind = raw.__class__
        if kind is float:
            if raw - raw == 0.0:  # type: ignore[operator]  # finite: inf - inf and nan - nan are nan
                return _new_tuple(RewardResult, (raw, {}))  # type: ignore[arg-type]
            return cls(_as_reward_value(raw, reward_name, ""))
        if isinstance(raw, RewardResult):
            return raw
        if isinstance(raw, Mapping):
            if "reward" not in raw:
                keys = ", ".join(repr(key) for key in raw) or "none"
                raise RewardShapeError(
                    f"{_who(reward_name)} returned a dict without a 'reward' key "
                    f"(keys: {keys}); return {{'reward': <number>, ...extras}}"
                )
            value = _as_reward_value(raw["reward"], reward_name, "'reward' = ")
            extras = {key: item for key, item in raw.items() if key != "reward"}
            return cls(value, extras)
        if raw is None:
            if none_as_zero:
                return cls(0.0)
            raise RewardShapeError(
                f"{_who(reward_name)} returned None (a missing `return`?); return a number or "
                "{'reward': <number>, ...}; AgentFly's legacy None-as-0.0 needs none_as_zero=True"
            )
        if isinstance(raw, numbers.Real) or _is_numpy_real_scalar(raw):
            return cls(_as_reward_value(raw, reward_name, ""))
        raise RewardShapeError(
            f"{_who(reward_name)} returned {_show(raw)} of type {kind.__name__}; expected a "
            f"number, a dict with a 'reward' key, or a RewardResult{_item_hint(raw)}"
        )
