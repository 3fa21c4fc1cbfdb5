"""Host side of a warm worker (a bwrap zygote or a wasm worker): its socket, a job on it, a pool.

A worker is a process that runs one job at a time, told over a SOCK_SEQPACKET socket: the host sends
a JSON header with the job's stdin, stdout, stderr and files as fds (SCM_RIGHTS), may send a kill,
and reads ``{"op": "done", "status": <wait status>, "memory": bool}``. Everything the caller keeps of
a job is bounded (stdout to ``limits.output``, stderr to 64 KiB).
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import socket
import struct
import subprocess
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from types import TracebackType

from rewardkit.code.sandbox.api import STDERR_LIMIT, Job, Outcome, SandboxUnavailableError

__all__ = ["PooledSandbox", "Worker", "WorkerSession", "files_memfd", "nproc_allowance"]

READY_TIMEOUT = 60.0
KILL_GRACE = 5.0
DRAIN_GRACE = 2.0
OVERFLOW_WAIT = 0.05
CHUNK = 1 << 16


# Workers are started from one long-lived thread: bwrap's --die-with-parent (PR_SET_PDEATHSIG)
# fires when the *thread* that forked it ends, and callers' threads come and go.
_SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rewardkit-sandbox-spawner")
_POOLS: weakref.WeakSet[PooledSandbox] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    """A forked child (a trainer's data loader, a process pool) starts its own workers: the
    parent's belong to the parent, and the spawner thread does not exist in the child."""
    global _SPAWNER
    _SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rewardkit-sandbox-spawner")
    for pool in list(_POOLS):
        pool._forget_parents_workers()


os.register_at_fork(after_in_child=_after_fork_in_child)


SANDBOX_TASKS = 2
"""Tasks of a user-namespace sandbox besides the program: bwrap's init and the zygote."""


def nproc_allowance(processes: int) -> int:
    """The RLIMIT_NPROC that gives a program `processes` tasks of its own. As root it runs as a
    uid of its own, so the limit is exact. As a normal user it is uid 0 of the sandbox's user
    namespace, where (Linux >= 5.14 counts RLIMIT_NPROC per user namespace; measured here) the
    count is the sandbox's tasks: bwrap's init and the zygote are added."""
    return processes if os.geteuid() == 0 else processes + SANDBOX_TASKS


def files_memfd(files: Mapping[str, bytes]) -> int:
    """A memfd holding `files` in the workers' format (count, then name/data pairs), at offset 0."""
    fd = os.memfd_create("rewardkit-job-files")
    parts = [struct.pack("<I", len(files))]
    for name, data in files.items():
        encoded = name.encode()
        parts += [struct.pack("<IQ", len(encoded), len(data)), encoded, bytes(data)]
    with os.fdopen(os.dup(fd), "wb") as stream:
        for part in parts:
            stream.write(part)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


class Worker:
    """One warm worker process and its control socket; `command(fd)` is the argv to start it."""

    #: True when no program can kill this worker (its jobs run as another, unprivileged uid): its
    #: death under a job is then ours, a sandbox error, never the program's failure.
    out_of_programs_reach: bool = False

    def __init__(self, command: Callable[[int], list[str]], env: Mapping[str, str]) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.process = _SPAWNER.submit(
                subprocess.Popen,
                command(theirs.fileno()),
                pass_fds=[theirs.fileno()],
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                start_new_session=True,
            ).result()
        finally:
            theirs.close()
        self.control = ours
        self.dead = False
        self.uid: int | None = getattr(self, "uid", None)
        if not self._wait_ready():
            detail = self._startup_error()
            self.destroy()
            raise SandboxUnavailableError(f"the sandbox worker did not start: {detail}")

    def _wait_ready(self) -> bool:
        """True when the worker said it is ready within READY_TIMEOUT."""
        with selectors.DefaultSelector() as selector:
            selector.register(self.control, selectors.EVENT_READ)
            if not selector.select(READY_TIMEOUT):
                return False
        try:
            return json.loads(self.control.recv(4096) or b"{}").get("op") == "ready"
        except (OSError, ValueError):
            return False

    def _startup_error(self) -> str:
        """The first lines of the worker's stderr, or its exit status."""
        try:
            self.process.kill()
            _, err = self.process.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            err = b""
        text = (err or b"")[:2000].decode("utf-8", "replace").strip()
        return text or f"exit status {self.process.returncode}"

    def start(self, header: dict, fds: list[int]) -> None:
        """Send a job to the worker."""
        socket.send_fds(self.control, [json.dumps(header).encode()], fds)

    def kill_job(self) -> None:
        """Ask the worker to kill the running job and everything it started."""
        try:
            self.control.send(b'{"op": "kill"}')
        except OSError:
            self.dead = True

    def destroy(self) -> None:
        """Kill the worker process (and with it its sandbox), reap it."""
        if self.dead and self.process.returncode is not None:
            return
        self.dead = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.kill()
        self.process.wait()
        if self.process.stderr:
            self.process.stderr.close()
        self.control.close()


@dataclass
class _Capture:
    """Bounded capture of one output pipe."""

    fd: int
    limit: int
    data: bytearray = field(default_factory=bytearray)
    overflow: bool = False
    eof: bool = False

    def read(self) -> None:
        """Read what is there; keep at most `limit` bytes, note more."""
        try:
            chunk = os.read(self.fd, CHUNK)
        except BlockingIOError:
            return
        if not chunk:
            self.eof = True
            return
        room = self.limit - len(self.data)
        self.data += chunk[: max(room, 0)]
        self.overflow = self.overflow or len(chunk) > room


class WorkerSession:
    """A job running on a worker: its pipes, its deadline, its outcome (the `Session` protocol)."""

    def __init__(
        self, worker: Worker, job: Job, release: Callable[[Worker], None], *, interactive: bool
    ) -> None:
        self.worker, self.job, self._release = worker, job, release
        self.limits = job.limits
        self.started = time.monotonic()
        self.deadline = self.started + self.limits.timeout
        self.timed_out = self.output_exceeded = self.killed = False
        self.status: dict | None = None
        self.kill_deadline: float | None = None
        self.consumed = 0
        self._outcome: Outcome | None = None
        self._kill_lock = threading.Lock()
        self._watchdog: threading.Timer | None = None
        stdout_r, stdout_w = os.pipe()
        stderr_r, stderr_w = os.pipe()
        if interactive:
            stdin_r, self.stdin = os.pipe()
            os.set_blocking(self.stdin, False)
            if worker.uid is not None:  # a wasm worker reopens it by /proc/self/fd as its own uid
                os.fchown(stdin_r, worker.uid, worker.uid)
        else:
            stdin_r, self.stdin = os.memfd_create("rewardkit-job-stdin"), -1
            with os.fdopen(os.dup(stdin_r), "wb") as stream:
                stream.write(job.stdin)
            os.lseek(stdin_r, 0, os.SEEK_SET)
        files = files_memfd(job.files)
        self.out = _Capture(stdout_r, self.limits.output)
        self.err = _Capture(stderr_r, STDERR_LIMIT)
        for fd in (stdout_r, stderr_r):
            os.set_blocking(fd, False)
        limits = {
            "cpu": self.limits.cpu_seconds,
            "memory": self.limits.memory,
            "processes": nproc_allowance(self.limits.processes),
            "file_size": self.limits.file_size,
            "open_files": self.limits.open_files,
            "timeout": self.limits.timeout,
        }
        try:
            header = {
                "op": "run",
                "main": job.main,
                "limits": limits,
                "files_size": os.fstat(files).st_size,
            }
            worker.start(header, [stdin_r, stdout_w, stderr_w, files])
            if interactive:
                self._watch()
        except OSError as error:  # the worker was gone before the job reached it: our side
            worker.destroy()
            self.status = {"status": signal.SIGKILL, "memory": False, "at": time.monotonic()}
            self.status["error"] = f"the sandbox worker was gone before the job started: {error}"
        finally:
            for fd in (stdin_r, stdout_w, stderr_w, files):
                os.close(fd)

    def __enter__(self) -> WorkerSession:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.finish()

    def send(self, line: bytes) -> None:
        """Write `line` and a newline to the program's stdin (gives up at the job's deadline)."""
        data = memoryview(bytes(line) + b"\n")
        while data and self.stdin >= 0 and self.status is None:
            try:
                data = data[os.write(self.stdin, data) :]
                continue
            except BlockingIOError:
                self._pump(min(self.deadline, time.monotonic() + 0.05), stdin_room=True)
            except BrokenPipeError:
                return

    def receive(self, timeout: float) -> bytes | None:
        """The next stdout line without its newline; None at EOF, the job's end or `timeout`."""
        until = min(self.deadline, time.monotonic() + timeout)
        while True:
            end = self.out.data.find(b"\n", self.consumed)
            if end >= 0:
                line = bytes(self.out.data[self.consumed : end])
                self.consumed = end + 1
                return line
            self._enforce_deadline()
            if self.out.eof or self.status is not None or self.killed or time.monotonic() >= until:
                return None
            self._pump(until)

    def finish(self) -> Outcome:
        """Close stdin, wait within the limits, kill what is left, return the outcome."""
        if self._outcome is None:
            self._enforce_deadline()
            if not self.killed:  # (a killed program is not given an EOF to exit on first)
                self._close_stdin()
            while self.status is None or not (self.out.eof and self.err.eof):
                if self.status is not None and time.monotonic() > self.status["at"] + DRAIN_GRACE:
                    break
                self._pump(time.monotonic() + 0.5)
            with self._kill_lock:
                self._outcome = self._build_outcome()
            if self._watchdog is not None:
                self._watchdog.cancel()
            self._close_stdin()  # a killed program's stdin was left open above: ours to close
            for fd in (self.out.fd, self.err.fd):
                os.close(fd)
            self._release(self.worker)
        return self._outcome

    def kill(self) -> Outcome:
        """Stop the program now (everything it started) and return its outcome."""
        if self._outcome is None and self.status is None:
            self._kill()
        return self.finish()

    def _close_stdin(self) -> None:
        if self.stdin >= 0:
            os.close(self.stdin)
            self.stdin = -1

    def _kill(self) -> None:
        with self._kill_lock:
            if not self.killed and self._outcome is None:
                self.killed = True
                self.kill_deadline = time.monotonic() + KILL_GRACE
                self.worker.kill_job()

    def _watch(self) -> None:
        """A session left without calls is still stopped at its wall limit (not only when pumped)."""
        self._watchdog = threading.Timer(self.limits.timeout + 0.05, self._enforce_deadline)
        self._watchdog.daemon = True
        self._watchdog.start()

    def _enforce_deadline(self) -> None:
        """Past the job's wall limit and still running: timed out, killed."""
        if self.status is None and not self.killed and time.monotonic() >= self.deadline:
            with self._kill_lock:
                if self._outcome is not None or self.killed:
                    return
                self.timed_out = True
            self._kill()

    def _pump(self, until: float, *, stdin_room: bool = False) -> None:
        """Wait for output, the worker's report, the stdin pipe's room or a deadline, once."""
        now = time.monotonic()
        self._enforce_deadline()
        if (
            self.status is None
            and self.kill_deadline is not None
            and now >= self.kill_deadline - KILL_GRACE + 0.5
        ):
            self._close_stdin()  # still running half a second after the kill: blocked reading stdin (wasm)?
        if self.status is None and self.kill_deadline is not None and now >= self.kill_deadline:
            self.worker.destroy()
            self.status = {"status": signal.SIGKILL, "memory": False, "at": now}
            return
        waits = [
            until,
            self.deadline if not self.killed else min(self.kill_deadline or until, now + 0.5),
        ]
        with selectors.DefaultSelector() as selector:
            for capture in (self.out, self.err):
                if not capture.eof:
                    selector.register(capture.fd, selectors.EVENT_READ, capture)
            if self.status is None and not self.worker.dead:
                selector.register(self.worker.control, selectors.EVENT_READ, "control")
            if stdin_room and self.stdin >= 0:
                selector.register(self.stdin, selectors.EVENT_WRITE, "stdin")
            if not selector.get_map():
                time.sleep(max(0.0, min(waits) - time.monotonic()))
                return
            for key, _ in selector.select(max(0.0, min(waits) - time.monotonic())):
                if key.data == "control":
                    self._read_report()
                elif isinstance(key.data, _Capture):
                    key.data.read()
        if self.out.overflow and not self.output_exceeded:
            self.output_exceeded = True
            self._kill()

    def _read_report(self) -> None:
        try:
            message = self.worker.control.recv(4096)
        except OSError:
            message = b""
        if not message:
            # The worker died under the job. Where the program could have killed it (the same
            # uid), the program's failure; where it could not, ours, said so.
            ours = self.worker.out_of_programs_reach and not self.killed  # (before destroy)
            self.worker.destroy()
            self.status = {"status": signal.SIGKILL, "memory": False, "at": time.monotonic()}
            if ours:
                self.status["error"] = "the sandbox worker died under the job (not the program's doing)"
            return
        report = json.loads(message)
        if report.get("op") == "done":
            self.status = {**report, "at": time.monotonic()}

    def _build_outcome(self) -> Outcome:
        status = int(self.status["status"]) if self.status else signal.SIGKILL
        exit_code = os.waitstatus_to_exitcode(status)
        # The CPU-time rlimit (SIGXCPU) is the same limit as the wall clock's, reached first
        # on an idle machine: a timeout either way, never a crash.
        out_of_cpu = exit_code == -signal.SIGXCPU
        return Outcome(
            exit_code=exit_code if exit_code >= 0 else None,
            signal=-exit_code if exit_code < 0 else None,
            stdout=bytes(self.out.data),
            stderr=bytes(self.err.data),
            timed_out=self.timed_out
            or out_of_cpu
            or bool(self.status and self.status.get("timed_out")),
            memory_exceeded=bool(self.status and self.status.get("memory")),
            output_exceeded=self.output_exceeded,
            wall=time.monotonic() - self.started,
            sandbox_error=self.status.get("error") if self.status else None,
        )


class PooledSandbox:
    """`workers` warm workers made by `factory`, each running one job at a time.

    A caller finding every warm worker busy waits OVERFLOW_WAIT, then gets an extra worker (stopped
    when it is released while `workers` are idle): a grader holding one session while it opens
    another (candidate and checker) can never deadlock the pool.
    """

    def __init__(self, name: str, factory: Callable[[int], Worker], workers: int) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.name, self._factory, self._size = name, factory, workers
        self._idle: list[Worker] = []
        self._alive = 0
        self._lock = threading.Condition()
        _POOLS.add(self)

    def _forget_parents_workers(self) -> None:
        """In a forked child: drop (without stopping) the parent's workers, close our copies."""
        self._lock = threading.Condition()
        idle, self._idle, self._alive = self._idle, [], 0
        for worker in idle:
            worker.control.close()

    def _acquire(self) -> Worker | Outcome:
        stale: list[Worker] = []  # died while idle: replaced, never blamed on a program
        try:
            with self._lock:
                deadline = time.monotonic() + OVERFLOW_WAIT
                while not self._idle and self._alive >= self._size and time.monotonic() < deadline:
                    self._lock.wait(max(0.0, deadline - time.monotonic()))
                while self._idle:
                    worker = self._idle.pop()
                    if worker.process.poll() is None:
                        return worker
                    self._alive -= 1
                    stale.append(worker)
                self._alive += 1
                index = self._alive
        finally:
            for worker in stale:
                worker.destroy()
        try:
            return self._factory(index)
        except (SandboxUnavailableError, OSError) as error:
            with self._lock:
                self._alive -= 1
                self._lock.notify()
            return Outcome(None, None, b"", b"", False, False, False, 0.0, sandbox_error=str(error))

    def _release(self, worker: Worker) -> None:
        with self._lock:
            keep = (
                not worker.dead and worker.process.poll() is None and len(self._idle) < self._size
            )
            if keep:
                self._idle.append(worker)
            else:
                self._alive -= 1
            self._lock.notify()
        if not keep:
            worker.destroy()

    def open(self, job: Job) -> WorkerSession:
        """Start `job` on a free worker; a session on it."""
        worker = self._acquire()
        if isinstance(worker, Outcome):
            return _FailedSession(worker)  # type: ignore[return-value]
        return WorkerSession(worker, job, self._release, interactive=True)

    def run(self, job: Job) -> Outcome:
        """Run `job` on a free worker to its end."""
        worker = self._acquire()
        if isinstance(worker, Outcome):
            return worker
        return WorkerSession(worker, job, self._release, interactive=False).finish()

    def close(self) -> None:
        """Stop the idle workers (busy ones stop when their job finishes and the pool is gone)."""
        with self._lock:
            idle, self._idle = self._idle, []
            self._alive -= len(idle)
        for worker in idle:
            worker.destroy()

    def __del__(self) -> None:
        # Not contextlib.suppress: at interpreter exit the module's globals may already be None.
        try:  # noqa: SIM105
            self.close()
        except Exception:
            pass


class _FailedSession:
    """A session whose sandbox could not start: every call says so through its outcome."""

    def __init__(self, outcome: Outcome) -> None:
        self._outcome = outcome

    def __enter__(self) -> _FailedSession:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def send(self, line: bytes) -> None:
        return None

    def receive(self, timeout: float) -> bytes | None:
        return None

    def finish(self) -> Outcome:
        return self._outcome

    def kill(self) -> Outcome:
        return self._outcome
