"""The execution options a reward may declare (``@reward(execution=..., timeout=...)``) and every
caller may pass: their values, checked where they are given (a definition, a call, an adapter)."""

from __future__ import annotations

from typing import Literal

ExecutionMode = Literal["inline", "thread", "process"]
EXECUTION_MODES: tuple[ExecutionMode, ...] = ("inline", "thread", "process")


def check_execution(execution: object, *, where: str = "execution") -> ExecutionMode | None:
    """``execution`` if it names a mode (or is ``None``: the default), else a ``ValueError``."""
    if execution is None or execution in EXECUTION_MODES:
        return execution  # type: ignore[return-value]
    raise ValueError(
        f"{where} must be one of {', '.join(repr(mode) for mode in EXECUTION_MODES)} or None, "
        f"got {execution!r}"
    )


def check_timeout(timeout: object, *, where: str = "timeout") -> float | None:
    """``timeout`` if it is positive seconds (or ``None``: no timeout), else a ``ValueError``."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ValueError(f"{where} must be positive seconds or None, got {timeout!r}")
    return float(timeout)


__all__ = ["EXECUTION_MODES", "ExecutionMode", "check_execution", "check_timeout"]
