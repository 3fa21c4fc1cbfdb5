"""What `rewardkit serve` serves and how: the rewards, the limits, and the Ray deployment.

One frozen ``ServeConfig`` built from the command line, a TOML file, or both (the command line
wins), validated before any process starts, so that a typo fails at once with the option or the
file:key that holds it. It travels to worker processes as JSON and to Ray replicas pickled.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rewardkit.serve.auth import read_token
from rewardkit.serve.errors import ServeConfigError as ServeConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_TIMEOUT = 30.0
"""Seconds one sample may take before it is a ``timeout`` failure (OpenRLHF's client waits 180 s
for a whole request)."""
DEFAULT_MAX_IN_FLIGHT = 256
"""Samples one worker process admits at once; a request that would exceed it gets 503."""
DEFAULT_MAX_BODY_SIZE = 32 * 1024 * 1024
DEFAULT_CONCURRENCY = 32
"""Samples of one request computed at once (async rewards, and sync ones in threads)."""
DEFAULT_RETRY_AFTER = 1
DEFAULT_DRAIN_TIMEOUT = 60.0
DEFAULT_READ_TIMEOUT = 30.0
"""Seconds a client has to send a request's headers (from its first byte, or from connecting) and,
separately, its body; a slow or silent client is answered 408 or closed, its connection freed."""
DEFAULT_MAX_CONNECTIONS = 2048
"""Open connections one worker keeps (lowered to fit its file-descriptor limit); beyond, the
longest-idle connection that has sent no request is closed, else the request gets 503."""


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*\Z")


@dataclass(frozen=True)
class RewardSpec:
    """One served reward: ``target`` (``module:attribute``, ``path/file.py:attribute`` or a
    registry name such as ``math_reward``) under ``name`` (default: the reward's own name), with
    per-reward overrides of the adapter options."""

    target: str
    name: str | None = None
    timeout: float | None = None
    extra_keys: tuple[str, ...] | None = None
    fallback: float | None = None
    field_map: Mapping[str, str | None] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> RewardSpec:
        """``[NAME=]TARGET`` from the command line."""
        name, sep, target = text.partition("=")
        if not sep:
            name, target = "", text
        if sep and not _NAME.match(name):
            raise ServeConfigError(f"reward {text!r}: {name!r} is not a valid reward name")
        if not target.strip():
            raise ServeConfigError(
                f"reward {text!r}: expected [NAME=]MODULE:ATTRIBUTE or a registry name"
            )
        return cls(target=target.strip(), name=name or None)


@dataclass(frozen=True)
class RayOptions:
    """The Ray Serve deployment: a fixed ``num_replicas``, or autoscaling between
    ``min_replicas`` and ``max_replicas`` aiming at ``target_ongoing_requests`` per replica."""

    address: str | None = None
    num_replicas: int | None = None
    min_replicas: int | None = None
    max_replicas: int | None = None
    target_ongoing_requests: float = 2.0
    max_ongoing_requests: int = 16
    max_queued_requests: int = 256
    """Requests the proxy queues for busy replicas before it answers 503 (Ray Serve's own bound)."""
    max_replicas_per_node: int | None = None
    num_cpus: float = 1.0
    forward_env: tuple[str, ...] = ()
    """Environment variables of the command passed on to every replica (Ray does not forward a
    driver's environment: an API key a reward reads, say)."""
    app_name: str = "rewardkit"
    route_prefix: str = "/"
    proxy_location: str = "HeadOnly"

    @property
    def autoscaling(self) -> bool:
        return self.num_replicas is None and (
            self.min_replicas is not None or self.max_replicas is not None
        )

    def check(self) -> None:
        """Raise ``ServeConfigError`` on inconsistent replica settings."""
        for key in ("num_replicas", "min_replicas", "max_replicas", "max_replicas_per_node"):
            value = getattr(self, key)
            if value is not None and (
                not isinstance(value, int) or value < (0 if key == "min_replicas" else 1)
            ):
                raise ServeConfigError(f"ray.{key} must be a positive integer, got {value!r}")
        if self.num_replicas is not None and (
            self.min_replicas is not None or self.max_replicas is not None
        ):
            raise ServeConfigError(
                "ray: give either num_replicas or min_replicas/max_replicas (autoscaling), not both"
            )
        low, high = self.min_replicas, self.max_replicas
        if low is not None and high is not None and low > high:
            raise ServeConfigError(f"ray: min_replicas ({low}) is above max_replicas ({high})")
        if self.proxy_location not in ("HeadOnly", "EveryNode", "Disabled"):
            raise ServeConfigError(
                f"ray.proxy_location must be HeadOnly, EveryNode or Disabled, got {self.proxy_location!r}"
            )
        for key in ("max_ongoing_requests", "max_queued_requests"):
            if not isinstance(getattr(self, key), int) or getattr(self, key) < 1:
                raise ServeConfigError(
                    f"ray.{key} must be a positive integer, got {getattr(self, key)!r}"
                )


@dataclass(frozen=True)
class ServeConfig:
    """Everything one `rewardkit serve` run needs (see docs/serve.md for each setting)."""

    rewards: tuple[RewardSpec, ...] = ()
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    workers: int = 1
    timeout: float = DEFAULT_TIMEOUT
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT
    max_body_size: int = DEFAULT_MAX_BODY_SIZE
    concurrency: int = DEFAULT_CONCURRENCY
    retry_after: int = DEFAULT_RETRY_AFTER
    drain_timeout: float = DEFAULT_DRAIN_TIMEOUT
    read_timeout: float = DEFAULT_READ_TIMEOUT
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    token_file: str | None = None
    """Where the bearer token is read from (else ``$REWARDKIT_SERVE_TOKEN``; see ``rewardkit.serve.auth``)."""
    token: str | None = field(default=None, repr=False)
    """The bearer token itself, read once at start (``with_token``); never in a configuration file."""
    app_dir: str | None = None
    """Put first on ``sys.path`` (in every worker) before importing reward modules."""
    log_level: str = "info"
    ray: RayOptions = field(default_factory=RayOptions)
    """Used by ``rewardkit serve --ray`` only."""

    def check(self) -> ServeConfig:
        """Raise ``ServeConfigError`` naming the first bad setting; return ``self``."""
        if not self.rewards:
            raise ServeConfigError(
                "no reward to serve: name at least one (MODULE:ATTRIBUTE or a registry name)"
            )
        _positive_number("timeout", self.timeout)
        _positive_number("drain_timeout", self.drain_timeout)
        _positive_number("read_timeout", self.read_timeout)
        for key in (
            "workers",
            "max_in_flight",
            "max_body_size",
            "concurrency",
            "retry_after",
            "max_connections",
        ):
            value = getattr(self, key)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ServeConfigError(f"{key} must be a positive integer, got {value!r}")
        if not isinstance(self.port, int) or not 0 <= self.port <= 65535:
            raise ServeConfigError(f"port must be 0..65535, got {self.port!r}")
        for spec in self.rewards:
            if spec.timeout is not None:
                _positive_number(f"reward {spec.target!r} timeout", spec.timeout)
        self.ray.check()
        return self

    def to_json(self) -> str:
        """The configuration as JSON (for worker processes); ``from_json`` reads it back."""
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> ServeConfig:
        data = json.loads(text)
        rewards = tuple(_reward_spec(item, where="config") for item in data.pop("rewards"))
        ray = data.pop("ray")
        ray["forward_env"] = tuple(ray.get("forward_env") or ())
        return cls(rewards=rewards, ray=RayOptions(**ray), **data)


def _positive_number(key: str, value: Any) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not value > 0
        or not math.isfinite(value)
    ):
        raise ServeConfigError(f"{key} must be a positive number of seconds, got {value!r}")


_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([kmg]?)i?b?", re.IGNORECASE)


def parse_size(text: str | int) -> int:
    """``32M``, ``512k``, ``1G``, ``1048576`` -> bytes (powers of 1024)."""
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    found = _SIZE.fullmatch(str(text).strip())
    if found is None:
        raise ServeConfigError(f"not a size: {text!r} (e.g. 32M, 512k)")
    number, unit = found.groups()
    return int(float(number) * 1024 ** "bkmg".index((unit or "b").lower()))


def _reward_spec(item: Any, *, where: str) -> RewardSpec:
    if isinstance(item, str):
        return RewardSpec.parse(item)
    if not isinstance(item, Mapping) or "target" not in item:
        raise ServeConfigError(
            f"{where}: each reward is a string or a table with a 'target', got {item!r}"
        )
    known = {f.name for f in dataclasses.fields(RewardSpec)}
    unknown = sorted(set(item) - known)
    if unknown:
        raise ServeConfigError(
            f"{where}: unknown reward key {unknown[0]!r} (known: {', '.join(sorted(known))})"
        )
    values = dict(item)
    if values.get("extra_keys") is not None:
        values["extra_keys"] = tuple(values["extra_keys"])
    values["field_map"] = dict(values.get("field_map") or {})
    return RewardSpec(**values)


_TOP_KEYS = {f.name for f in dataclasses.fields(ServeConfig)} - {"rewards", "ray", "token"}
_RAY_KEYS = {f.name for f in dataclasses.fields(RayOptions)}


def load_config_file(path: str | Path) -> dict[str, Any]:
    """The settings of a TOML file as ``ServeConfig`` keyword arguments (``[[rewards]]`` tables or
    strings, ``[ray]``); an unknown key is an error naming the file and the key."""
    path = Path(path)
    try:
        with path.open("rb") as stream:
            data = tomllib.load(stream)
    except OSError as exc:
        raise ServeConfigError(
            f"cannot read the configuration file {path}: {exc.strerror or exc}"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise ServeConfigError(f"{path}: not valid TOML: {exc}") from None
    settings: dict[str, Any] = {}
    for key, value in data.items():
        if key == "rewards":
            if not isinstance(value, list):
                raise ServeConfigError(
                    f"{path}: 'rewards' must be a list ([[rewards]] tables or strings)"
                )
            settings["rewards"] = tuple(
                _reward_spec(item, where=f"{path}: rewards") for item in value
            )
        elif key == "ray":
            settings["ray"] = _ray_settings(value, where=f"{path}: [ray]")
        elif key in _TOP_KEYS:
            settings[key] = parse_size(value) if key == "max_body_size" else value
        else:
            raise ServeConfigError(
                f"{path}: unknown key {key!r} (known: {', '.join(sorted(_TOP_KEYS | {'rewards', 'ray'}))})"
            )
    return settings


def _ray_settings(value: Any, *, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ServeConfigError(f"{where} must be a table")
    unknown = sorted(set(value) - _RAY_KEYS)
    if unknown:
        raise ServeConfigError(
            f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_RAY_KEYS))})"
        )
    settings = dict(value)
    if "forward_env" in settings:
        settings["forward_env"] = tuple(settings["forward_env"])
    return settings


def merge(
    file_settings: Mapping[str, Any], overrides: Mapping[str, Any], rewards: Sequence[RewardSpec]
) -> ServeConfig:
    """A checked ``ServeConfig`` from a file's settings and command-line ``overrides`` (``None``
    values are "not given"); command-line ``rewards`` come after the file's."""
    settings = {key: value for key, value in file_settings.items() if key != "ray"}
    ray_settings = dict(file_settings.get("ray") or {})
    for key, value in overrides.items():
        if value is None:
            continue
        if key == "ray_forward_env":
            ray_settings["forward_env"] = tuple(ray_settings.get("forward_env", ())) + tuple(value)
        elif key.startswith("ray_"):
            ray_settings[key[4:]] = value
        else:
            settings[key] = value
    settings["rewards"] = tuple(settings.get("rewards", ())) + tuple(rewards)
    try:
        config = ServeConfig(ray=RayOptions(**ray_settings), **settings).check()
    except TypeError as exc:  # a wrongly typed value that dataclasses cannot take
        raise ServeConfigError(str(exc)) from None
    return with_token(config)


def with_token(config: ServeConfig) -> ServeConfig:
    """``config`` with its bearer token read (from ``token_file`` or ``$REWARDKIT_SERVE_TOKEN``),
    once, here: worker processes and Ray replicas get it in the configuration."""
    if config.token is not None:
        return config
    token = read_token(config.token_file)
    return config if token is None else dataclasses.replace(config, token=token)
