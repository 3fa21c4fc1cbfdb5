"""The server's core, free of any web framework: the served rewards, their per-sample execution
and the bound on work in flight. The FastAPI app (``rewardkit.serve.app``) and the Ray Serve
deployment are thin adapters over one ``RewardService``.

Each reward is run through rewardkit's framework adapters, so a served reward behaves exactly
as an adapted one: the same per-sample timeout, fallback and extras schema (the same key set on
every sample, failed or not). ``POST /get_reward`` *is* ``to_openrlhf(reward)``; the JSON API
uses a generic adapter whose failures keep their type.
"""

from __future__ import annotations

import dataclasses
import difflib
import logging
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from rewardkit.adapters.base import RewardAdapter, Scored
from rewardkit.adapters.messages import AdapterInputError
from rewardkit.adapters.openrlhf import OpenRLHFReward
from rewardkit.adapters.options import AdapterOptions
from rewardkit.runtime.define.errors import (
    MissingFieldError,
    RewardAbortedError,
    RewardShapeError,
    describe_error,
)
from rewardkit.runtime.define.rewards import as_reward, is_group_reward
from rewardkit.runtime.run.execution import SampleRunner
from rewardkit.serve.config import RewardSpec, ServeConfig, ServeConfigError
from rewardkit.serve.outcomes import SampleFailure, SampleOutcome
from rewardkit.serve.targets import resolve_target

logger = logging.getLogger("rewardkit.serve")

SampleHook = Callable[[str, float, "str | None"], None]
"""Called after each sample: the reward's name, the seconds it took, its failure tag or ``None``."""


class RequestError(ValueError):
    """A request the server cannot score at all (400): the message says what is wrong and where."""


class Overloaded(RuntimeError):
    """The worker already holds ``max_in_flight`` samples: answer 503 with ``Retry-After``."""


class UnknownServedReward(KeyError):
    """No reward is served under the requested name (404); the message lists the served ones."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class InvalidSample(AdapterInputError):
    """A sample found unfit before the call (e.g. a required field missing); ``original`` is the
    error the call would have raised, so its failure keeps that type."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(str(original))
        self.original = original


@dataclass(frozen=True)
class _Failed(Scored):
    failure: SampleFailure | None = None


ABORTS = (KeyboardInterrupt, SystemExit)
"""What a reward may raise that would end the server's event loop (asyncio lets both through every
task): in a server they can only come from the reward (uvicorn handles SIGINT itself), so each
fails its sample as ``RewardAbortedError``."""


def aborted(reward_name: str, index: int | None, exc: BaseException) -> RewardAbortedError:
    """The sample failure standing for ``exc`` (one of ``ABORTS``) raised by the reward."""
    where = "" if index is None else f" on sample {index}"
    error = RewardAbortedError(
        f"reward {reward_name!r}{where} raised {describe_error(exc)}; the server keeps serving"
    )
    error.__cause__ = exc
    return error


class _Contained:
    """An async reward whose ``KeyboardInterrupt``/``SystemExit`` become ``RewardAbortedError``
    inside the task that runs it (the runtime lets ``KeyboardInterrupt`` through, and a timed
    call runs in a task of its own, where it would stop the event loop)."""

    def __init__(self, reward: Any) -> None:
        self._reward = reward

    def __getattr__(self, name: str) -> Any:
        return getattr(self._reward, name)

    async def invoke(self, fields: Mapping[str, Any]) -> Any:
        try:
            return await self._reward.invoke(fields)
        except ABORTS as exc:
            raise aborted(self._reward.name, None, exc) from exc


class _TypedFailures(RewardAdapter):
    """Keeps each failed sample's ``SampleFailure`` and reports every sample to ``on_sample``; a
    reward raising ``KeyboardInterrupt`` or ``SystemExit`` fails its sample, whatever the mode."""

    on_sample: SampleHook | None = None

    def __init__(self, reward: Any, **options: Any) -> None:
        super().__init__(reward, **options)
        runner = self.runner
        if (
            isinstance(runner, SampleRunner)
            and runner.execution != "process"
            and runner.reward.is_async
        ):
            runner.reward = _Contained(runner.reward)

    def _failed(
        self, index: int, exc: BaseException, *, timed_out: bool = False, text: str | None = None
    ) -> Scored:
        scored = super()._failed(index, exc, timed_out=timed_out, text=text)
        return _Failed(
            scored.reward, None, scored.error, failure=SampleFailure.of(exc, timed_out=timed_out)
        )

    async def score_one_async(
        self, fields: Mapping[str, Any] | AdapterInputError, index: int = 0
    ) -> Scored:
        started = time.perf_counter()
        try:
            scored = await super().score_one_async(fields, index)
        except ABORTS as exc:  # thread and process modes hand it back to this task
            scored = self._failed(index, aborted(self.__name__, index, exc))
        if self.on_sample is not None:
            failure = scored.failure if isinstance(scored, _Failed) else None
            self.on_sample(
                self.__name__,
                time.perf_counter() - started,
                None if failure is None else failure.tag,
            )
        return scored


class _ApiAdapter(_TypedFailures):
    framework: ClassVar[str] = "rewardkit serve"


class _OpenRLHFAdapter(_TypedFailures, OpenRLHFReward):
    pass


def _outcome(scored: Scored, extras: Mapping[str, Any]) -> SampleOutcome:
    failure = scored.failure if isinstance(scored, _Failed) else None
    return SampleOutcome(float(scored.reward), extras, failure, applicable=scored.applicable)  # type: ignore[arg-type]


class ServedReward:
    """One reward as the server runs it: the JSON API's adapter and OpenRLHF's, over the same
    reward object, with the same options and the same result schema (``rewardkit.runtime.define.schema``),
    fixed here, before the first request. An extra named like a key OpenRLHF reserves leaves
    the reward on the JSON API only (``/get_reward`` then answers 400 saying why)."""

    def __init__(self, name: str, reward: Any, options: AdapterOptions) -> None:
        self.name = name
        self.reward = as_reward(reward)
        # samples of the JSON API carry the reward's own field names: no field_map there
        named = dataclasses.replace(options, name=name)
        self.api = _ApiAdapter(self.reward, options=dataclasses.replace(named, field_map=None))
        self.openrlhf: _OpenRLHFAdapter | None = None
        self.openrlhf_problem: str | None = None
        try:
            self.openrlhf = _OpenRLHFAdapter(self.reward, options=named, return_tensors=False)
        except RewardShapeError as exc:
            self.openrlhf_problem = str(exc)
            logger.warning("reward %r is not served on /get_reward: %s", name, exc)

    @property
    def timeout(self) -> float | None:
        return self.api.settings.timeout

    @property
    def extra_keys(self) -> tuple[str, ...]:
        """The extras every sample carries, success or failure."""
        return self.api.schema.keys

    def describe(self) -> dict[str, Any]:
        """What ``GET /v1/rewards`` says about this reward."""
        binding = self.reward.binding
        schema = self.api.schema
        return {
            "name": self.name,
            "parameters": list(self.reward.parameters),
            "required": list(binding.required) if binding is not None else [],
            "accepts_any_field": bool(binding is not None and binding.accepts_all),
            "is_async": bool(self.reward.is_async),
            "extra_keys": list(schema.keys),
            "extra_kinds": dict(schema.kinds),
            "schema_source": schema.source,
            "timeout": self.timeout,
            "fallback": self.api.settings.fallback,
            "openrlhf": self.openrlhf_problem is None,
            "openrlhf_problem": self.openrlhf_problem,
        }

    def _checked(
        self, samples: Sequence[Mapping[str, Any] | AdapterInputError], *, where: str = "sample"
    ) -> list[Mapping[str, Any] | AdapterInputError]:
        """The samples, a sample lacking a required field replaced by its per-sample error. A
        field that no sample has is a request error: every sample would fail the same way."""
        binding = self.reward.binding
        fields = [sample for sample in samples if not isinstance(sample, AdapterInputError)]
        if binding is None or not binding.required or not fields:
            return list(samples)
        unsupplied = [
            name for name in binding.required if not any(name in sample for sample in fields)
        ]
        if unsupplied:
            raise RequestError(self._unsupplied(unsupplied, fields[0], len(fields), where=where))
        checked: list[Mapping[str, Any] | AdapterInputError] = []
        for index, sample in enumerate(samples):
            lacking = (
                []
                if isinstance(sample, AdapterInputError)
                else [n for n in binding.required if n not in sample]
            )
            checked.append(
                InvalidSample(self._lacking(lacking, sample, index, where)) if lacking else sample
            )
        return checked

    def _needs(self) -> str:
        binding = self.reward.binding
        required = list(binding.required) if binding is not None else []
        optional = [name for name in self.reward.parameters if name not in required]
        text = ", ".join(required) + (f" (optional: {', '.join(optional)})" if optional else "")
        return f"reward {self.name!r} takes the fields {text}"

    def _unsupplied(
        self, names: Sequence[str], first: Mapping[str, Any], count: int, *, where: str
    ) -> str:
        """What a client sending ``count`` samples without ``names`` needs to hear: what its
        samples have, what the reward needs, the close name it probably meant."""
        has = ", ".join(repr(key) for key in sorted(first)) or "no fields"
        plural = "s" if len(names) > 1 else ""
        message = (
            f"no {where} of this request has the field{plural} {', '.join(repr(n) for n in names)}; "
            f"{self._needs()}, and {where} 0 has {has}"
        )
        close = difflib.get_close_matches(
            names[0], [key for key in first if key not in self.reward.parameters], n=1
        )
        if close:
            message += f". Did you mean {close[0]!r}? Send it as {names[0]!r}"
        return message

    def _lacking(
        self, names: Sequence[str], sample: Mapping[str, Any], index: int, where: str
    ) -> MissingFieldError:
        has = ", ".join(repr(key) for key in sorted(sample)) or "no fields"
        error = MissingFieldError(
            f"{where} {index} lacks the field{'s' if len(names) > 1 else ''} {', '.join(repr(n) for n in names)} "
            f"that the other samples have ({self._needs()}; this one has {has})",
            reward_name=self.name,
            parameter=names[0],
            available=sorted(sample),
            suggestion=None,
        )
        return error

    async def score(self, samples: Sequence[Mapping[str, Any]]) -> list[SampleOutcome]:
        """Score samples of named fields (the JSON API); results keep the samples' order."""
        scored = await self.api.score_batch_async(self._checked(samples))
        conform = self.api.schema.conform
        return [_outcome(item, conform(item.extras)) for item in scored]

    async def get_reward(
        self, queries: Sequence[Any], prompts: Sequence[Any], labels: Sequence[Any]
    ) -> dict[str, Any]:
        """OpenRLHF's ``/get_reward``: exactly what ``to_openrlhf(reward)`` returns, as lists."""
        adapter = self.openrlhf
        if adapter is None:
            raise RequestError(
                f"reward {self.name!r} cannot answer OpenRLHF's /get_reward: {self.openrlhf_problem}"
            )
        checked = self._checked(adapter.samples(queries, prompts, labels), where="sample (label)")
        return adapter.result(await adapter.score_batch_async(checked))


class Admission:
    """The bound on samples in flight in one worker: a request is admitted whole or refused (a
    request larger than the bound is admitted alone, when nothing else is in flight)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.samples = 0
        self.requests = 0

    def admit(self, count: int) -> None:
        """Take ``count`` samples' worth of the bound, or raise ``Overloaded``."""
        if self.samples and self.samples + count > self.limit:
            raise Overloaded(
                f"this worker holds {self.samples} samples in flight (limit {self.limit}); "
                f"retry later or add workers"
            )
        self.samples += count
        self.requests += 1

    def release(self, count: int) -> None:
        self.samples -= count
        self.requests -= 1


ADAPTER_OPTIONS_KEPT = ("timeout", "fallback", "extra_keys", "field_map")
"""What a served adapter target (``reward_func = to_openrlhf(...)`` in a file) keeps of its options."""


def load_reward(spec: RewardSpec, config: ServeConfig) -> ServedReward:
    """Import ``spec.target`` and build its ``ServedReward``; a target that is already a framework
    adapter (``reward_func = to_openrlhf(...)`` in a file) is served with that adapter's options."""
    target = resolve_target(spec.target)
    kept: dict[str, Any] = {}
    if isinstance(target, RewardAdapter):
        kept = {key: getattr(target.settings, key) for key in ADAPTER_OPTIONS_KEPT}
        target = target.reward
    try:
        reward = as_reward(target)
    except TypeError as exc:
        raise ServeConfigError(f"reward {spec.target!r}: {exc}") from None
    if is_group_reward(reward):
        raise ServeConfigError(
            f"reward {spec.target!r} cannot be served: it is a @group_reward, computed over a group of "
            "samples at once, and rewardkit serve scores each sample on its own; serve a per-sample reward"
        )
    given = {
        "timeout": spec.timeout or kept.get("timeout") or config.timeout,
        "fallback": spec.fallback,
        "extra_keys": spec.extra_keys,
        "field_map": dict(spec.field_map) if spec.field_map else None,
        "concurrency": config.concurrency,
    }
    try:
        options = AdapterOptions(**{**kept, **{k: v for k, v in given.items() if v is not None}})
        return ServedReward(spec.name or reward.name, reward, options)
    except (
        RewardShapeError,
        ValueError,
        TypeError,
    ) as exc:  # extras unknowable, a mode that cannot be timed
        raise ServeConfigError(f"reward {spec.target!r} cannot be served: {exc}") from None


def add_app_dir(app_dir: str | None) -> None:
    """Make modules in ``app_dir`` (default: the current directory) importable, as ``python -m``
    and uvicorn do, in this process and (via ``PYTHONPATH``) in processes it starts."""
    directory = str(Path(app_dir or os.getcwd()).resolve())
    if directory not in sys.path:
        sys.path.insert(0, directory)
    paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if directory not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([directory, *filter(None, paths)])


class RewardService:
    """The rewards of one server, by name (case-insensitive; the first is the default), and the
    bound on work in flight."""

    def __init__(self, config: ServeConfig, *, on_sample: SampleHook | None = None) -> None:
        self.config = config
        add_app_dir(config.app_dir)
        self.rewards: dict[str, ServedReward] = {}
        for spec in config.rewards:
            served = load_reward(spec, config)
            key = served.name.casefold()
            if key in self.rewards:
                raise ServeConfigError(
                    f"two served rewards are named {served.name!r}; rename one with NAME=TARGET"
                )
            served.api.on_sample = served.openrlhf.on_sample = on_sample
            self.rewards[key] = served
        self.default = next(iter(self.rewards.values()))
        self.admission = Admission(config.max_in_flight)

    def get(self, name: str | None) -> ServedReward:
        """The reward served as ``name`` (``None``: the default one); ``UnknownServedReward`` names
        the served ones."""
        if name is None:
            return self.default
        served = self.rewards.get(name.casefold())
        if served is None:
            known = ", ".join(reward.name for reward in self.rewards.values())
            raise UnknownServedReward(f"no reward named {name!r} is served here (served: {known})")
        return served

    def describe(self) -> list[dict[str, Any]]:
        return [served.describe() for served in self.rewards.values()]

    async def run_admitted(self, count: int, work: Callable[[], Any]) -> Any:
        """Run ``work()`` (a coroutine function) holding ``count`` samples of the bound."""
        self.admission.admit(count)
        try:
            return await work()
        finally:
            self.admission.release(count)
