"""The sandbox's types: what a program run asks for (`Job`, `Limits`) and what it gives (`Outcome`).

Shared by every backend; see /work/scratch/code_design.md and docs/code.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Protocol

__all__ = [
    "STDERR_LIMIT",
    "Job",
    "Limits",
    "Outcome",
    "Sandbox",
    "SandboxUnavailableError",
    "Session",
]

STDERR_LIMIT = 64 << 10
"""Bytes of a program's stderr kept (the first ones)."""


class SandboxUnavailableError(RuntimeError):
    """No sandbox of the kind asked for can run here; the message says what to install or enable."""


@dataclass(frozen=True)
class Limits:
    """Per program run: wall and CPU seconds, address space, processes, file size, open files, stdout."""

    timeout: float = 10.0
    cpu: float | None = None
    memory: int = 1 << 30
    processes: int = 32
    file_size: int = 16 << 20
    open_files: int = 64
    output: int = 1 << 20

    def __post_init__(self) -> None:
        for name in ("timeout", "memory", "processes", "file_size", "open_files", "output"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ValueError(f"Limits.{name} must be a positive number, got {value!r}")
        if self.cpu is not None and (isinstance(self.cpu, bool) or self.cpu <= 0):
            raise ValueError(f"Limits.cpu must be a positive number or None, got {self.cpu!r}")

    @property
    def cpu_seconds(self) -> float:
        """The CPU-time limit in force: `cpu`, else `timeout`."""
        return self.cpu if self.cpu is not None else self.timeout


@dataclass(frozen=True)
class Job:
    """One program: `files` written into a fresh private work dir (its cwd), `main` run as __main__."""

    files: Mapping[str, bytes]
    main: str
    stdin: bytes = b""
    limits: Limits = field(default_factory=Limits)

    def __post_init__(self) -> None:
        if self.main not in self.files:
            raise ValueError(f"Job.main {self.main!r} is not one of Job.files {sorted(self.files)}")
        for name, data in self.files.items():
            parts = name.split("/")
            if (
                not name
                or name.startswith("/")
                or any(p in ("", ".", "..") for p in parts)
                or "\0" in name
            ):
                raise ValueError(
                    f"Job.files name {name!r} must be a relative path inside the work dir"
                )
            if not isinstance(data, (bytes, bytearray)):
                raise TypeError(f"Job.files[{name!r}] must be bytes, got {type(data).__name__}")


@dataclass(frozen=True)
class Outcome:
    """How a program ended. `sandbox_error` is a failure on our side only, never the program's doing."""

    exit_code: int | None
    signal: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool
    memory_exceeded: bool
    output_exceeded: bool
    wall: float
    sandbox_error: str | None = None


class Session(Protocol):
    """An interactive program run: lines in, lines out (the call-by-call protocol)."""

    def send(self, line: bytes) -> None:
        """Write `line` and a newline to the program's stdin."""
        ...

    def receive(self, timeout: float) -> bytes | None:
        """The next stdout line (without its newline); None on EOF or timeout (then call finish())."""
        ...

    def finish(self) -> Outcome:
        """Close stdin, wait within the job's limits, kill everything left, return the outcome."""
        ...

    def kill(self) -> Outcome:
        """Stop the program now (everything it started) and return its outcome."""
        ...

    def __enter__(self) -> Session: ...

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


class Sandbox(Protocol):
    """A place to run untrusted Python programs: `run` for one shot, `open` for a session."""

    name: str

    def run(self, job: Job) -> Outcome:
        """Run `job` to its end (or its limits) and return how it ended."""
        ...

    def open(self, job: Job) -> Session:
        """Start `job` and return a session on it (a context manager that finishes it)."""
        ...

    def close(self) -> None:
        """Stop the sandbox's warm workers."""
        ...
