"""The host's side of the harness programs: how a sandbox run ended, as a ``CodeTag``; a JSON-line
channel to a sandboxed program with deadlines; the candidate (the program, answering calls) and
the checker (the data set's check code, calling the candidate through the host)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from rewardkit.code import codec
from rewardkit.code.harness import PROGRAM, SCRIPTS, harness_files
from rewardkit.code.sandbox import Job, Limits, Outcome, Sandbox, Session
from rewardkit.code.verdict import CodeTag

#: Seconds a harness program gets to start (its interpreter, before the program's own code runs).
START_BUDGET = 30.0
#: Bytes of protocol lines a candidate or checker session may write in all.
SESSION_OUTPUT = 64 << 20
#: Bytes of one protocol line read from a candidate (a larger return value is the program's failure).
MAX_LINE = 16 << 20


def stderr_tail(outcome: Outcome) -> str:
    """The last non-empty line of a run's stderr (a traceback's exception line), at most 300 characters."""
    lines = [
        line for line in outcome.stderr.decode("utf-8", "replace").splitlines() if line.strip()
    ]
    return lines[-1].strip()[:300] if lines else ""


def ended_badly(outcome: Outcome) -> tuple[CodeTag, str] | None:
    """How a run that ended on its own failed (tag and detail), ``None`` for an exit status of 0.
    ``SANDBOX_ERROR`` only when the sandbox says it failed on our side."""
    if outcome.sandbox_error:
        return CodeTag.SANDBOX_ERROR, outcome.sandbox_error
    if outcome.memory_exceeded:
        return CodeTag.MEMORY_LIMIT, "the program went past its memory limit"
    if outcome.timed_out:
        return CodeTag.TIMEOUT, "the program ran past its time limit"
    if outcome.output_exceeded:
        return CodeTag.WRONG_OUTPUT, "the program's output went past its limit"
    tail = stderr_tail(outcome)
    if tail.startswith("MemoryError"):
        return CodeTag.MEMORY_LIMIT, tail
    if outcome.signal is not None:
        return CodeTag.RUNTIME_ERROR, f"killed by signal {outcome.signal}" + (
            f": {tail}" if tail else ""
        )
    if outcome.exit_code != 0:
        return CodeTag.RUNTIME_ERROR, tail or f"exit status {outcome.exit_code}"
    return None


def stop(session: Session) -> Outcome:
    """End ``session`` now when the sandbox can (``kill``), else at its job's limits."""
    kill = getattr(session, "kill", None)
    return kill() if callable(kill) else session.finish()


class Broken(Exception):
    """A harness program stopped answering: timed out, died, or wrote a line that is not the
    protocol's. ``tag`` and ``detail`` say how, as they will appear in the test's result."""

    def __init__(self, tag: CodeTag, detail: str, who: str = "program") -> None:
        super().__init__(f"{tag}: {detail}")
        self.tag, self.detail, self.who = tag, detail, who


class Channel:
    """One sandboxed harness program spoken to in JSON lines, each answer awaited until a deadline."""

    def __init__(self, sandbox: Sandbox, job: Job, who: str) -> None:
        self.session = sandbox.open(job)
        self.who = who
        self.outcome: Outcome | None = None

    def send(self, message: dict[str, Any]) -> None:
        """Write ``message`` as one line."""
        self.session.send(json.dumps(message, separators=(",", ":")).encode())

    def receive(self, deadline: float) -> dict[str, Any]:
        """The next message, or ``Broken`` (the program is stopped then)."""
        line = self.session.receive(max(0.0, deadline - time.monotonic()))
        if line is None:
            timed_out = time.monotonic() >= deadline
            failure = ended_badly(self.close())
            if failure is not None and failure[0] in (CodeTag.SANDBOX_ERROR, CodeTag.MEMORY_LIMIT):
                raise Broken(*failure, self.who)
            if timed_out:  # stopped by us at the test's deadline, not by its own failure
                raise Broken(CodeTag.TIMEOUT, "the test ran past its time limit", self.who)
            raise Broken(
                *(failure or (CodeTag.RUNTIME_ERROR, f"the {self.who} exited during the test")),
                self.who,
            )
        try:
            if len(line) > MAX_LINE:
                raise ValueError(f"a line of {len(line):,} bytes")
            message = json.loads(line)
            if not isinstance(message, dict):
                raise ValueError("not an object")
        except (ValueError, RecursionError) as error:
            self.close()
            detail = f"the {self.who} wrote a line that is not the harness's ({error})"
            raise Broken(CodeTag.RUNTIME_ERROR, detail, self.who) from None
        return message

    def close(self) -> Outcome:
        """Stop the program (once) and return how it ended."""
        if self.outcome is None:
            self.outcome = stop(self.session)
        return self.outcome


def _started(channel: Channel) -> None:
    """Wait for a harness program's first line, sent before any code of the program or the data
    set runs: a harness that does not start is our side's failure (``SANDBOX_ERROR``)."""
    try:
        channel.receive(time.monotonic() + START_BUDGET)
    except Broken as broken:
        raise Broken(
            CodeTag.SANDBOX_ERROR, f"the harness did not start: {broken.detail}", channel.who
        ) from None


def _limits(timeout: float, memory: int, tests: int) -> Limits:
    """A session's limits: it serves ``tests`` tests of ``timeout`` seconds each, and its start."""
    return Limits(
        timeout=START_BUDGET + timeout * (tests + 1), memory=memory, output=SESSION_OUTPUT
    )


@dataclass(frozen=True)
class Answer:
    """A candidate's answer to one call: the returned value (decoded, plain data) or the exception's type."""

    value: Any = None
    data: Any = None  # the encoded value, as the checker receives it
    raised: str | None = None
    message: str = ""


class Candidate:
    """The program loaded in its own sandbox, answering call requests (``candidate.py``)."""

    def __init__(
        self,
        sandbox: Sandbox,
        program: str,
        *,
        prelude: bool,
        timeout: float,
        memory: int,
        tests: int,
    ) -> None:
        files = {
            **harness_files("candidate"),
            PROGRAM: program.encode(),
            "_rk_config.json": json.dumps({"prelude": prelude}).encode(),
        }
        job = Job(files=files, main=SCRIPTS["candidate"], limits=_limits(timeout, memory, tests))
        self.channel = Channel(sandbox, job, "program")
        self.calls = 0
        _started(self.channel)
        self.load_failure: tuple[CodeTag, str] | None = None
        try:
            loaded = self.channel.receive(time.monotonic() + timeout)
        except Broken as broken:
            self.load_failure = broken.tag, f"{broken.detail} (while the program was loaded)"
            return
        if loaded.get("loaded") is not True:
            name = str(loaded.get("raise", "Exception"))[:100]
            tag = CodeTag.MEMORY_LIMIT if name == "MemoryError" else CodeTag.RUNTIME_ERROR
            self.load_failure = (
                tag,
                f"the program raised {name} when loaded: {str(loaded.get('message', ''))[:300]}",
            )

    def call(self, name: str, args: Any, kwargs: Any, deadline: float) -> Answer:
        """Call ``name`` with encoded ``args`` and ``kwargs``; ``Broken`` when the program fails the protocol."""
        self.calls += 1
        self.channel.send({"id": self.calls, "fn": name, "args": args, "kwargs": kwargs})
        message = self.channel.receive(deadline)
        try:
            if message.get("id") != self.calls:
                raise codec.CodecError(
                    f"an answer to call {message.get('id')!r}, expected {self.calls}"
                )
            if "return" in message:
                return Answer(value=codec.decode(message["return"]), data=message["return"])
            if isinstance(message.get("raise"), str):
                return Answer(
                    raised=message["raise"][:100], message=str(message.get("message", ""))[:500]
                )
            raise codec.CodecError("neither a return value nor an exception")
        except codec.CodecError as error:
            self.channel.close()
            raise Broken(
                CodeTag.RUNTIME_ERROR, f"the program broke its harness's protocol ({error})"
            ) from None

    def close(self) -> None:
        """Stop the program."""
        self.channel.close()


class Checker:
    """The data set's check code in its own sandbox (``checker.py``), with proxies for the
    candidate's functions; it holds the tests, the candidate never does."""

    def __init__(
        self, sandbox: Sandbox, check: dict[str, Any], *, timeout: float, memory: int
    ) -> None:
        files = {**harness_files("checker"), "_rk_check.json": json.dumps(check).encode()}
        job = Job(
            files=files,
            main=SCRIPTS["checker"],
            limits=_limits(timeout, memory, len(check["tests"])),
        )
        self.channel = Channel(sandbox, job, "checker")
        _started(self.channel)
        try:
            ready = self.channel.receive(time.monotonic() + START_BUDGET + timeout)
        except Broken as broken:
            raise Broken(
                CodeTag.SANDBOX_ERROR,
                f"the tests' setup code did not run: {broken.detail}",
                "checker",
            ) from None
        if ready.get("ready") is not True:
            detail = f"the tests' setup code failed: {ready.get('error')}: {ready.get('message')}"
            raise Broken(CodeTag.SANDBOX_ERROR, detail, "checker")

    def close(self) -> None:
        """Stop the checker."""
        self.channel.close()
