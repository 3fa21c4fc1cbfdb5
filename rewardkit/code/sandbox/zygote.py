"""The warm interpreter inside a bwrap sandbox: forks one child per job and cleans up after it.

(With uid -1 the same zygote runs unsandboxed, for ``sandbox="none"``: a temp work dir per job, the
job's process group killed after it.)

Runs as a script with the sandbox's Python (``-I -S``), standard library only; imports nothing of
rewardkit. The host sends one job at a time over a SOCK_SEQPACKET socket (a JSON header and the
job's stdin, stdout, stderr and files as fds); the child makes a private mount and IPC namespace
with fresh tmpfs ``/job`` and ``/tmp``, sets the rlimits, drops to the worker's unprivileged uid (as
root) or drops every capability (in a user namespace), and runs the program in its (already warm)
interpreter. After the job every other process of the sandbox's PID namespace is killed.
"""

import ctypes
import errno
import json
import os
import resource
import select
import shutil
import signal
import socket
import struct
import sys
import tempfile

WORK = "/job"
CLONE_NEWNS, CLONE_NEWIPC = 0x00020000, 0x08000000
MS_REC, MS_PRIVATE, MS_NOSUID, MS_NODEV = 0x4000, 1 << 18, 2, 4
MS_RDONLY, MS_REMOUNT, MS_BIND = 1, 32, 4096
PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS, PR_SET_CHILD_SUBREAPER = 4, 38, 36
PR_CAPBSET_DROP, PR_SET_SECUREBITS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 24, 28, 47, 4
SECURE_ALL_LOCKED = 0x2F  # NOROOT, NO_SETUID_FIXUP and KEEP_CAPS_LOCKED, each locked
MEMORY_ERROR_MARK = b"M"
SETUP_ERROR_MARK = b"E"
READY_MARK = b"R"
TMPFS_INODES = 4096  # files a job may create in each of /tmp and /job (their bytes: 2 x file_size)
REPORT = [-1]  # the fd a job's child reports a MemoryError or a setup failure on
PRELOAD = (
    "abc bisect collections copy dataclasses decimal enum fractions functools heapq io itertools "
    "math operator random re statistics string sys textwrap traceback typing"
)

libc = ctypes.CDLL(None, use_errno=True)


def check(result: int, what: str) -> None:
    """Raise OSError when a libc call failed."""
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def prctl(option: int, arg: int = 0) -> None:
    """prctl(2) with one argument."""
    check(libc.prctl(option, ctypes.c_ulong(arg), 0, 0, 0), f"prctl({option})")


def mount_tmpfs(target: str, options: str) -> None:
    """A fresh tmpfs at `target`."""
    check(
        libc.mount(b"tmpfs", target.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options.encode()),
        target,
    )


def drop_capabilities() -> None:
    """No capability now or after any execve (uid 0 of a user namespace keeps none)."""
    prctl(PR_SET_SECUREBITS, SECURE_ALL_LOCKED)
    for cap in range(64):
        if libc.prctl(PR_CAPBSET_DROP, ctypes.c_ulong(cap), 0, 0, 0) != 0:
            break
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)
    data = (ctypes.c_uint32 * 6)()
    check(libc.syscall(126 if os.uname().machine == "x86_64" else 91, header, data), "capset")


def read_files(fd: int) -> dict:
    """The job's files from the memfd the host wrote them into (count, then name/data pairs)."""
    with os.fdopen(fd, "rb") as stream:
        blob = stream.read()
    (count,), offset, files = struct.unpack_from("<I", blob), 4, {}
    for _ in range(count):
        name_len, data_len = struct.unpack_from("<IQ", blob, offset)
        offset += 12
        name = blob[offset : offset + name_len].decode()
        offset += name_len
        files[name] = blob[offset : offset + data_len]
        offset += data_len
    return files


def set_limits(limits: dict) -> None:
    """The job's rlimits (CPU, address space, file size, open files, processes, no core files)."""
    cpu = max(1, int(limits["cpu"] + 0.999))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (limits["memory"], limits["memory"]))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["file_size"], limits["file_size"]))
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits["open_files"], limits["open_files"]))
    resource.setrlimit(resource.RLIMIT_NPROC, (limits["processes"], limits["processes"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def private_dirs(header: dict, uid: int) -> None:
    """A private mount and IPC namespace with fresh tmpfs /tmp, /job and /dev/shm (sandboxed modes)."""
    check(libc.unshare(CLONE_NEWNS | CLONE_NEWIPC), "unshare")
    check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "mount private")
    owner = (
        f"uid={uid},gid={uid},nr_inodes={TMPFS_INODES}" if uid > 0 else f"nr_inodes={TMPFS_INODES}"
    )
    room = 2 * header["limits"]["file_size"]
    mount_tmpfs("/tmp", f"size={room},mode=1777,{owner}")
    mount_tmpfs(WORK, f"size={room + header['files_size']},mode=0755,{owner}")
    mount_tmpfs("/dev/shm", f"size={room},mode=1777,{owner}")
    # /dev itself read-only (its device nodes still work): as uid 0 of a user namespace the job
    # would own bwrap's /dev, and a file left there would outlive the job.
    flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID
    check(libc.mount(None, b"/dev", None, flags, None), "remount /dev read-only")


def enter_job(header: dict, fds: list, uid: int) -> dict:
    """In the forked child: private namespaces and dirs, stdio, limits, no privileges; the files."""
    stdin, stdout, stderr, files_fd, report = fds
    if uid >= 0:
        private_dirs(header, uid)
    else:
        os.setsid()
    files = read_files(files_fd)
    for target, source in enumerate((stdin, stdout, stderr)):
        os.dup2(source, target)
    os.dup2(report, 3)
    REPORT[0] = 3
    os.closerange(4, 1 << 16)
    os.set_inheritable(3, False)
    set_limits(header["limits"])
    if uid > 0:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    elif uid == 0:
        drop_capabilities()
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    prctl(PR_SET_DUMPABLE, 1)
    os.chdir(header.get("work", WORK))
    for name, data in files.items():
        os.makedirs(os.path.dirname(name) or ".", exist_ok=True)
        with open(name, "wb") as stream:
            stream.write(data)
    return files


def run_program(main: str, source: bytes) -> int:
    """Run `source` as __main__ as `python main` would; the exit status."""
    import atexit
    import builtins
    import traceback

    sys.argv, sys.path[0:0] = [main], [os.getcwd()]
    sys.stdin = sys.__stdin__ = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stdout = sys.__stdout__ = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stderr = sys.__stderr__ = open(  # noqa: SIM115
        2, "w", encoding="utf-8", errors="backslashreplace", buffering=1, closefd=False
    )
    status = 0
    namespace = {"__name__": "__main__", "__file__": main, "__builtins__": builtins}
    try:
        exec(compile(source, main, "exec"), namespace)  # noqa: S102 - the job, already sandboxed
    except SystemExit as stop:
        status = exit_status(stop.code)
    except BaseException as error:
        traceback.print_exception(type(error), error, error.__traceback__.tb_next)
        if isinstance(error, MemoryError):
            os.write(3, MEMORY_ERROR_MARK)
        status = 1
    try:
        sys.modules["threading"]._shutdown() if "threading" in sys.modules else None
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        status = status or 120
    return status


def exit_status(code: object) -> int:
    """The process exit status for ``sys.exit(code)``."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def kill_all_others(group: int) -> None:
    """SIGKILL every process of this PID namespace but init and us (unsandboxed: the job's
    process group `group`); reap; until none is left."""
    while True:
        try:
            if group:
                os.killpg(group, signal.SIGKILL)
            else:
                os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            return
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            select.select([], [], [], 0.0005)


def serve_job(control: socket.socket, header: dict, fds: list, uid: int) -> None:
    """Fork the job's child, wait for it (or a kill from the host), clean up, report."""
    report_r, report_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            control.close()
            REPORT[0] = report_w
            files = enter_job(header, [*fds, report_w], uid)
            os.write(
                REPORT[0], READY_MARK
            )  # from here on the program's own code runs: no setup error
            status = run_program(header["main"], files[header["main"]])
        except BaseException as error:
            message = f"{type(error).__name__}: {error}".encode()[:2000]
            os.write(REPORT[0], SETUP_ERROR_MARK + message)
        finally:
            os._exit(status)
    for fd in (*fds, report_w):
        os.close(fd)
    pidfd = os.pidfd_open(pid)
    poller = select.poll()  # not select: the control fd keeps the host's number, maybe past 1023
    poller.register(pidfd, select.POLLIN)
    poller.register(control, select.POLLIN)
    status, alive = None, True
    while status is None:
        ready = {fd for fd, _ in poller.poll()}
        if control.fileno() in ready:
            alive = bool(control.recv(4096))
            os.kill(pid, signal.SIGKILL)
        if ready:
            status = os.waitpid(pid, 0)[1]
    kill_all_others(pid if uid < 0 else 0)
    if uid < 0:
        shutil.rmtree(header["work"], ignore_errors=True)
    os.close(pidfd)
    os.set_blocking(report_r, False)
    try:
        report = os.read(report_r, 4096)
    except BlockingIOError:
        report = b""
    os.close(report_r)
    # A setup error counts only before READY_MARK: the program can write on fd 3 too, but a forged
    # "sandbox error" must never be reachable by it (a MEMORY_ERROR_MARK only hurts itself).
    done = {"op": "done", "status": status, "memory": report[:2] == READY_MARK + MEMORY_ERROR_MARK}
    if report[:1] == SETUP_ERROR_MARK:
        done["error"] = "the sandbox could not set up the job: " + report[1:].decode(
            "utf-8", "replace"
        )
    if alive:
        control.send(json.dumps(done).encode())
    else:
        sys.exit(0)


def main() -> None:
    """Serve jobs from the host on the control socket given as argv[1] until it closes."""
    control = socket.socket(fileno=int(sys.argv[1]))
    uid = int(sys.argv[2])
    prctl(PR_SET_DUMPABLE, 0)
    if uid >= 0:
        prctl(PR_SET_CHILD_SUBREAPER, 1)
    import site

    site.setquit()
    for name in PRELOAD.split():
        __import__(name)
    control.send(b'{"op": "ready"}')
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(control, 65536, 8)
        except OSError as error:
            if error.errno == errno.EINTR:
                continue
            raise
        if not message:
            return
        header = json.loads(message)
        if header.get("op") != "run":
            for fd in fds:
                os.close(fd)
            continue
        if uid < 0:
            header["work"] = tempfile.mkdtemp(prefix="rewardkit-job-")
        serve_job(control, header, list(fds), uid)


if __name__ == "__main__":
    main()
