"""The server's core, free of any web framework: the served rewards, their per-sample execution
and the bound on work in flight. The FastAPI app (``rewardkit.serve.app``) and the Ray Serve
deployment are thin adapters over one ``RewardService``.

Each reward is run through rewardkit's framework adapters, so a served reward behaves exactly
as an adapted one: the same per-sample timeout, fallback and extras schema (the same key set on
every sample, failed or not). ``POST /get_reward`` *is* ``to_openrlhf(reward)``; the JSON API
uses a generic adapter whose failures keep their type.
"""

from __future__ import annotations

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
from rewardkit.adapters.reference import RewardReference
from rewardkit.errors import RewardError, RewardShapeError
from rewardkit.rewards import as_reward
from rewardkit.serve.config import RewardSpec, ServeConfig, ServeConfigError
from rewardkit.serve.outcomes import SampleFailure, SampleOutcome

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


class _TypedFailures(RewardAdapter):
    """Keeps each failed sample's ``SampleFailure`` and reports every sample to ``on_sample``."""

    on_sample: SampleHook | None = None

    def _failed(
        self, index: int, exc: BaseException, *, timed_out: bool = False, text: str | None = None
    ) -> Scored:
        scored = super()._failed(index, exc, timed_out=timed_out, text=text)
        return _Failed(scored.reward, None, scored.error, failure=SampleFailure.of(exc, timed_out=timed_out))

    async def score_one_async(self, fields: Mapping[str, Any] | AdapterInputError, index: int = 0) -> Scored:
        started = time.perf_counter()
        scored = await super().score_one_async(fields, index)
        if self.on_sample is not None:
            failure = scored.failure if isinstance(scored, _Failed) else None
            self.on_sample(self.__name__, time.perf_counter() - started, None if failure is None else failure.tag)
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
    reward object, with the same options and the same result schema (``rewardkit.schema``),
    fixed here, before the first request. An extra named like a key OpenRLHF reserves leaves
    the reward on the JSON API only (``/get_reward`` then answers 400 saying why)."""

    def __init__(self, name: str, reward: Any, options: Mapping[str, Any], openrlhf_options: Mapping[str, Any]) -> None:
        self.name = name
        self.reward = as_reward(reward)
        self.api = _ApiAdapter(self.reward, name=name, **options)
        self.openrlhf: _OpenRLHFAdapter | None = None
        self.openrlhf_problem: str | None = None
        try:
            self.openrlhf = _OpenRLHFAdapter(self.reward, name=name, return_tensors=False, **openrlhf_options)
        except RewardShapeError as exc:
            self.openrlhf_problem = str(exc)
            logger.warning("reward %r is not served on /get_reward: %s", name, exc)

    @property
    def timeout(self) -> float | None:
        return self.api.timeout

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
            "fallback": self.api.fallback,
            "openrlhf": self.openrlhf_problem is None,
            "openrlhf_problem": self.openrlhf_problem,
        }

    def _checked(self, samples: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any] | AdapterInputError]:
        """The samples, a sample lacking a required field replaced by its per-sample error. A
        field that no sample has is a request error: every sample would fail the same way."""
        binding = self.reward.binding
        if binding is None or not binding.required:
            return list(samples)
        unsupplied = [name for name in binding.required if not any(name in sample for sample in samples)]
        if unsupplied:
            error = binding.missing_field_error(samples[0], unsupplied=unsupplied, batch_size=len(samples))
            raise RequestError(str(error))
        checked: list[Mapping[str, Any] | AdapterInputError] = []
        for sample in samples:
            if all(name in sample for name in binding.required):
                checked.append(sample)
            else:
                checked.append(InvalidSample(binding.missing_field_error(sample)))
        return checked

    async def score(self, samples: Sequence[Mapping[str, Any]]) -> list[SampleOutcome]:
        """Score samples of named fields (the JSON API); results keep the samples' order."""
        scored = await self.api.score_batch_async(self._checked(samples))
        conform = self.api.schema.conform
        return [_outcome(item, conform(item.extras)) for item in scored]

    async def get_reward(self, queries: Sequence[Any], prompts: Sequence[Any], labels: Sequence[Any]) -> dict[str, Any]:
        """OpenRLHF's ``/get_reward``: exactly what ``to_openrlhf(reward)`` returns, as lists."""
        adapter = self.openrlhf
        if adapter is None:
            raise RequestError(f"reward {self.name!r} cannot answer OpenRLHF's /get_reward: {self.openrlhf_problem}")
        samples = [
            adapter.sample(query, prompt, label, where=f"OpenRLHF sample {index}")
            for index, (query, prompt, label) in enumerate(zip(queries, prompts, labels))
        ]
        return adapter.result(await adapter.score_batch_async(samples))


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


def _target_reference(spec: RewardSpec) -> RewardReference:
    """How to find ``spec.target``: ``module:attr``, ``file.py:attr`` or a registry name."""
    target = spec.target
    module, sep, attribute = target.rpartition(":")
    if not sep:
        return RewardReference.of(target)  # a registry name (UnknownRewardError lists close ones)
    if not module or not attribute:
        raise ServeConfigError(f"reward {target!r}: expected MODULE:ATTRIBUTE, FILE.py:ATTRIBUTE or a registry name")
    if module.endswith(".py"):
        path = Path(module).resolve()
        if not path.is_file():
            raise ServeConfigError(f"reward {target!r}: no such file {path}")
        return RewardReference("file", attribute, module=f"rewardkit_served_{path.stem}", qualname=attribute, path=str(path))
    return RewardReference("qualname", attribute, module=module, qualname=attribute)


def load_reward(spec: RewardSpec, config: ServeConfig) -> ServedReward:
    """Import ``spec.target`` and build its ``ServedReward``; a target that is already a framework
    adapter (``reward_func = to_openrlhf(...)`` in a file) is served with that adapter's options."""
    try:
        target = _target_reference(spec).resolve()
    except RewardError as exc:
        raise ServeConfigError(f"reward {spec.target!r}: {exc}") from None
    options: dict[str, Any] = {}
    if isinstance(target, RewardAdapter):
        options = {key: target.options()[key] for key in ("timeout", "fallback", "extra_keys", "field_map")}
        target = target.reward
    try:
        reward = as_reward(target)
    except TypeError as exc:
        raise ServeConfigError(f"reward {spec.target!r}: {exc}") from None
    options["timeout"] = spec.timeout or options.get("timeout") or config.timeout
    if spec.fallback is not None:
        options["fallback"] = spec.fallback
    if spec.extra_keys is not None:
        options["extra_keys"] = spec.extra_keys
    if spec.field_map:
        options["field_map"] = dict(spec.field_map)
    options["concurrency"] = config.concurrency
    openrlhf_options = dict(options)
    options.pop("field_map", None)  # samples of the JSON API carry the reward's own field names
    try:
        return ServedReward(spec.name or reward.name, reward, options, openrlhf_options)
    except RewardShapeError as exc:  # its extras cannot be known before the first call
        raise ServeConfigError(f"reward {spec.target!r}: {exc}") from None


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
