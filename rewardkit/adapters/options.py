"""The options every framework adapter takes besides the reward, written once.

``AdapterOptions`` is a frozen, validated object: ``to_trl(reward, options=AdapterOptions(...))``
shares one set of options between adapters, and the keyword form (``to_trl(reward, timeout=5)``)
is checked against the same fields (``AdapterOptionsDict``), so that a misspelt option is a
``TypeError`` naming it rather than an option silently ignored.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable, Mapping
from typing import Any, Literal, TypedDict

from rewardkit.runtime.define.options import ExecutionMode, check_execution, check_timeout
from rewardkit.runtime.define.results import RewardResult

OnError = Literal["fallback", "raise"]

DEFAULT_CONCURRENCY = 16
"""Samples of one batch an adapter computes at once (async rewards, or sync ones with a timeout)."""


class _FrameworkDefault:
    """``missing_extra`` left to the framework (``None``, OpenRLHF's ``0.0``): see docs/adapters.md."""

    def __repr__(self) -> str:
        return "FRAMEWORK_DEFAULT"

    def __reduce__(self) -> str:
        return "FRAMEWORK_DEFAULT"


FRAMEWORK_DEFAULT: Any = _FrameworkDefault()


@dataclasses.dataclass(frozen=True, kw_only=True)
class AdapterOptions:
    """What every ``to_*`` function and ``RewardAdapter`` take besides the reward, validated
    when built (a bad value is a ``ValueError`` naming the option); see docs/adapters.md."""

    name: str | None = None
    """The adapter's ``__name__`` (default: the reward's name)."""
    field_map: Mapping[str, str | None] | None = None
    """``{framework input name: reward field}``; ``None`` drops an input."""
    timeout: float | None = None
    """Seconds per sample (default: the reward's own ``@reward(timeout=...)``)."""
    execution: ExecutionMode | None = None
    """Where a sync reward runs: ``"inline"``, ``"thread"`` or ``"process"``."""
    on_error: OnError = "fallback"
    """``"fallback"``: a failed sample gets ``fallback``; ``"raise"``: the error propagates."""
    fallback: float | None = 0.0
    """The reward of a failed sample (``None`` only where the framework has "not applicable")."""
    extra_keys: Iterable[str] | Mapping[str, Any] | None = None
    """The extras every sample carries: names, or name -> type (default: the reward's)."""
    missing_extra: Any = FRAMEWORK_DEFAULT
    """The value of an extra a sample lacks (default: the framework's)."""
    concurrency: int = DEFAULT_CONCURRENCY
    """Samples (or groups) of one batch in flight at once."""

    def __post_init__(self) -> None:
        if self.on_error not in ("fallback", "raise"):
            raise ValueError(f"on_error must be 'fallback' or 'raise', got {self.on_error!r}")
        check_timeout(self.timeout)
        check_execution(self.execution)
        concurrency = self.concurrency
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise ValueError(f"concurrency must be a positive integer, got {concurrency!r}")
        normal = {
            "field_map": None if self.field_map is None else dict(self.field_map),
            "fallback": None if self.fallback is None else RewardResult(self.fallback).reward,
            "extra_keys": _extra_keys(self.extra_keys),
        }
        for key, value in normal.items():
            object.__setattr__(self, key, value)

    @classmethod
    def build(
        cls, options: AdapterOptions | None, keywords: Mapping[str, Any], *, factory: str
    ) -> AdapterOptions:
        """``options`` (default: the defaults) with ``keywords`` applied; a keyword that is no
        option is a ``TypeError`` naming it and ``factory`` (the closest option, if any)."""
        if options is not None and not isinstance(options, AdapterOptions):
            raise TypeError(
                f"{factory}() options= must be an AdapterOptions, got {type(options).__name__}"
            )
        unknown = [key for key in keywords if key not in OPTION_NAMES]
        if unknown:
            close = difflib.get_close_matches(unknown[0], OPTION_NAMES, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise TypeError(
                f"{factory}() got an unexpected keyword argument {unknown[0]!r}{hint} "
                f"(options: {', '.join(OPTION_NAMES)})"
            )
        base = options or cls()
        return dataclasses.replace(base, **keywords) if keywords else base

    def changed(self) -> dict[str, Any]:
        """The options that differ from their defaults, by name."""
        return {
            field.name: getattr(self, field.name)
            for field in dataclasses.fields(self)
            if getattr(self, field.name) != field.default
        }

    def as_dict(self) -> dict[str, Any]:
        """Every option by name (shallow: the keyword arguments that rebuild this object)."""
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}


def _extra_keys(
    extra_keys: Iterable[str] | Mapping[str, Any] | None,
) -> tuple[str, ...] | dict[str, Any] | None:
    if extra_keys is None:
        return None
    if isinstance(extra_keys, Mapping):
        return dict(extra_keys)
    return tuple(extra_keys)


class AdapterOptionsDict(TypedDict, total=False):
    """``AdapterOptions`` as keyword arguments of the ``to_*`` functions (the same names and
    types; ``tests/adapters/test_adapter_options.py`` holds them equal)."""

    name: str | None
    field_map: Mapping[str, str | None] | None
    timeout: float | None
    execution: ExecutionMode | None
    on_error: OnError
    fallback: float | None
    extra_keys: Iterable[str] | Mapping[str, Any] | None
    missing_extra: Any
    concurrency: int


OPTION_NAMES: tuple[str, ...] = tuple(field.name for field in dataclasses.fields(AdapterOptions))
"""The options' names, in their order."""

__all__ = [
    "DEFAULT_CONCURRENCY",
    "FRAMEWORK_DEFAULT",
    "OPTION_NAMES",
    "AdapterOptions",
    "AdapterOptionsDict",
    "OnError",
]
