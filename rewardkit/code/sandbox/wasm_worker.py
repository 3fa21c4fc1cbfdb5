"""A warm wasm worker: runs jobs in the WASI CPython under wasmtime, one at a time.

Started by the host (wasm.py) as ``python -I -B wasm_worker.py FD MODULE STDLIB_DIR CACHE UID``
(UID: the unprivileged uid to drop to once the module is loaded, 0 when not root); speaks
the protocol of workers.py on the control socket FD. Each job gets a fresh Store (memory limit),
a private temp dir preopened as /job, the stdlib zip's dir preopened read-only, no other host dir (the job's dir is the guest's / and its cwd,
a private dir its /tmp),
an empty environment; a kill from the host, or the job's own CPU budget, interrupts it by epoch.
Imports nothing of rewardkit (the module's sha256 was checked by the host before it started us).
"""

import ctypes
import json
import os
import resource
import shutil
import signal
import socket
import struct
import sys
import tempfile
import threading

import wasmtime

GUEST_STDLIB = "/usr/local/lib"
MEMORY_WORDS = (b"MemoryError", b"memory allocation failed", b"out of memory")


def load_module(engine: wasmtime.Engine, path: str, cache: str) -> wasmtime.Module:
    """The compiled module: deserialized from `cache`, or compiled and written there atomically."""
    if os.path.exists(cache):
        try:
            return wasmtime.Module.deserialize_file(engine, cache)
        except wasmtime.WasmtimeError:
            pass
    module = wasmtime.Module.from_file(engine, path)
    os.makedirs(os.path.dirname(cache), exist_ok=True)
    partial = f"{cache}.{os.getpid()}.tmp"
    with open(partial, "wb") as stream:
        stream.write(module.serialize())
    os.replace(partial, cache)
    return module


def write_files(fd: int, root: str) -> None:
    """The job's files from the host's memfd into `root`."""
    os.makedirs(root)
    with os.fdopen(fd, "rb") as stream:
        blob = stream.read()
    (count,), offset = struct.unpack_from("<I", blob), 4
    for _ in range(count):
        name_len, data_len = struct.unpack_from("<IQ", blob, offset)
        offset += 12
        name = blob[offset : offset + name_len].decode()
        offset += name_len
        target = os.path.join(root, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as out:
            out.write(blob[offset : offset + data_len])
        offset += data_len


def write_all(fd: int, data: bytes) -> int:
    """Write `data` to the job's pipe (a closed pipe swallows it: the host stopped reading)."""
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view) :]
    except OSError:
        pass
    return len(data)


def disk_usage(root: str) -> int:
    """Bytes of the files under `root` (allocated blocks, so sparse files count as written)."""
    total, pending = 0, [root]
    while pending:
        try:
            with os.scandir(pending.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(entry.path)
                    else:
                        total += entry.stat(follow_symlinks=False).st_blocks * 512
        except OSError:
            continue
    return total


def drop_privileges(uid: int, stdlib: str) -> None:
    """As root: become `uid` for good (no groups, no new privileges) once the module is loaded."""
    if uid:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise SystemExit("wasm worker: cannot set no_new_privs")
    libc.prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE (setuid cleared it): wasmtime opens /proc/self/fd/N
    if not os.access(stdlib, os.R_OK | os.X_OK) or not os.access(tempfile.gettempdir(), os.W_OK):
        raise SystemExit(
            f"wasm worker: uid {os.getuid()} cannot read {stdlib} or write {tempfile.gettempdir()}"
        )


class Runner:
    """Runs jobs on one engine and module; `interrupt` stops the running one."""

    def __init__(self, module_path: str, stdlib: str, cache: str) -> None:
        config = wasmtime.Config()
        config.epoch_interruption = True
        self.engine = wasmtime.Engine(config)
        self.module = load_module(self.engine, module_path, cache)
        self.linker = wasmtime.Linker(self.engine)
        self.linker.define_wasi()
        self.stdlib = stdlib
        self.interrupted = False

    def spend_budget(self) -> None:
        """The job's time budget is used up: stop it, and say so (a timeout, not a crash)."""
        self.budget_spent = True
        self.interrupt()

    def interrupt(self) -> None:
        """Stop the running job at its next epoch check."""
        self.interrupted = True
        self.engine.increment_epoch()

    def watch_disk(self, work: str, budget: int, finished: threading.Event, report: object) -> None:
        """Stop the job when its dirs (/ and /tmp, on the host's disk) hold more than `budget` bytes."""
        while not finished.wait(0.05):
            if disk_usage(work) > budget:
                report(f"the program wrote more than {budget} bytes of files: stopped\n".encode())
                self.interrupt()
                return

    def run(self, header: dict, fds: list) -> dict:
        """Run one job; its done report (a wait status, and whether memory ran out)."""
        stdin, stdout, stderr, files = fds
        limits = header["limits"]
        work = tempfile.mkdtemp(prefix="rewardkit-wasm-job-")
        tail = bytearray()

        def to_stderr(data: bytes) -> int:
            tail[:] = (tail + data)[-256:]
            return write_all(stderr, data)

        try:
            os.mkdir(os.path.join(work, "tmp"))
            write_files(files, os.path.join(work, "root"))
            wasi = wasmtime.WasiConfig()
            wasi.argv = ("python", "-B", header["main"])
            wasi.env = [("PYTHONHOME", "/usr/local"), ("HOME", "/tmp"), ("TMPDIR", "/tmp")]
            wasi.preopen_dir(self.stdlib, GUEST_STDLIB, False)
            wasi.preopen_dir(os.path.join(work, "root"), "/", True)
            wasi.preopen_dir(os.path.join(work, "tmp"), "/tmp", True)
            wasi.stdin_file = f"/proc/self/fd/{stdin}"
            wasi.stdout_custom = lambda data: write_all(stdout, data)
            wasi.stderr_custom = to_stderr
            store = wasmtime.Store(self.engine)
            store.set_limits(memory_size=limits["memory"], instances=4, tables=16, memories=4)
            store.set_wasi(wasi)
            store.set_epoch_deadline(1)
            self.interrupted = False
            _, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limits["file_size"], hard))
            self.budget_spent = False
            timer = threading.Timer(limits["cpu"], self.spend_budget)
            timer.daemon = True
            timer.start()
            finished = threading.Event()
            budget = 4 * limits["file_size"] + header.get("files_size", 0)
            threading.Thread(
                target=self.watch_disk, args=(work, budget, finished, to_stderr), daemon=True
            ).start()
            try:
                instance = self.linker.instantiate(store, self.module)
                start = instance.exports(store)["_start"]
                start(store)
                status = 0
            except wasmtime.ExitTrap as stop:
                status = (stop.code & 0xFF) << 8
            except wasmtime.Trap as trap:
                status = signal.SIGKILL if self.interrupted else signal.SIGABRT
                if not self.interrupted:
                    to_stderr(f"wasm trap: {trap.message}\n".encode()[:2000])
            finally:
                finished.set()
                timer.cancel()
                resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
            if self.interrupted:  # stopped by the host or its CPU budget, whatever it did after
                status = signal.SIGKILL
            memory = os.waitstatus_to_exitcode(status) == 1 and any(
                w in bytes(tail) for w in MEMORY_WORDS
            )
            return {
                "op": "done",
                "status": status,
                "memory": memory,
                "timed_out": self.budget_spent,
            }
        finally:
            for fd in (stdin, stdout, stderr):
                os.close(fd)
            shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    """Serve jobs on the control socket until the host closes it."""
    control = socket.socket(fileno=int(sys.argv[1]))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a file past its size limit fails with EFBIG
    runner = Runner(sys.argv[2], sys.argv[3], sys.argv[4])
    drop_privileges(int(sys.argv[5]), sys.argv[3])
    control.send(b'{"op": "ready"}')
    pending: list = []
    lock = threading.Lock()
    job_ready = threading.Condition(lock)

    def listen() -> None:
        while True:
            message, fds, _, _ = socket.recv_fds(control, 65536, 8)
            if not message:
                os._exit(0)
            header = json.loads(message)
            if header.get("op") == "kill":
                runner.interrupt()
                continue
            with job_ready:
                pending.append((header, list(fds)))
                job_ready.notify()

    threading.Thread(target=listen, daemon=True).start()
    while True:
        with job_ready:
            while not pending:
                job_ready.wait()
            header, fds = pending.pop(0)
        try:
            report = runner.run(header, fds)
        except Exception as error:
            report = {
                "op": "done",
                "status": 256,
                "memory": False,
                "error": f"wasm worker: {error!r}"[:2000],
            }
        control.send(json.dumps(report).encode())


if __name__ == "__main__":
    main()
