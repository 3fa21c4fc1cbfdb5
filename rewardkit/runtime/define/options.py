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


def refuse_inline_timeout(
    name: str, is_async: bool, mode: object, timeout: float | None, *, shown: bool = True
) -> None:
    """A ``ValueError`` for a sync reward ``"inline"`` under a timeout: on the caller's thread
    nothing could enforce it (``shown``: the message gives the timeout's seconds)."""
    if mode == "inline" and timeout is not None and not is_async:
        seconds = f" ({timeout} s)" if shown else ""
        raise ValueError(
            f"reward {name!r}: execution='inline' runs the sync reward on the caller's thread, "
            f"where a timeout{seconds} cannot be enforced; use execution='thread' or 'process'"
        )


def check_reward_options(
    name: str, is_async: bool, execution: object, timeout: object
) -> tuple[ExecutionMode | None, float | None]:
    """A reward's own execution mode and timeout, checked when it is defined."""
    where = f"reward {name!r}"
    mode = check_execution(execution, where=f"{where}: execution")
    seconds = check_timeout(timeout, where=f"{where}: timeout")
    refuse_inline_timeout(name, is_async, mode, seconds, shown=False)
    return mode, seconds


__all__ = [
    "EXECUTION_MODES",
    "ExecutionMode",
    "check_execution",
    "check_reward_options",
    "check_timeout",
    "refuse_inline_timeout",
]
