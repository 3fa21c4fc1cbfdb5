"""``RewardResult``: the one validated shape every reward's return value is turned into."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

from rewardkit.runtime.define.errors import RewardShapeError, RewardValueError

_MAX_SHOWN = 80
_new_dict = dict.__new__
_dict_set = dict.__setitem__
_dict_get = dict.__getitem__
_dict_update = dict.update


def _show(value: object) -> str:
    """A short ``repr`` of a returned value for error messages (never raising: an int past
    Python's int-to-str digit limit, or a broken ``__repr__``, is described instead)."""
    if isinstance(value, int) and value.bit_length() > 4096:
        return f"an int of about {int(value.bit_length() * 0.30103)} digits"
    try:
        text = repr(value)
    except Exception as exc:
        return f"a {type(value).__name__} whose repr() raised {type(exc).__name__}"
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


def result_of_finite_float(reward: float) -> RewardResult:
    """``RewardResult(reward)`` for a ``reward`` already known to be a finite ``float``, built
    without validation (the per-call fast path)."""
    result = _new_dict(RewardResult)
    _dict_set(result, "reward", reward)
    return result  # type: ignore[no-any-return]


def _read_only(name: str) -> Any:
    def refuse(self: RewardResult, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            f"RewardResult is read-only (RewardResult.{name}); dict(result) gives a mutable copy, "
            "RewardResult(reward, extras) a new result"
        )

    refuse.__name__ = name
    return refuse


class RewardResult(dict[str, Any]):
    """A reward's value and its extras (diagnostics such as ``f1``, ``em``), read-only.

    It *is* AgentFly's flat result dict ``{"reward": <finite float>, **extras}``: ``"reward" in
    result``, ``result["f1"]``, ``result.get(...)``, ``dict(result)`` and ``json.dumps(result)``
    work as on the dict an AgentFly reward returns, and AgentFly's own ``calculate_reward``
    (which accepts dicts with a ``reward`` key) takes it unchanged. ``.reward`` (always a finite
    ``float``) and ``.extras`` (a new dict of the other keys) read it by attribute. Build one from
    whatever a reward returned with :meth:`from_raw`.
    """

    __slots__ = ()

    def __init__(self, reward: float, extras: Mapping[str, Any] | None = None) -> None:
        if reward.__class__ is not float or reward - reward != 0.0:
            reward = _as_reward_value(reward, None, "")
        _dict_set(self, "reward", reward)
        if extras:
            if not isinstance(extras, Mapping):
                raise TypeError(f"RewardResult extras must be a dict, got {type(extras).__name__}")
            if "reward" in extras:
                raise ValueError(
                    "RewardResult extras cannot hold a 'reward' key: the reward is the first argument"
                )
            _dict_update(self, extras)
        elif extras is not None and not isinstance(extras, Mapping):
            raise TypeError(f"RewardResult extras must be a dict, got {type(extras).__name__}")

    @property
    def reward(self) -> float:
        """The reward: a finite ``float``."""
        return _dict_get(self, "reward")  # type: ignore[no-any-return]

    @property
    def extras(self) -> dict[str, Any]:
        """Every key but ``reward``, as a new dict (the result itself stays read-only)."""
        if len(self) == 1:
            return {}
        return {key: value for key, value in self.items() if key != "reward"}

    def __repr__(self) -> str:
        return f"RewardResult(reward={self.reward!r}, extras={self.extras!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (RewardResult, (self.reward, self.extras))

    __setitem__ = _read_only("__setitem__")
    __delitem__ = _read_only("__delitem__")
    __ior__ = _read_only("__ior__")
    clear = _read_only("clear")
    pop = _read_only("pop")
    popitem = _read_only("popitem")
    setdefault = _read_only("setdefault")
    update = _read_only("update")

    def as_dict(self) -> dict[str, Any]:
        """A plain, mutable copy of the flat dict ``{"reward": ..., **extras}``."""
        return dict(self)

    @property
    def applicable(self) -> bool:
        """``False`` only for a :class:`NotApplicable` result (the reward does not apply to the sample)."""
        return True

    @staticmethod
    def not_applicable(
        reason: str | None = None, extras: Mapping[str, Any] | None = None
    ) -> NotApplicable:
        """The result of a reward that does not apply to a sample (see :class:`NotApplicable`)."""
        return NotApplicable(reason, extras)

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
                return result_of_finite_float(raw)  # type: ignore[arg-type]
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
            result = result_of_finite_float(
                _as_reward_value(raw["reward"], reward_name, "'reward' = ")
            )
            for key, item in raw.items():
                if key != "reward":
                    _dict_set(result, key, item)
            return result
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


class NotApplicable(RewardResult):
    """ "This reward does not apply to this sample": a result of its own, neither a score nor a failure.

    TRL's and open-r1's reward functions return ``None`` for it (a correctness reward on an
    example whose gold answer cannot be parsed, a code reward on a prompt without tests), and TRL
    leaves such a reward out of the sample's weighted sum. A rewardkit reward returns
    ``NOT_APPLICABLE`` or ``RewardResult.not_applicable("why")`` (``None`` stays an error: a
    missing ``return`` must not pass for a skip). ``reward`` is ``None``, ``applicable`` is
    ``False``, ``reason`` says why; extras are allowed. Each adapter turns it into its
    framework's own notion (docs/adapters.md); ``calculate_rewards`` returns it as is.
    """

    __slots__ = ("reason",)
    reason: str | None

    def __init__(self, reason: str | None = None, extras: Mapping[str, Any] | None = None) -> None:
        if reason is not None and not isinstance(reason, str):
            raise TypeError(f"NotApplicable reason must be a string, got {type(reason).__name__}")
        if extras is not None and not isinstance(extras, Mapping):
            raise TypeError(f"NotApplicable extras must be a dict, got {type(extras).__name__}")
        if extras and "reward" in extras:
            raise ValueError("NotApplicable extras cannot hold a 'reward' key")
        _dict_set(self, "reward", None)
        if extras:
            _dict_update(self, extras)
        self.reason = reason

    @property
    def reward(self) -> None:  # type: ignore[override]
        """Always ``None``: there is no score to use."""
        return None

    @property
    def applicable(self) -> bool:
        return False

    def __repr__(self) -> str:
        extras = f", extras={self.extras!r}" if len(self) > 1 else ""
        return f"NotApplicable(reason={self.reason!r}{extras})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (NotApplicable, (self.reason, self.extras))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NotApplicable) and dict.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]


NOT_APPLICABLE: NotApplicable = NotApplicable()
"""What a reward returns for a sample it does not apply to (``RewardResult.not_applicable(reason)``
says why)."""
