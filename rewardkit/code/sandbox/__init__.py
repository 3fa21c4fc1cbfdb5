"""Where rewardkit runs model-written programs: bubblewrap or WASI sandboxes with warm interpreters.

``get_sandbox("auto")`` is bwrap when it works here, else the wasm backend, else
`SandboxUnavailableError` saying what to install; never an unsandboxed fallback. See docs/code.md.
"""

from __future__ import annotations

from rewardkit.code.sandbox.api import (
    Job,
    Limits,
    Outcome,
    Sandbox,
    SandboxUnavailableError,
    Session,
)
from rewardkit.code.sandbox.selection import available_backends, get_sandbox

__all__ = [
    "Job",
    "Limits",
    "Outcome",
    "Sandbox",
    "SandboxUnavailableError",
    "Session",
    "available_backends",
    "get_sandbox",
]
