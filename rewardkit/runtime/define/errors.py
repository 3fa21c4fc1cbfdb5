"""The runtime's typed errors: each message names the reward and what went wrong, so a
misconfigured reward fails at the first sample instead of silently training on zeros."""

from __future__ import annotations

from collections.abc import Sequence

MAX_ERROR_TEXT = 2_000
"""Characters of an exception's message kept in a recorded ``error`` text (a 200 MB message must
not ride along in every result row)."""

_HINTS: dict[str, str] = {
    "SystemExit": "the reward called sys.exit(), or argparse exited on bad arguments",
    "GeneratorExit": "GeneratorExit escaped the reward",
    "StopIteration": "next() on an exhausted iterator?",
    "StopAsyncIteration": "anext() on an exhausted async iterator?",
    "CancelledError": "raised by the reward itself (e.g. awaiting a cancelled future), not a cancellation of the batch",
}
"""What a recorded failure adds for exception types that say little by themselves."""


def safe_message(exc: BaseException) -> str:
    """``str(exc)`` bounded to ``MAX_ERROR_TEXT`` characters, or a placeholder when ``__str__``
    raises: describing a failure must never become a failure of its own."""
    try:
        message = str(exc)
    except KeyboardInterrupt:
        raise
    except BaseException as problem:
        return f"(the message could not be read: str() raised {type(problem).__name__})"
    if type(message) is not str:  # a str subclass, whose methods could misbehave: its characters
        message = str.__str__(message)
    if len(message) > MAX_ERROR_TEXT:
        return f"{message[:MAX_ERROR_TEXT]}... ({len(message):,} characters in all)"
    return message


def describe_error(exc: BaseException) -> str:
    """``"<type>: <message>"``: how a recorded failure reads in a result's ``error`` extra.

    The message is bounded (``MAX_ERROR_TEXT``) and never raises, whatever ``__str__`` does; a
    ``__str__`` that blocks is the caller's to bound (``rewardkit.runtime.run.execution`` describes an
    exception in the thread or process that ran the call, under the call's timeout).
    """
    kind = type(exc).__name__
    text = f"{kind}: {safe_message(exc) or '(no message)'}"
    hint = _HINTS.get(kind)
    return f"{text} ({hint})" if hint else text


def has_plain_message(exc: BaseException) -> bool:
    """Whether ``str(exc)`` is known to be quick and safe: a built-in ``__str__`` over arguments
    of built-in scalar types (the usual ``ValueError("...")``), so it needs no time bound."""
    if type(exc).__str__.__class__ is not _SLOT_WRAPPER:
        return False
    return all(arg.__class__ in _PLAIN_ARGS for arg in exc.args)


_SLOT_WRAPPER = type(BaseException.__str__)
_PLAIN_ARGS = frozenset({str, int, float, bool, bytes, type(None)})


class RewardError(Exception):
    """Base class of every error the reward runtime raises on bad rewards or bad fields."""


class MissingFieldError(RewardError, TypeError):
    """A reward declares a required parameter that no field of the sample supplies.

    Also a ``TypeError``: it replaces the ``TypeError`` Python would raise for the call.
    """

    def __init__(
        self,
        message: str,
        *,
        reward_name: str,
        parameter: str,
        available: Sequence[str],
        suggestion: str | None,
    ) -> None:
        super().__init__(message)
        self.reward_name = reward_name
        self.parameter = parameter
        self.available = tuple(available)
        self.suggestion = suggestion


class FieldCollisionError(RewardError, TypeError):
    """A task field has the name of a predefined field (``final_response``, ``trajectory``, ...).

    Raised instead of Python's "got multiple values for keyword argument".
    """

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


class RewardShapeError(RewardError, TypeError, ValueError):
    """A reward returned something that is not a reward: ``None``, a dict without ``reward``, a string...

    A ``TypeError`` (a value of the wrong type) and a ``ValueError``: AgentFly's runtime raises
    ``ValueError`` for a bad return shape, so code written for it catches this too.
    """


class RewardValueError(RewardError, ValueError):
    """A reward returned a NaN or infinite value, which would poison training."""


class RewardRegistryError(RewardError):
    """Two different definitions claim one reward name, or a built-in reward cannot be loaded."""


class ResourceTimeoutError(RewardError, TimeoutError):
    """No instance of a shared resource became free within the acquire timeout."""


class UnknownRewardError(RewardError, KeyError):
    """``get_reward`` was asked for a name nobody registered; the message lists close matches."""

    def __str__(self) -> str:  # KeyError would show the message quoted
        return str(self.args[0]) if self.args else ""


class RewardAbortedError(RewardError):
    """A reward raised something that is not an ordinary failure: ``SystemExit`` (``sys.exit()``,
    argparse), ``GeneratorExit``, ``StopIteration``, a ``CancelledError`` of its own, a library's
    own ``BaseException`` (gevent's ``Timeout``, pytest's outcomes).

    Carried as an ``Exception`` so that it fails one sample (recorded under
    ``on_error="record"``) instead of ending the batch, the event loop or the process. The
    original is the ``__cause__``. Only ``KeyboardInterrupt`` propagates as itself.
    """


class RewardExecutionError(RewardError, RuntimeError):
    """A reward call could not run, or finish, where its execution mode sent it: a worker process
    died (a crash, the OOM killer), fields or a result that cannot be pickled, a broken pool."""


class RewardLoadError(RewardExecutionError):
    """A reward run with ``execution="process"`` cannot be sent to, or loaded in, a worker
    process (defined inside a function, a module the worker cannot import): every sample would
    fail, so this is a configuration error, raised under every error policy."""


class SignalInThreadError(RewardExecutionError, ValueError):
    """A reward whose code uses signals (math_verify's default timeouts call ``signal.alarm``)
    ran off the main thread, where Python refuses to set a signal handler. The message names the
    execution mode it ran in and the one that works (``execution="process"``); a ``ValueError``
    too, as the original was."""
