"""The symbolic sandbox's processes: a fork server that imports sympy once, and the workers it forks.

The parent (``sandbox.SymbolicSandbox``) starts this module as a fresh interpreter, not a fork of
itself: the parent never imports sympy, never forks its own (possibly multi-threaded, possibly
huge) process, and does not re-run its ``__main__``. The fork server imports sympy and the LaTeX
parser, then forks a worker for each request, from a single-threaded, already loaded process, so a
worker is ready in milliseconds. Once the parent has its first workers, it asks the server to
warm the parser's caches, so that workers forked later (replacements) start warm.

A worker runs one task at a time under a CPU budget: ``setitimer(ITIMER_PROF)`` counts the
process's own CPU time, however busy the machine is, and its signal ends the task with a
``timeout``; ``RLIMIT_CPU`` (budget + 1-2 s) kills a task stuck in one long C call, which the
signal handler cannot interrupt. Both are the answer's cost, never the machine's load. A worker
whose task ran out of budget exits (a task interrupted anywhere could leave a cache half-written),
and the parent has the server fork a fresh one.

Lifetimes: the fork server dies with the parent (``PR_SET_PDEATHSIG`` from the parent's
long-lived keeper thread, plus a check of its parent id and of its control socket at least twice
a second); workers die with the fork server (``PR_SET_PDEATHSIG`` from its only thread, plus a
watchdog thread). Workers ignore SIGINT (the parent decides), write no core files and have a
capped address space.
"""

from __future__ import annotations

import contextlib
import math
import os
import pickle
import select
import signal
import socket
import struct
import sys
import time
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from typing import Any

from rewardkit.child_processes import (
    cap_address_space,
    die_with_parent,
    disable_core_dumps,
    parent_is_gone,
)

# Control protocol between the parent and the fork server: fixed-size requests and replies.
REQUEST = struct.Struct("!cq")  # command, argument (a worker's pid)
REPLY = struct.Struct("!cqq")  # kind, pid, value
READY, ERROR, FORK, KILL, WAIT, WARM = b"R", b"E", b"F", b"K", b"W", b"M"
#: ``WAIT``'s value when the worker's exit status is not known (not reaped within the wait).
UNKNOWN_STATUS = -1

#: How often the fork server checks that its parent is alive while idle.
_IDLE_POLL_SECONDS = 0.25
#: How long the fork server waits for a worker's exit status when asked (the worker is exiting).
_EXIT_WAIT_SECONDS = 2.0
#: After the budget, ITIMER_PROF fires again at this interval until the task ends (a task that
#: swallowed the first exception gets another).
_REARM_SECONDS = 0.02
#: CPU seconds beyond the budget before RLIMIT_CPU kills a task stuck in C (SIGXCPU).
HARD_LIMIT_GRACE = 1.0
_STATUS_KEEP = 256

# Task results: (status, payload, cpu_seconds). ``status``: ok, timeout, memory, error.
TaskResult = tuple[str, Any, float]


class _CpuBudgetExhausted(BaseException):
    """Raised by the SIGPROF handler: a BaseException, so that no ``except Exception`` swallows it."""


_armed = False


def _on_cpu_budget(signum: int, frame: Any) -> None:
    if _armed:
        raise _CpuBudgetExhausted


def _disarm() -> None:
    """Stop the CPU timer; a signal arriving meanwhile is absorbed, never raised out of here."""
    global _armed
    while True:
        try:
            _armed = False
            signal.setitimer(signal.ITIMER_PROF, 0.0)
            _set_cpu_limit(None)
            return
        except _CpuBudgetExhausted:
            continue


def _set_cpu_limit(cpu_budget: float | None) -> None:
    """``RLIMIT_CPU`` (soft) at this process's CPU time + budget + grace, or lifted (``None``)."""
    try:
        import resource

        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        if cpu_budget is None:
            soft = hard
        else:
            soft = math.ceil(time.process_time() + cpu_budget + HARD_LIMIT_GRACE)
            if hard != resource.RLIM_INFINITY:
                soft = min(soft, hard)
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
    except (ImportError, OSError, ValueError):
        pass


def run_with_cpu_budget(function: Callable[..., Any], args: tuple[Any, ...], cpu_budget: float) -> TaskResult:
    """Run ``function(*args)`` charging this process's CPU time against ``cpu_budget`` seconds.

    Only for the main thread of a process of our own (it uses SIGPROF and RLIMIT_CPU; both are
    process-wide): the sandbox's workers call it for every task. Returns ``(status, payload,
    cpu_seconds)``: ``ok`` with the result, ``timeout`` when the budget ran out, ``memory`` on a
    ``MemoryError``, ``error`` with ``"Type: message"`` when the function raised.
    """
    global _armed
    previous = signal.signal(signal.SIGPROF, _on_cpu_budget)
    started = time.process_time()
    status: str = "timeout"
    payload: Any = None
    try:
        try:
            _set_cpu_limit(cpu_budget)
            _armed = True
            signal.setitimer(signal.ITIMER_PROF, cpu_budget, _REARM_SECONDS)
            payload = function(*args)
            status = "ok"
        finally:
            _disarm()
    except _CpuBudgetExhausted:
        status, payload = "timeout", None
    except MemoryError:
        status, payload = "memory", None
    except RecursionError:
        status, payload = "error", "RecursionError"
    except Exception as error:
        status, payload = "error", f"{type(error).__name__}: {error}"[:2000]
    finally:
        signal.signal(signal.SIGPROF, previous)
    return status, payload, time.process_time() - started


def _serve_tasks(connection: Connection) -> None:
    """A worker's loop: one pickled ``(function, args, cpu_budget)`` in, one ``TaskResult`` out."""
    while True:
        try:
            request = connection.recv_bytes()
        except (EOFError, OSError):
            return  # the parent dropped this worker (or died)
        try:
            function, args, cpu_budget = pickle.loads(request)
            result = run_with_cpu_budget(function, args, cpu_budget)
        except Exception as error:  # the request itself could not be unpickled
            result = ("error", f"{type(error).__name__}: {error}"[:2000], 0.0)
        try:
            reply = pickle.dumps(result, pickle.HIGHEST_PROTOCOL)
        except Exception as error:
            reply = pickle.dumps(("error", f"unpicklable result: {type(error).__name__}: {error}"[:2000], result[2]))
        try:
            connection.send_bytes(reply)
        except OSError:
            return
        if result[0] == "timeout":
            return  # interrupted anywhere: start afresh rather than trust this process's caches


def _worker_main(task_fd: int, server_pid: int, memory_headroom: int) -> None:
    die_with_parent(server_pid, death_signal=True)
    disable_core_dumps()
    cap_address_space(memory_headroom)
    _serve_tasks(Connection(task_fd))


class ForkServer:
    """The fork server's loop: answer the parent's requests, reap workers, die with the parent."""

    def __init__(self, control: socket.socket, parent_pid: int, memory_headroom: int) -> None:
        self.control = control
        self.parent_pid = parent_pid
        self.memory_headroom = memory_headroom
        self.children: set[int] = set()
        self.exits: dict[int, int] = {}  # pid -> wait status, the last few reaped
        self.warm = False
        self.warming: Iterator[None] | None = None  # one step at a time, between requests

    def reply(self, kind: bytes, pid: int = 0, value: int = 0, data: bytes = b"") -> None:
        self.control.sendall(REPLY.pack(kind, pid, value) + data)

    def serve(self) -> None:
        self.reply(READY, os.getpid())
        # poll, not select: the control fd keeps the parent's number, past 1023 in a process
        # holding many files (select refuses those).
        poller = select.poll()
        poller.register(self.control, select.POLLIN)
        try:
            while not parent_is_gone(self.parent_pid):
                self.reap()
                warming = self.warming is not None
                readable = poller.poll(0 if warming else _IDLE_POLL_SECONDS * 1000)
                if readable:
                    if not self.handle_request():
                        return  # the parent closed the control socket (or died)
                elif warming:
                    self.warm_step()
        finally:
            for pid in self.children:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)

    def handle_request(self) -> bool:
        data, fds, _, _ = socket.recv_fds(self.control, REQUEST.size, 1)
        if not data:
            return False
        while len(data) < REQUEST.size:  # a stream socket may split even a small message
            more = self.control.recv(REQUEST.size - len(data))
            if not more:
                return False
            data += more
        command, argument = REQUEST.unpack(data)
        if command == FORK and fds:
            self.reply(FORK, self.fork_worker(fds[0]), int(self.warm))
        elif command == KILL:
            if argument in self.children:
                with contextlib.suppress(OSError):
                    os.kill(argument, signal.SIGKILL)
            self.reply(KILL, argument)
        elif command == WAIT:
            self.reply(WAIT, argument, self.wait_for(argument))
        elif command == WARM:
            if not self.warm and self.warming is None:
                self.warming = warm_steps()
            self.reply(WARM, 0, int(self.warm))
        else:
            for fd in fds:
                os.close(fd)
            self.reply(ERROR, 0, 0)
        return True

    def fork_worker(self, task_fd: int) -> int:
        server_pid = os.getpid()
        pid = os.fork()
        if pid == 0:  # the worker
            code = 0
            try:
                self.control.close()
                _worker_main(task_fd, server_pid, self.memory_headroom)
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        os.close(task_fd)
        self.children.add(pid)
        return pid

    def reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            self.record_exit(pid, status)

    def record_exit(self, pid: int, status: int) -> None:
        self.children.discard(pid)
        self.exits[pid] = status
        while len(self.exits) > _STATUS_KEEP:
            del self.exits[next(iter(self.exits))]

    def wait_for(self, pid: int) -> int:
        """``pid``'s wait status once it exited (it is exiting when asked), or ``UNKNOWN_STATUS``."""
        deadline = time.monotonic() + _EXIT_WAIT_SECONDS
        while pid in self.children and time.monotonic() < deadline:
            try:
                reaped, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                break
            if reaped:
                self.record_exit(pid, status)
                break
            time.sleep(0.005)
        return self.exits.get(pid, UNKNOWN_STATUS)

    def warm_step(self) -> None:
        """One step of the warm-up (tens of milliseconds): requests are answered between steps."""
        assert self.warming is not None
        try:
            next(self.warming)
        except StopIteration:
            self.warming, self.warm = None, True
        except Exception:  # warming is an optimisation: a failure only costs speed
            self.warming, self.warm = None, True


def warm_steps() -> Iterator[None]:
    """``symbolic.warm_symbolic``'s work, one parse or comparison per step."""
    from rewardkit.math import symbolic

    corpus = getattr(symbolic, "_WARM_UP_CORPUS", None)
    comparisons = getattr(symbolic, "_WARM_UP_COMPARISONS", None)
    if corpus is None or comparisons is None:  # the symbolic module changed its warm-up: run it whole
        symbolic.warm_symbolic()
        return
    for latex in corpus:
        with contextlib.suppress(Exception):
            symbolic.to_sympy(latex)
        yield
    for answer, gold in comparisons:
        for policy in ("lenient", "strict"):
            symbolic.symbolic_compare(answer, gold, policy, 1e-6)
            yield


def main(argv: list[str]) -> None:
    """Entry point of the fork server process: ``control_fd parent_pid memory_headroom``."""
    control_fd, parent_pid, memory_headroom = (int(argument) for argument in argv[:3])
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: the parent decides
    die_with_parent(parent_pid, death_signal=True, watchdog=False)  # single-threaded: it forks
    control = socket.socket(fileno=control_fd)
    try:
        import rewardkit.math.symbolic
        import rewardkit.math.tasks  # noqa: F401  (the tasks, sympy and the LaTeX parser, once for every worker)
    except BaseException as error:
        message = f"{type(error).__name__}: {error}".encode("utf-8", "replace")[:4000]
        control.sendall(REPLY.pack(ERROR, os.getpid(), len(message)) + message)
        sys.stdout.flush()
        os._exit(1)
    ForkServer(control, parent_pid, memory_headroom).serve()
    os._exit(0)
