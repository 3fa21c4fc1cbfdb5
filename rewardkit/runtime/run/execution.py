"""Where and how one reward call runs: the per-sample path shared by ``calculate_rewards``,
``calculate_reward``, the framework adapters and the pytest plugin.

A sync reward runs in one of three execution modes:

* ``"inline"``: on the caller's thread (no hop; a timeout cannot be enforced);
* ``"thread"``: in ``reward_threads``, the process's bounded pool of daemon threads (a timed-out
  call is abandoned, not killed: Python cannot kill a thread);
* ``"process"``: in a worker process of ``reward_processes``, on that process's main thread, so
  graders that time themselves out with signals (math_verify's ``signal.alarm``) work; a call
  past its timeout is killed with its process, which is replaced.

An async reward runs on the caller's event loop (``"inline"`` and ``"thread"`` alike) or, with
``"process"``, on an event loop of a worker process.

Whatever the mode, a failing call becomes a :class:`SampleFailure`: the exception to raise under
``on_error="raise"`` and a bounded text to record, built where the call ran and under its
timeout (a ``__str__`` that raises or blocks cannot take the batch down). Exceptions that are not
ordinary failures (``SystemExit``, ``GeneratorExit``, ``StopIteration``, a ``CancelledError`` the
reward raised itself, a library's own ``BaseException``) fail their sample as
``RewardAbortedError``; only ``KeyboardInterrupt`` and a cancellation of the caller propagate.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import pickle
import threading
import time
import warnings
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any

from rewardkit.runtime.define.errors import (
    FieldCollisionError,
    RewardAbortedError,
    RewardExecutionError,
    RewardLoadError,
    SignalInThreadError,
    describe_error,
    has_plain_message,
)
from rewardkit.runtime.define.options import (
    ExecutionMode,
    check_execution,
    check_timeout,
    refuse_inline_timeout,
)
from rewardkit.runtime.define.results import RewardResult
from rewardkit.runtime.run.reward_threads import reward_threads

CONFIGURATION_ERRORS: tuple[type[BaseException], ...] = (FieldCollisionError, RewardLoadError)
"""Errors that mean the reward or its data mapping is wrong, not one sample: never recorded."""

CANCEL_GRACE_SECONDS = 1.0
"""How long a timed-out async reward, once cancelled, may take to finish its cleanup before its
coroutine is closed (the timeout is reported either way)."""


def resolve_execution(
    reward: Any, execution: ExecutionMode | None, timeout: float | None, *, untimed: ExecutionMode
) -> tuple[ExecutionMode, float | None]:
    """The mode and timeout a call of ``reward`` gets: the caller's, else the reward's own
    (``@reward(execution=..., timeout=...)``), else ``"thread"`` under a timeout and ``untimed``
    without one. A sync reward ``"inline"`` under a timeout is a ``ValueError``: nothing could
    enforce it."""
    check_execution(execution)
    if timeout is None:
        timeout = getattr(reward, "timeout", None)
    mode = (
        execution
        or getattr(reward, "execution", None)
        or ("thread" if timeout is not None else untimed)
    )
    refuse_inline_timeout(reward.name, reward.is_async, mode, timeout)
    return mode, timeout


class SampleFailure(Exception):
    """One sample's failure as a :class:`SampleRunner` reports it: ``error`` is what
    ``on_error="raise"`` raises, ``text`` the ``"<type>: <message>"`` to record (bounded), and
    ``timed_out`` whether the call outlived its timeout."""

    def __init__(self, error: BaseException, text: str, *, timed_out: bool = False) -> None:
        super().__init__(text)
        self.error = error
        self.text = text
        self.timed_out = timed_out


class CallFailed(Exception):
    """A failed call as it leaves the thread or process that ran it: the reward's exception and
    its description, built there (so under the call's timeout)."""

    def __init__(self, original: BaseException, text: str) -> None:
        super().__init__(text)
        self.original = original
        self.text = text


def call_guarded(invoke: Callable[[Mapping[str, Any]], Any], fields: Mapping[str, Any]) -> Any:
    """``invoke(fields)``, with any failure but ``KeyboardInterrupt`` raised as ``CallFailed``
    (``StopIteration`` and ``SystemExit`` included: neither may cross a future or end a worker)."""
    try:
        return invoke(fields)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        raise CallFailed(exc, describe_error(exc)) from None


def call_ended(
    invoke: Callable[[Mapping[str, Any]], Any], fields: Mapping[str, Any]
) -> tuple[Any, float]:
    """``call_guarded(invoke, fields)`` and the ``time.monotonic()`` it returned at: whether a
    result came within its deadline does not depend on when the caller's loop got to it."""
    return call_guarded(invoke, fields), time.monotonic()


class CallTimedOut(TimeoutError):
    """A reward call outlived its timeout (``started=False``: a sync call never got a thread),
    as opposed to a ``TimeoutError`` the reward raised itself (e.g. from an API client)."""

    def __init__(self, started: bool) -> None:
        super().__init__("started" if started else "not started")
        self.started = started


def timeout_error(reward_name: str, where: str, timeout: float, exc: CallTimedOut) -> TimeoutError:
    """The ``TimeoutError`` reported for a call of ``reward_name`` on ``where`` that timed out."""
    if exc.started:
        return TimeoutError(f"reward {reward_name!r} on {where} took longer than {timeout} s")
    return TimeoutError(
        f"reward {reward_name!r} on {where} did not start within {timeout} s: no reward thread was "
        f"free ({reward_threads.describe()})"
    )


# -- cancellation: the caller's, or the reward's own ---------------------------------------------

_detaching = threading.local()
"""Set while this thread closes a coroutine that ignored its cancellation (see ``detach``)."""


def torn_down(exc: BaseException) -> bool:
    """Whether ``exc`` is the caller ending the call, not the reward failing: a cancellation of the
    running task (Python 3.11+ counts requests; on 3.10 every ``CancelledError`` counts as the
    caller's), or anything raised while a detach closes the call (``GeneratorExit``, or the
    ``RuntimeError`` of an awaited coroutine that ignored it)."""
    if getattr(_detaching, "active", False):
        return True
    if isinstance(exc, asyncio.CancelledError):
        task = asyncio.current_task()
        cancelling = getattr(task, "cancelling", None)
        return cancelling is None or cancelling() > 0
    return False


class Detachable:
    """A coroutine run as a task that can be let go of even when it ignores its cancellation.

    ``detach()`` closes the coroutine (``GeneratorExit`` at its await point: its ``finally``
    blocks run, an ``except CancelledError`` does not catch it) and cancels the task, which then
    ends as cancelled: ``asyncio.run()`` no longer waits for it when the loop closes.
    """

    __slots__ = ("coroutine", "detached", "ended_at", "name", "task")

    def __init__(self, coroutine: Coroutine[Any, Any, Any], name: str = "") -> None:
        self.coroutine = coroutine
        self.detached = False
        self.name = name
        self.ended_at: float | None = None
        """The loop's time when the coroutine returned or raised (``None`` while it runs)."""
        self.task: asyncio.Task[Any] = asyncio.ensure_future(self._run())

    async def _run(self) -> Any:
        try:
            return await self.coroutine
        except BaseException:
            if self.detached:  # resumed after the close: end as what it is, cancelled
                raise asyncio.CancelledError() from None
            raise
        finally:
            self.ended_at = asyncio.get_running_loop().time()

    def detach(self) -> bool:
        """Close the coroutine and cancel the task; False when the coroutine ignored even
        ``GeneratorExit`` and keeps running (a ``RuntimeWarning`` says so, and also when an
        awaited coroutine ignored it and was abandoned without finishing its cleanup)."""
        self.detached = True
        ignored = False
        _detaching.active = True
        try:
            for _ in range(3):
                try:
                    self.coroutine.close()
                except (
                    RuntimeError
                ):  # "coroutine ignored GeneratorExit": here, or in what it awaited
                    ignored = True
                except BaseException:  # what a finally block raised while closing
                    pass
                if getattr(self.coroutine, "cr_frame", None) is None:
                    break
        finally:
            _detaching.active = False
        self.task.cancel()
        running = getattr(self.coroutine, "cr_frame", None) is not None
        if running or ignored:
            what = (
                "it keeps running on the event loop, and asyncio.run() will wait for it when the loop closes"
                if running
                else "it was abandoned without finishing its cleanup"
            )
            warnings.warn(
                f"reward {self.name or '(unnamed)'!r} ignored its cancellation and GeneratorExit after "
                f"its timeout: {what} (a reward must not swallow asyncio.CancelledError or GeneratorExit)",
                RuntimeWarning,
                stacklevel=2,
            )
        return not running


_left_running: set[asyncio.Future[Any]] = set()
"""Calls nobody waits for any more that have not ended yet: kept referenced until they end."""


def _forget(task: asyncio.Future[Any]) -> None:
    _left_running.discard(task)
    if not task.cancelled():
        task.exception()  # retrieved: no "exception was never retrieved" warning


def let_go(future: asyncio.Future[Any]) -> None:
    """Keep ``future`` referenced until it ends, its outcome retrieved."""
    if future.done():
        _forget(future)
    else:
        _left_running.add(future)
        future.add_done_callback(_forget)


async def settle(running: list[Detachable], grace: float = CANCEL_GRACE_SECONDS) -> None:
    """Cancel ``running`` tasks, give them ``grace`` seconds to finish their cleanup, then detach
    the ones that ignored it."""
    for item in running:
        item.task.cancel()
    pending = [item.task for item in running if not item.task.done()]
    if pending:
        await asyncio.wait(pending, timeout=grace)
    for item in running:
        if not item.task.done():
            item.detach()
        let_go(item.task)


async def await_within(
    pending: Awaitable[Any],
    timeout: float | None,
    *,
    job: concurrent.futures.Future[Any] | None = None,
    name: str = "",
) -> Any:
    """Await ``pending`` (an async reward's coroutine, or ``job`` wrapped for asyncio) for at most
    ``timeout`` seconds, then raise ``CallTimedOut``.

    Unlike ``asyncio.wait_for``, what a cancelled coroutine does next cannot turn the timeout into
    a success, nor keep the event loop from closing: one that swallows ``CancelledError`` and
    returns a value is still timed out, and one that keeps running gets ``CANCEL_GRACE_SECONDS``
    to finish, then is closed (``Detachable``). A coroutine that ends after its deadline (one
    that blocked the loop past it with ``time.sleep``, say: nothing could interrupt it) is timed
    out too, whatever it returned or raised. ``job`` (a sync call in ``reward_threads``) is
    dropped if it never started.
    """
    if timeout is None:
        return await pending
    if job is not None:  # a thread's future: cancelling it is immediate, wait_for is exact
        try:
            return await asyncio.wait_for(pending, timeout)
        except asyncio.TimeoutError as exc:
            if not isinstance(exc.__cause__, asyncio.CancelledError):
                raise  # the reward's own TimeoutError (e.g. from an API client)
            raise CallTimedOut(started=not job.cancel()) from None
    deadline = asyncio.get_running_loop().time() + timeout
    call = Detachable(pending, name)  # type: ignore[arg-type]
    try:
        done, _ = await asyncio.wait({call.task}, timeout=timeout)
    except asyncio.CancelledError:
        call.task.cancel()
        let_go(call.task)
        raise
    if done:
        if call.ended_at is None or call.ended_at <= deadline:
            return call.task.result()
        let_go(call.task)  # it ended late: its outcome is dropped
        raise CallTimedOut(started=True)
    await settle([call])
    raise CallTimedOut(started=True)


async def _describe(exc: BaseException) -> str:
    """``describe_error(exc)``, in a reward thread unless its message is known to be plain: a
    ``__str__`` that blocks must not block the event loop (the caller bounds the wait)."""
    if has_plain_message(exc):
        return describe_error(exc)
    try:
        return await asyncio.wrap_future(reward_threads.submit(describe_error, exc))  # type: ignore[no-any-return]
    except Exception as problem:  # no thread to read it in: say so rather than block the loop
        return f"{type(exc).__name__}: (the message was not read: {describe_error(problem)})"


def finish_now(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coroutine`` to its end in this thread, with no event loop: for one that never
    waits (an inline sync reward's scoring); one that would wait is a ``RuntimeError``."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise RuntimeError("a reward's scoring waited on an event loop where none was expected")


def run_coroutine(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coroutine`` to completion from sync code, even in a thread whose loop is running."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="rewardkit-loop") as helper:
        return helper.submit(asyncio.run, coroutine).result()


# -- the runner -----------------------------------------------------------------------------------


def _is_signal_in_thread(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) is Python's refusal to set a signal handler off the main
    thread, as raised by ``signal.signal`` or re-raised by math_verify."""
    seen = 0
    while exc is not None and seen < 8:
        if type(exc) is ValueError and exc.args and isinstance(exc.args[0], str):
            text = exc.args[0]
            if "signal only works in main thread" in text or "support threaded environment" in text:
                return True
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
        seen += 1
    return False


class SampleRunner:
    """Runs one reward on one sample at a time under an execution mode and a timeout.

    ``await runner.run(fields, index)`` (from async code) and ``runner.call(fields, index)``
    (from sync code) return the ``RewardResult`` or raise :class:`SampleFailure`;
    ``configuration`` errors (a wrong field mapping, a reward that cannot load) propagate as
    themselves. ``place`` formats a sample's index for messages (``"samples[{}]"``).
    ``reference`` is what ``execution="process"`` sends to its workers to find the reward
    (anything picklable with a ``resolve()`` method, such as an adapter's ``RewardReference``;
    default: the reward itself, pickled by module and qualified name).
    """

    def __init__(
        self,
        reward: Any,
        *,
        execution: ExecutionMode | None = None,
        timeout: float | None = None,
        untimed: ExecutionMode = "thread",
        place: str = "samples[{}]",
        configuration: tuple[type[BaseException], ...] = CONFIGURATION_ERRORS,
        reference: Any = None,
    ) -> None:
        self.reward = reward
        self.name: str = reward.name
        self.execution, self.timeout = resolve_execution(
            reward, execution, check_timeout(timeout), untimed=untimed
        )
        self.place = place
        self.configuration = configuration
        self.pool = None
        if self.execution == "process":
            from rewardkit.runtime.run.reward_processes import reward_processes

            self.pool = reward_processes.pool_for(reward, self.name, reference=reference)
            self.run = self._run_in_process
        elif reward.is_async:
            self.run = self._run_on_loop if self.timeout is None else self._run_on_loop_within
        elif self.execution == "thread":
            self.run = self._run_in_thread
        else:
            self.run = self._run_inline
        self._guarded = functools.partial(call_guarded, reward.invoke)
        self._ended = functools.partial(call_ended, reward.invoke)

    # -- failures --------------------------------------------------------------------------

    def failure(self, original: BaseException, text: str, index: int) -> SampleFailure:
        """The ``SampleFailure`` for a call of sample ``index`` that raised ``original``."""
        if self.execution != "process" and _is_signal_in_thread(original):
            where = (
                "a thread of the reward pool"
                if self.execution == "thread"
                else "a thread other than the main one"
            )
            error: BaseException = SignalInThreadError(
                f"reward {self.name!r} on {self.place.format(index)} ran with execution={self.execution!r}, "
                f"in {where}, where signal handlers cannot be set; graders that time themselves out "
                "with signal.alarm (math_verify's parse/verify defaults) need execution='process': "
                "@reward(..., execution='process'), or pass execution='process' to calculate_rewards "
                f"or the adapter. It raised {text}"
            )
            error.__cause__ = original
            return SampleFailure(error, describe_error(error))
        if isinstance(original, Exception) and not isinstance(
            original, (StopIteration, StopAsyncIteration, concurrent.futures.CancelledError)
        ):
            return SampleFailure(original, text)
        error = RewardAbortedError(
            f"reward {self.name!r} on {self.place.format(index)} raised {text}"
        )
        error.__cause__ = original
        return SampleFailure(error, text)

    def timed_out(self, exc: CallTimedOut, index: int) -> SampleFailure:
        error = timeout_error(self.name, self.place.format(index), self.timeout, exc)  # type: ignore[arg-type]
        return SampleFailure(error, describe_error(error), timed_out=True)

    async def _failed_on_loop(self, exc: BaseException, index: int) -> SampleFailure:
        return self.failure(exc, await _describe(exc), index)

    # -- async paths (one is ``self.run``) -------------------------------------------------

    async def _run_inline(self, fields: Mapping[str, Any], index: int) -> RewardResult:
        try:
            return self._guarded(fields)  # type: ignore[no-any-return]
        except CallFailed as failed:
            if isinstance(failed.original, self.configuration):
                raise failed.original from None
            raise self.failure(failed.original, failed.text, index) from None

    async def _run_in_thread(self, fields: Mapping[str, Any], index: int) -> RewardResult:
        if self.timeout is None:
            job = reward_threads.submit(self._guarded, fields)
        else:
            deadline = time.monotonic() + self.timeout
            job = reward_threads.submit(self._ended, fields, timeout=self.timeout)
        try:
            if self.timeout is None:
                return await asyncio.wrap_future(job)  # type: ignore[no-any-return]
            result, ended = await await_within(asyncio.wrap_future(job), self.timeout, job=job)
            if ended > deadline:  # done in time by the thread's clock, or it is a timeout
                raise CallTimedOut(started=True)
            return result  # type: ignore[no-any-return]
        except CallFailed as failed:
            if isinstance(failed.original, self.configuration):
                raise failed.original from None
            raise self.failure(failed.original, failed.text, index) from None
        except CallTimedOut as exc:
            raise self.timed_out(exc, index) from None
        except self.configuration:
            raise
        except Exception as exc:  # the pool itself failed (no thread could start)
            raise self.failure(exc, describe_error(exc), index) from None

    async def _run_on_loop(self, fields: Mapping[str, Any], index: int) -> RewardResult:
        """An async reward on the caller's loop; under a timeout, the task ``await_within`` times
        (its failure is then described within the timeout too)."""
        try:
            return await self.reward.invoke(fields)  # type: ignore[no-any-return]
        except self.configuration:
            raise
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt) or torn_down(exc):
                raise
            failure = await self._failed_on_loop(exc, index)
        raise failure

    async def _run_on_loop_within(self, fields: Mapping[str, Any], index: int) -> RewardResult:
        try:
            return await await_within(
                self._run_on_loop(fields, index), self.timeout, name=self.name
            )  # type: ignore[no-any-return]
        except CallTimedOut as exc:
            raise self.timed_out(exc, index) from None

    async def _run_in_process(self, fields: Mapping[str, Any], index: int) -> RewardResult:
        job = self._submit(fields, index)
        try:
            outcome = await asyncio.wrap_future(job)
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError) and torn_down(exc):
                raise
            raise self._process_failure(exc, index) from None
        return self._process_outcome(outcome, index)

    # -- sync entry ------------------------------------------------------------------------

    def call(self, fields: Mapping[str, Any], index: int = 0) -> RewardResult:
        """Run the call from sync code (no running event loop needed), under the same rules."""
        if self.execution == "process":
            job = self._submit(fields, index)
            try:
                outcome = job.result()
            except Exception as exc:
                raise self._process_failure(exc, index) from None
            return self._process_outcome(outcome, index)
        if self.reward.is_async:
            return run_coroutine(self.run(fields, index))  # type: ignore[no-any-return]
        try:
            if self.execution == "inline":
                return self._guarded(fields)  # type: ignore[no-any-return]
            job = reward_threads.submit(self._guarded, fields, timeout=self.timeout)
            if not concurrent.futures.wait([job], self.timeout).done:
                raise self.timed_out(CallTimedOut(started=not job.cancel()), index)
            return job.result()  # type: ignore[no-any-return]
        except CallFailed as failed:
            if isinstance(failed.original, self.configuration):
                raise failed.original from None
            raise self.failure(failed.original, failed.text, index) from None
        except (SampleFailure, *self.configuration):
            raise
        except Exception as exc:  # the pool itself failed (no thread could start)
            raise self.failure(exc, describe_error(exc), index) from None

    # -- processes -------------------------------------------------------------------------

    def _submit(self, fields: Mapping[str, Any], index: int) -> concurrent.futures.Future[Any]:
        """Send the reward's declared fields to its pool (a missing one fails here, in this process)."""
        binding = self.reward.binding
        try:
            selected = binding.select(fields) if binding is not None else dict(fields)
        except self.configuration:
            raise
        except Exception as exc:  # a required field missing from this sample
            raise self.failure(exc, describe_error(exc), index) from None
        try:
            return self.pool.submit(selected, self.timeout)  # type: ignore[union-attr]
        except Exception as exc:  # the pool could not take it (stopped meanwhile)
            raise self._process_failure(exc, index) from None

    def _process_failure(self, exc: BaseException, index: int) -> SampleFailure | BaseException:
        from rewardkit.runtime.run.reward_processes import pool_error

        if isinstance(exc, concurrent.futures.TimeoutError):  # pebble killed the worker
            self.pool.count("timeouts")  # type: ignore[union-attr]
            return self.timed_out(CallTimedOut(started=True), index)
        error = pool_error(exc, self.name, self.place.format(index), self.pool)
        if isinstance(error, self.configuration):
            return error
        return SampleFailure(error, describe_error(error))

    def _process_outcome(self, outcome: Any, index: int) -> RewardResult:
        from rewardkit.runtime.run.reward_processes import WorkerFailure

        if outcome.__class__ is bytes:  # the result, pickled in the worker
            try:
                return pickle.loads(outcome)  # type: ignore[no-any-return]
            except Exception as exc:
                error = RewardExecutionError(
                    f"reward {self.name!r} on {self.place.format(index)}: its result cannot be loaded in "
                    f"this process ({describe_error(exc)})"
                )
                raise SampleFailure(error, describe_error(error)) from None
        if outcome.__class__ is not WorkerFailure:
            return outcome  # type: ignore[no-any-return]
        original = outcome.exception(self.name)
        if isinstance(original, KeyboardInterrupt):
            raise original
        if isinstance(original, self.configuration):
            raise original
        raise self.failure(original, outcome.text, index)


__all__ = [
    "CANCEL_GRACE_SECONDS",
    "CONFIGURATION_ERRORS",
    "CallFailed",
    "CallTimedOut",
    "Detachable",
    "SampleFailure",
    "SampleRunner",
    "await_within",
    "call_ended",
    "call_guarded",
    "resolve_execution",
    "run_coroutine",
    "settle",
    "timeout_error",
    "torn_down",
]
