"""Resolve a reward from how a test names it, and call it from synchronous test code.

The pytest plugin and the property tests share this so that a golden file, a fixture
and a contract test all run a reward exactly the way training runs it: through the runtime's
per-sample runner (declared fields only, shape and finiteness checked), in the reward's
execution mode and under its timeout.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import difflib
import importlib
import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

REGISTRATION_HINT = (
    "A reward is registered when its module is imported: import that module in conftest.py, "
    "or name the reward as 'module:attr'"
)


class RewardLookupError(LookupError):
    """A reward named in a test (registered name or ``module:attr``) could not be found."""


def resolve_object(spec: str) -> Any:
    """Import ``package.module:attr.sub`` or ``package.module.attr`` and return the object.

    Raises ``RewardLookupError`` naming ``spec`` and what was missing.
    """
    if ":" in spec:
        module_name, _, attr_path = spec.partition(":")
        candidates = [(module_name, attr_path)]
    else:
        parts = spec.split(".")
        candidates = [
            (".".join(parts[:i]), ".".join(parts[i:])) for i in range(len(parts) - 1, 0, -1)
        ]
    errors: list[str] = []
    for module_name, attr_path in candidates:
        if not module_name or not attr_path:
            continue
        try:
            target: Any = importlib.import_module(module_name)
        except ImportError as exc:
            errors.append(f"cannot import {module_name!r} ({exc})")
            continue
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            # sys.exit() or pytest.skip() at import: the module's error, not pytest's
            from rewardkit.runtime.define.errors import describe_error

            errors.append(f"importing {module_name!r} raised {describe_error(exc)}")
            continue
        try:
            for attr in attr_path.split("."):
                target = getattr(target, attr)
        except AttributeError:
            errors.append(f"module {module_name!r} has no attribute {attr_path!r}")
            continue
        return target
    detail = "; ".join(errors) if errors else "expected 'module:attr' or 'module.attr'"
    raise RewardLookupError(f"cannot resolve {spec!r}: {detail}")


def resolve_reward(spec: Any) -> Any:
    """Return the reward ``spec`` names: a reward object as is, ``module:attr``, or a registered name."""
    if not isinstance(spec, str):
        if not callable(spec):
            raise RewardLookupError(f"{spec!r} is not a reward (not callable)")
        return spec
    if ":" in spec:
        return resolve_object(spec)
    from rewardkit import get_reward

    try:
        return get_reward(spec)
    except KeyError as exc:
        message = exc.args[0] if exc.args else str(exc)
        raise RewardLookupError(
            f"unknown reward {spec!r}: {message}. {REGISTRATION_HINT}"
        ) from None


def reward_name(reward: Any) -> str:
    """A readable name for a reward object, for failure messages."""
    name = getattr(reward, "name", None)
    if isinstance(name, str) and name:
        return name
    return getattr(reward, "__qualname__", None) or type(reward).__name__


def reward_signature(reward: Any) -> inspect.Signature | None:
    """The signature the fields bind to (the decorated function, ``BaseReward.call``, or the
    callable itself); None when Python cannot read it."""
    target = getattr(reward, "__wrapped__", None) or getattr(reward, "call", None) or reward
    try:
        return inspect.signature(target)
    except (TypeError, ValueError):
        return None


def declares_field(reward: Any, name: str) -> bool:
    """True when ``reward`` takes a field called ``name`` (by name, or through ``**kwargs``)."""
    signature = reward_signature(reward)
    if signature is None:
        return name in (getattr(reward, "parameters", None) or ())
    return name in signature.parameters or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values()
    )


def fields_problem(reward: Any, fields: Mapping[str, Any]) -> str | None:
    """Why ``fields`` cannot be a call of ``reward``, or None: a field it does not take (the
    runtime drops those silently, so a misspelt optional field would go unnoticed), or a
    required one missing."""
    signature = reward_signature(reward)
    if signature is None:
        return None
    parameters = [
        p
        for p in signature.parameters.values()
        if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ]
    names = [p.name for p in parameters]
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values())
    declared = f"reward {reward_name(reward)!r} takes {', '.join(names) or 'no fields'}"
    if not takes_any:
        for key in fields:
            if key not in names:
                close = difflib.get_close_matches(key, names, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                return f"field {key!r} is not a parameter of the reward{hint}; {declared}"
    for parameter in parameters:
        if parameter.default is inspect.Parameter.empty and parameter.name not in fields:
            close = difflib.get_close_matches(parameter.name, list(fields), n=1)
            hint = f" (is {close[0]!r} a misspelling?)" if close else ""
            return f"missing field {parameter.name!r}, which the reward requires{hint}; {declared}"
    return None


def _run_in_fresh_thread(coro: Any) -> Any:
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


@dataclass(frozen=True)
class RunOptions:
    """How tests run a reward when they do not say: ``execution`` and ``timeout`` override the
    reward's own (``@reward(execution=..., timeout=...)``); a sync reward that declares no mode
    runs in a reward thread, as ``calculate_rewards`` runs it in training."""

    execution: str | None = None
    timeout: float | None = None


_defaults: list[RunOptions] = [RunOptions()]


def configure(options: RunOptions) -> RunOptions:
    """Set the run options of every ``RewardCaller`` made without its own (the pytest plugin
    sets them from its ini options); returns the previous ones, to restore."""
    previous = _defaults[0]
    _defaults[0] = options
    return previous


def reward_runner(reward: Any, options: RunOptions | None = None) -> Any:
    """The runtime's per-sample runner for ``reward`` (``rewardkit.runtime.run.execution.SampleRunner``): the
    same path, execution mode and timeout as ``calculate_rewards`` gives it."""
    from rewardkit.runtime.define.rewards import as_reward
    from rewardkit.runtime.run.execution import SampleRunner

    options = options or _defaults[0]
    return SampleRunner(
        as_reward(reward),
        execution=options.execution,  # type: ignore[arg-type]
        timeout=options.timeout,
        untimed="thread",
        place="the case",
    )


class RewardCaller:
    """Calls rewards from synchronous code the way training runs them: through the runtime's
    per-sample runner (``rewardkit.runtime.run.execution``), in the reward's execution mode (a sync reward
    that declares none runs in a reward thread, as under ``calculate_rewards``) and under its
    timeout, so a reward that cannot run where training runs it fails here too (a grader using
    signals off the main thread, say).

    Keeps one event loop for many calls (a property test makes hundreds); when an
    event loop is already running in this thread (an async test), it runs the call in
    a helper thread instead of failing. Use it as a context manager, or ``close()`` it.
    """

    def __init__(self, options: RunOptions | None = None) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._options = options
        self._runners: dict[int, tuple[Any, Any]] = {}

    def runner(self, reward: Any) -> Any:
        """The runner for ``reward`` (made once per reward object)."""
        key = id(reward)
        cached = self._runners.get(key)
        if cached is None or cached[0] is not reward:
            cached = self._runners[key] = (reward, reward_runner(reward, self._options))
        return cached[1]

    def __call__(self, reward: Any, fields: Mapping[str, Any]) -> Any:
        """Run ``reward`` with ``fields`` and return its ``RewardResult`` (async rewards are
        awaited); a failing reward raises what it raised (``RewardAbortedError`` for
        ``SystemExit`` and the like, ``TimeoutError`` past the timeout)."""
        from rewardkit.runtime.run.execution import SampleFailure

        try:
            return self._run(self.runner(reward).run(dict(fields), 0))
        except SampleFailure as failure:
            error = failure.error
        raise error

    def _run(self, coro: Any) -> Any:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            return _run_in_fresh_thread(coro)
        if self._loop is None or self._loop.is_closed():
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(coro)

    def close(self) -> None:
        """Close the event loop this caller owns."""
        if self._loop is not None and not self._loop.is_closed():
            self._loop.run_until_complete(self._loop.shutdown_asyncgens())
            self._loop.close()
        self._loop = None
        self._runners.clear()

    def __enter__(self) -> RewardCaller:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def call_reward(reward: Any, **fields: Any) -> Any:
    """Run one reward once with ``fields`` and return its ``RewardResult``."""
    with RewardCaller() as caller:
        return caller(resolve_reward(reward), fields)
