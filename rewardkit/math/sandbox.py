"""Symbolic work in killable worker processes, under a CPU budget: the same verdict at any load.

``grade`` never runs sympy in the calling process (no signals there: it works in any thread and
inside asyncio). A comparison that needs sympy is a task for a worker process, which charges the
task's own CPU time against the answer's budget (``timeout``, CPU seconds): a busy machine makes
the task slower, never more expensive, so the verdict does not depend on the load. The parent
keeps a wall-clock ceiling for a worker that is starved or hung (its own option, by default ten
times the budget and at least 30 s): past it the worker is killed and replaced, and the outcome
is ``overloaded`` (our side's failure, ``HARNESS_ERROR``), never a wrong answer. So are a worker
that died and workers that could not start within the ceiling; each such attempt is retried once.

Workers are forked by a fork server (``sandbox_server``), a fresh interpreter that imports sympy
and the LaTeX parser once. It is started in the background on the grader's first use (any call,
fast path included) or by ``warm_up()``; a symbolic comparison that finds it still starting
waits for it, within the ceiling, and the wait is not charged to the answer. See docs/math.md.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from rewardkit.math import sandbox_server as server
from rewardkit.math.comparison import Outcome

#: Workers per process: symbolic comparisons are rare (the fast path decides most answers).
DEFAULT_WORKERS = 2
#: How long ``warm_up()`` (or a test) may wait for the workers to start.
STARTUP_TIMEOUT = 120.0
#: A comparison waits for starting workers up to ``max(wall_ceiling, STARTUP_CEILING)``: the start
#: costs about a second of CPU (importing sympy), once, whatever the answer's budget.
STARTUP_CEILING = 60.0
#: Extra address space each worker may use on top of the fork server's size.
DEFAULT_MEMORY_HEADROOM = 2 * 1024**3
#: The default wall-clock ceiling: this many times the CPU budget, and at least ``MINIMUM_WALL_CEILING``.
CEILING_FACTOR = 10.0
MINIMUM_WALL_CEILING = 30.0
#: How long the parent waits for a control reply from the fork server outside of a start.
_CONTROL_TIMEOUT = 30.0
#: The server warms up once the first task is done and the workers are idle, or after this long.
_WARM_DELAY_SECONDS = 3.0

_BOOT = (
    "import json, sys; sys.path[:] = json.loads(sys.argv[1]); "
    "from rewardkit.math.sandbox_server import main; main(sys.argv[2:])"
)


def default_wall_ceiling(cpu_budget: float) -> float:
    """The wall-clock ceiling used when none is given: ``max(10 * cpu_budget, 30 s)``."""
    return max(CEILING_FACTOR * cpu_budget, MINIMUM_WALL_CEILING)


class SandboxUnavailable(RuntimeError):
    """The symbolic workers cannot be started here (no Python executable, sympy missing, closed)."""


def _cpu_seconds(pid: int) -> float | None:
    """The CPU time (user + system) process ``pid`` has used, where ``/proc`` tells (Linux)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS
    except (OSError, ValueError, IndexError):
        return None


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _used(before: float | None, after: float | None) -> float | None:
    return after - before if before is not None and after is not None else None


def overloaded(error: str) -> Outcome:
    """The outcome when the machine could not give the budget: ``HARNESS_ERROR``, never a verdict."""
    return Outcome(False, "overloaded", error)


@dataclass(eq=False)
class _Worker:
    pid: int
    connection: Connection
    warm: bool  # forked from a warmed-up fork server
    server: _ForkServerHandle


class _ForkServerHandle:
    """The fork server seen from the parent: its process and its control socket (one request at a time)."""

    def __init__(self, process: subprocess.Popen[bytes], control: socket.socket) -> None:
        self.process = process
        self.control = control
        self.lock = threading.Lock()
        self.broken = False

    @property
    def alive(self) -> bool:
        return not self.broken and self.process.poll() is None

    def _read(self, size: int) -> bytes:
        data = b""
        while len(data) < size:
            chunk = self.control.recv(size - len(data))
            if not chunk:
                raise EOFError("the fork server closed its control socket")
            data += chunk
        return data

    def read_reply(self, timeout: float) -> tuple[bytes, int, int]:
        self.control.settimeout(timeout)
        kind, pid, value = server.REPLY.unpack(self._read(server.REPLY.size))
        if kind == server.ERROR:
            message = self._read(value).decode("utf-8", "replace") if value else "refused a request"
            raise SandboxUnavailable(f"the symbolic fork server failed: {message}")
        return kind, pid, value

    def request(self, command: bytes, argument: int = 0, *, fd: int | None = None, timeout: float = _CONTROL_TIMEOUT) -> tuple[bytes, int, int]:
        """Send one request and read its reply; any failure marks the server broken (it is replaced)."""
        with self.lock:
            if self.broken:
                raise SandboxUnavailable("the symbolic fork server is gone")
            try:
                message = server.REQUEST.pack(command, argument)
                if fd is None:
                    self.control.sendall(message)
                else:
                    socket.send_fds(self.control, [message], [fd])
                return self.read_reply(timeout)
            except (OSError, EOFError, SandboxUnavailable) as error:
                self.broken = True  # a lost or late reply would desynchronise the protocol
                self.process.kill()
                raise SandboxUnavailable(f"the symbolic fork server stopped answering: {type(error).__name__}: {error}") from None

    def close(self) -> None:
        """Close the control socket and end the server (it holds no state; its workers die with it)."""
        self.broken = True
        with contextlib.suppress(OSError):
            self.control.close()
        try:
            self.process.wait(timeout=0.05)  # idle, it exits on its own at once
        except subprocess.TimeoutExpired:
            self.process.kill()  # busy warming up: no need to wait for it
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=5)


class SymbolicSandbox:
    """Runs ``function(*args)`` in a worker process under a CPU budget and a wall-clock ceiling.

    ``run`` never raises for the task: it returns the task's ``Outcome``, or ``timeout`` (the
    task used up its CPU budget), ``guard`` (the worker's memory cap), ``overloaded`` (the
    ceiling came first, the workers were not up, a worker died: retried once) or ``crash``
    (the sandbox cannot run here, or the task raised).
    """

    def __init__(
        self,
        workers: int = DEFAULT_WORKERS,
        memory_headroom: int = DEFAULT_MEMORY_HEADROOM,
        startup_ceiling: float = STARTUP_CEILING,
    ) -> None:
        self._size = workers
        self._memory_headroom = memory_headroom
        self._startup_ceiling = startup_ceiling
        self._setup()
        _SANDBOXES.add(self)

    def _setup(self) -> None:
        self._condition = threading.Condition()  # guards everything below
        self._idle: list[_Worker] = []
        self._count = 0  # workers alive: idle or running a task
        self._server: _ForkServerHandle | None = None
        self._server_warm = threading.Event()
        self._keeper: threading.Thread | None = None
        self._wake = threading.Event()
        self._failures = 0
        self._error = ""
        self._tasks_done = 0
        self._warm_requested = False
        self._warm_asked = False  # the fork server was asked to warm up (it does so between requests)
        self._closed = False
        self._pid = os.getpid()
        self._usage = threading.local()  # CPU seconds of workers charged to each calling thread's tasks

    # -- the keeper thread: the only thread that starts the fork server and asks it for workers --

    def start_in_background(self) -> None:
        """Start the fork server and the workers in a daemon thread unless they run; returns at once."""
        if self._keeper is not None and self._count >= self._size:
            return  # the common case, two attribute reads: the fast path never waits here
        with self._condition:
            self._wake_keeper()

    def _wake_keeper(self) -> None:  # with the condition held
        if self._closed:
            return
        if self._keeper is None or not self._keeper.is_alive():
            # Long-lived on purpose: the kernel's parent-death signal of the fork server fires when
            # the thread that started it exits, so that thread must live as long as the process.
            self._keeper = threading.Thread(target=self._keep, name="rewardkit-math-sandbox", daemon=True)
            self._keeper.start()
        self._wake.set()

    def _keep(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            if self._closed:
                return
            try:
                self._maintain()
            except Exception as error:  # reported to the waiting calls; the next call tries again
                with self._condition:
                    self._failures += 1
                    self._error = f"{type(error).__name__}: {error}" if not isinstance(error, SandboxUnavailable) else str(error)
                    self._condition.notify_all()

    def _maintain(self) -> None:
        """Bring the fork server up, fork workers up to the pool size, then warm the server. A server
        that stops answering is replaced (twice at most here); one that cannot start is reported."""
        replaced = 0
        while not self._closed:
            server_handle = self._server
            if server_handle is None or not server_handle.alive:
                if server_handle is not None:
                    server_handle.close()
                    replaced += 1
                    if replaced > 2:
                        raise SandboxUnavailable("the symbolic fork server keeps dying")
                self._server_warm.clear()
                self._warm_asked = False
                server_handle = self._spawn_server()
                with self._condition:
                    if self._closed:
                        server_handle.close()
                        return
                    self._server = server_handle
                    # The old server's workers died with it: forget the idle ones at once.
                    stale = [worker for worker in self._idle if worker.server is not server_handle]
                    self._idle = [worker for worker in self._idle if worker.server is server_handle]
                    self._count -= len(stale)
                for worker in stale:
                    worker.connection.close()
            with self._condition:
                missing = self._size - self._count
            if missing > 0:
                try:
                    worker = self._fork_worker(server_handle)
                except SandboxUnavailable:
                    continue  # the server broke (it was killed): start a new one
                with self._condition:
                    self._count += 1
                    self._idle.append(worker)
                    self._condition.notify_all()
                continue
            if not self._warm_asked:
                with self._condition:  # warming takes a second of CPU: not while the first tasks run
                    self._condition.wait_for(self._quiet_or_needed, timeout=_WARM_DELAY_SECONDS)
                    if self._count < self._size:
                        continue  # a worker to replace first
                with contextlib.suppress(SandboxUnavailable):  # a broken server is replaced above
                    self._ask_warm(server_handle)
                self._warm_asked = True
                continue
            return

    def _quiet_or_needed(self) -> bool:  # with the condition held
        quiet = self._tasks_done > 0 and len(self._idle) == self._count
        return quiet or self._closed or self._warm_requested or self._count < self._size

    def _spawn_server(self) -> _ForkServerHandle:
        if not sys.executable:
            raise SandboxUnavailable("no Python executable to start the workers (sys.executable is empty): use sandbox=False")
        if not hasattr(os, "fork") or not hasattr(socket, "send_fds"):
            raise SandboxUnavailable(f"the symbolic workers need fork() and fd passing, not available on {sys.platform}: use sandbox=False")
        parent_end, server_end = socket.socketpair()
        try:
            process = subprocess.Popen(
                [sys.executable, "-c", _BOOT, json.dumps([str(entry) for entry in sys.path]), str(server_end.fileno()), str(os.getpid()), str(self._memory_headroom)],
                pass_fds=(server_end.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,  # the host's stdout may be a protocol channel (an LSP server's)
            )
        except BaseException:
            parent_end.close()
            raise
        finally:
            server_end.close()
        handle = _ForkServerHandle(process, parent_end)
        try:
            kind, _, _ = handle.read_reply(STARTUP_TIMEOUT)
        except (OSError, EOFError, SandboxUnavailable) as error:
            handle.close()
            if isinstance(error, SandboxUnavailable):
                raise
            raise SandboxUnavailable(f"the symbolic fork server did not start: {type(error).__name__}: {error}") from None
        if kind != server.READY:
            handle.close()
            raise SandboxUnavailable(f"the symbolic fork server sent {kind!r} instead of ready")
        return handle

    def _ask_warm(self, server_handle: _ForkServerHandle) -> bool:
        """Have the server warm up (in steps, between requests); whether it is warm already."""
        _, _, warm = server_handle.request(server.WARM)
        if warm:
            self._server_warm.set()
        return bool(warm)

    def _fork_worker(self, server_handle: _ForkServerHandle) -> _Worker:
        ours, theirs = socket.socketpair()
        try:
            _, pid, warm = server_handle.request(server.FORK, fd=theirs.fileno())
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        if warm:
            self._server_warm.set()
        return _Worker(pid, Connection(ours.detach()), bool(warm), server_handle)

    # -- callers ------------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """True when every worker is up (no start to wait for)."""
        server_handle = self._server
        return self._count >= self._size and server_handle is not None and server_handle.alive

    def _acquire(self, ceiling: float) -> _Worker | Outcome | None:
        """An idle worker; ``None`` when none was free within the ceiling (the startup ceiling while
        the workers start); an Outcome when none can start."""
        self._check_fork()
        waiting_since = time.monotonic()
        with self._condition:
            failures = self._failures
            was_starting = True
            while True:
                if self._closed:
                    return Outcome(False, "crash", "sandbox unavailable: it was closed")
                if self._idle:
                    return self._idle.pop()
                if self._failures != failures:
                    return Outcome(False, "crash", f"sandbox unavailable: {self._error}")
                server_handle = self._server
                starting = server_handle is None or not server_handle.alive or self._count == 0
                if self._count < self._size or starting:
                    self._wake_keeper()
                if was_starting and not starting:  # up now: waiting for a free worker starts here
                    waiting_since, was_starting = time.monotonic(), False
                limit = max(ceiling, self._startup_ceiling) if starting else ceiling
                remaining = waiting_since + limit - time.monotonic()
                if remaining <= 0:
                    return None
                self._condition.wait(remaining)

    def _release(self, worker: _Worker) -> None:
        with self._condition:
            self._tasks_done += 1
            if self._closed:
                worker.connection.close()
                return
            self._idle.append(worker)
            self._condition.notify_all()

    def _discard(self, worker: _Worker, *, kill: bool) -> None:
        """Drop ``worker`` (killing it if it may still run) and have the keeper fork a replacement."""
        worker.connection.close()  # an idle worker exits when it reads the end of its connection
        server_handle = self._server
        if kill and server_handle is not None and server_handle.alive:
            with contextlib.suppress(SandboxUnavailable):
                server_handle.request(server.KILL, worker.pid)
        with self._condition:
            self._count -= 1
            self._wake_keeper()
            self._condition.notify_all()

    def _exit_signal(self, worker: _Worker) -> int | None:
        """The signal that ended ``worker`` (it is gone: its connection ended), if the server knows it."""
        server_handle = self._server
        if server_handle is None or not server_handle.alive:
            return None
        try:
            _, _, status = server_handle.request(server.WAIT, worker.pid)
        except SandboxUnavailable:
            return None
        if status == server.UNKNOWN_STATUS or not os.WIFSIGNALED(status):
            return None
        return os.WTERMSIG(status)

    def cpu_seconds(self) -> float:
        """CPU seconds the calling thread's tasks have used in the workers so far (the budget's own measure).

        What a caller, or a test, compares with the budget: ``run`` charges each task the CPU time
        the worker measured for it (or, for a worker killed mid-task, what ``/proc`` said it used).
        """
        return getattr(self._usage, "seconds", 0.0)

    def _charge(self, seconds: float | None) -> None:
        if seconds is not None:
            self._usage.seconds = self.cpu_seconds() + max(seconds, 0.0)

    def run(self, function: Callable[..., Any], args: tuple[Any, ...], *, cpu_budget: float, wall_ceiling: float | None = None) -> Outcome:
        """The task's ``Outcome`` within ``cpu_budget`` CPU seconds of the worker's own time.

        In each attempt, waiting for a free worker and running the task may each take
        ``wall_ceiling`` seconds of wall time (``default_wall_ceiling`` when None; waiting for
        starting workers up to ``max(wall_ceiling, startup_ceiling)``). An ``overloaded`` attempt,
        or a ``timeout`` from a worker forked before the server was warm, is tried once more: the
        latter on a warm worker, waited for (uncharged, within the ceiling), since a cold worker
        pays for building the parser's tables (a few tenths of a CPU second) on the answer's budget."""
        ceiling = default_wall_ceiling(cpu_budget) if wall_ceiling is None else wall_ceiling
        outcome, retry = self._attempt(function, args, cpu_budget, ceiling)
        if retry:
            if outcome.reason == "timeout":
                self.warm_up(timeout=ceiling)
            outcome, _ = self._attempt(function, args, cpu_budget, ceiling)
        return outcome

    def _attempt(self, function: Callable[..., Any], args: tuple[Any, ...], cpu_budget: float, ceiling: float) -> tuple[Outcome, bool]:
        worker = self._acquire(ceiling)
        if worker is None:
            if self.ready:
                return overloaded(f"no symbolic worker was free within the {ceiling:g} s wall ceiling (all busy)"), True
            limit = max(ceiling, self._startup_ceiling)
            return overloaded(f"the symbolic workers did not start within {limit:g} s (the machine is too busy)"), True
        if isinstance(worker, Outcome):
            return worker, False
        deadline = time.monotonic() + ceiling
        try:
            request = pickle.dumps((function, args, cpu_budget), pickle.HIGHEST_PROTOCOL)
        except Exception as error:
            self._release(worker)
            return Outcome(False, "crash", f"cannot send the task: {type(error).__name__}: {error}"), False
        try:
            cpu_before = _cpu_seconds(worker.pid)
            worker.connection.send_bytes(request)
            if not worker.connection.poll(max(deadline - time.monotonic(), 0.0)):
                cpu_after = _cpu_seconds(worker.pid)
                self._charge(_used(cpu_before, cpu_after))
                self._discard(worker, kill=True)
                used = f", of which it got {cpu_after - cpu_before:.2f} s" if cpu_before is not None and cpu_after is not None else ""
                return overloaded(f"the symbolic work did not finish within the {ceiling:g} s wall ceiling "
                                  f"(a {cpu_budget:g} s CPU budget{used}): the machine is too busy"), True
            reply = worker.connection.recv_bytes()
        except (EOFError, OSError):
            used = _used(cpu_before, _cpu_seconds(worker.pid))
            death = self._exit_signal(worker)
            self._discard(worker, kill=True)
            if death == signal.SIGXCPU:  # stuck in one C call past budget + grace: the answer's cost
                self._charge(used if used is not None else cpu_budget + server.HARD_LIMIT_GRACE + 1.0)
                return Outcome(False, "timeout"), False
            self._charge(used)
            cause = f"signal {signal.Signals(death).name}" if death else "exited"
            return overloaded(f"the symbolic worker died ({cause})"), True
        except BaseException:
            self._discard(worker, kill=True)  # interrupted (KeyboardInterrupt): never leak a busy worker
            raise
        try:
            status, payload, cpu = pickle.loads(reply)
            self._charge(cpu)
        except Exception as error:
            self._release(worker)
            return Outcome(False, "crash", f"cannot read the task's result: {type(error).__name__}: {error}"), False
        if status == "timeout":
            self._discard(worker, kill=False)  # it exits by itself
            return Outcome(False, "timeout"), not worker.warm
        self._release(worker)
        if status == "ok":
            return payload, False
        if status == "memory":
            return Outcome(False, "guard", "the worker's memory limit was reached"), False
        return Outcome(False, "crash", str(payload)), False

    # -- start-up and shutdown -------------------------------------------------------------------

    def warm_up(self, timeout: float = STARTUP_TIMEOUT) -> bool:
        """Start now and wait until every worker is up and forked from a warmed-up server (cold
        workers forked earlier are replaced). An optimisation only: returns whether that happened."""
        deadline = time.monotonic() + timeout
        self._check_fork()
        with self._condition:
            failures = self._failures
            self._warm_requested = True
            self._wake_keeper()
            self._condition.notify_all()
        while not self._server_warm.is_set():
            if time.monotonic() >= deadline or self._failures != failures or self._closed:
                return False
            server_handle = self._server
            if server_handle is not None and server_handle.alive and self._warm_asked:
                with contextlib.suppress(SandboxUnavailable):
                    if self._ask_warm(server_handle):
                        break
            time.sleep(0.05)
        with self._condition:
            cold = [worker for worker in self._idle if not worker.warm]
            self._idle = [worker for worker in self._idle if worker.warm]
        for worker in cold:
            self._discard(worker, kill=False)
        with self._condition:
            while self._count < self._size or not self._idle:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._failures != failures or self._closed:
                    return False
                self._condition.wait(remaining)
        return True

    def close(self) -> None:
        """Stop the workers and the fork server; refuse to start new ones (called at interpreter exit)."""
        with self._condition:
            if self._closed:
                return
            self._closed = True
            idle, self._idle = self._idle, []
            server_handle, self._server = self._server, None
            self._condition.notify_all()
        self._wake.set()  # the keeper sees _closed and ends
        for worker in idle:
            worker.connection.close()
        if server_handle is not None:
            server_handle.close()

    def _check_fork(self) -> None:
        if self._pid != os.getpid():  # a forked child never uses its parent's workers
            self._forget_after_fork()

    def _forget_after_fork(self) -> None:
        """In a forked child: drop the parent's workers and fork server without touching them."""
        stale = [worker.connection for worker in self._idle]
        server_handle = self._server
        self._setup()
        for connection in stale:
            connection.close()  # our copy of the descriptor only; the parent keeps its own
        if server_handle is not None:
            server_handle.broken = True
            server_handle.control.close()


_SANDBOXES: weakref.WeakSet[SymbolicSandbox] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for sandbox in list(_SANDBOXES):
        sandbox._forget_after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)

_SANDBOX = SymbolicSandbox()


def _close_all() -> None:
    for sandbox in list(_SANDBOXES):
        if sandbox._pid == os.getpid():
            sandbox.close()


atexit.register(_close_all)


def default_sandbox() -> SymbolicSandbox:
    """The process-wide sandbox ``grade`` uses."""
    return _SANDBOX


def warm_up(timeout: float = STARTUP_TIMEOUT) -> bool:
    """Start the symbolic workers now, warm, and wait for them (an optimisation: without it the
    first symbolic comparison waits for the workers, uncharged). Returns whether they are up."""
    return _SANDBOX.warm_up(timeout)
