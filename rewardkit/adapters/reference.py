"""How an adapter names its reward when pickled: by registry name or by ``module:qualname``.

Process pools and Ray pickle the adapter to ship it to workers. The reward travels as a
reference the worker resolves by importing its module (which also registers it), so the
worker runs the same code as the driver and never needs the function's bytecode pickled.
A ``BaseReward`` instance carries state (credentials, clients) and travels by value.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from typing import Any

from rewardkit.builtin_rewards import get_registration
from rewardkit.runtime.define.errors import RewardRegistryError
from rewardkit.runtime.define.rewards import (
    BaseReward,
    Reward,
    as_reward,
    file_loaded_by_path,
    find_by_qualname,
    source_file,
)
from rewardkit.runtime.define.rewards import load_module_from_file as _load_file_module


class RewardNotShippableError(RewardRegistryError):
    """A reward cannot be found again in another process: neither its registry name nor its
    ``module:qualname`` leads back to it (typically a reward defined inside a function)."""


@dataclass(frozen=True)
class RewardReference:
    """A picklable way to find a reward again in another process.

    ``kind`` is ``"qualname"`` (import ``module`` and walk ``qualname``), ``"name"`` (import
    ``module`` if set, then ``get_reward(name)``), ``"file"`` (a module loaded from ``path`` under
    a name ``import`` cannot find, as verl and OpenRLHF load reward files: load it the same way,
    then walk ``qualname``), ``"value"`` (``instance`` is pickled itself: a ``BaseReward``
    instance) or ``"local"`` (not shippable; ``problem`` says why).
    """

    kind: str
    name: str
    module: str | None = None
    qualname: str | None = None
    instance: Any = None
    problem: str | None = None
    path: str | None = None

    @classmethod
    def of(cls, reward: Any) -> RewardReference:
        """The reference for ``reward``: a registry name (``str``), a reward object, a ``BaseReward``
        instance or a plain function."""
        if isinstance(reward, str):
            registration = get_registration(reward)
            return cls("name", registration.name, module=registration.module)
        if isinstance(reward, BaseReward) or getattr(reward, "travels_by_value", False):
            return cls(
                "value", reward.name, instance=reward
            )  # state, or a composition of references
        normalized = as_reward(reward)
        name = normalized.name
        target = reward.__wrapped__ if isinstance(reward, Reward) else reward
        module = getattr(target, "__module__", None)
        qualname = getattr(target, "__qualname__", None)
        if module and qualname and "<locals>" not in qualname:
            path = file_loaded_by_path(module, source_file(target))
            if path is not None:  # import cannot find the module by its name in another process
                return cls("file", name, module=module, qualname=qualname, path=path)
            try:
                found = find_by_qualname(module, qualname)
            except (ImportError, AttributeError):
                found = None
            if found is reward:
                return cls("qualname", name, module=module, qualname=qualname)
        if isinstance(reward, Reward):
            try:
                registration = get_registration(name)
            except (KeyError, RewardRegistryError):
                registration = None
            if registration is not None and registration.reward is reward:
                return cls("name", name, module=registration.module)
        where = f"{module}:{qualname}" if module and qualname else repr(reward)
        return cls(
            "local",
            name,
            module=module,
            qualname=qualname,
            problem=(
                f"reward {name!r} ({where}) cannot be found again in a worker process: "
                "it is neither importable by module:qualname nor registered under its name; "
                "define it at the top level of an importable module"
            ),
        )

    def resolve(self) -> Any:
        """The reward this reference names, importing its module first (which registers it)."""
        if self.kind == "value":
            return self.instance
        if self.kind == "local":
            raise RewardNotShippableError(self.problem or f"reward {self.name!r} is not shippable")
        if self.kind == "file":
            if self.module is None or self.qualname is None or self.path is None:
                raise RewardNotShippableError(
                    f"reward {self.name!r}: incomplete reference {self!r}"
                )
            try:
                target: Any = _load_file_module(self.module, self.path)
                for part in self.qualname.split("."):
                    target = getattr(target, part)
            except (ImportError, OSError, AttributeError) as exc:
                raise RewardNotShippableError(
                    f"reward {self.name!r}: cannot load {self.qualname} from {self.path} in this "
                    f"process ({type(exc).__name__}: {exc})"
                ) from exc
            return target
        if self.kind == "qualname":
            if self.module is None or self.qualname is None:
                raise RewardNotShippableError(
                    f"reward {self.name!r}: incomplete reference {self!r}"
                )
            try:
                return find_by_qualname(self.module, self.qualname)
            except (ImportError, AttributeError) as exc:
                raise RewardNotShippableError(
                    f"reward {self.name!r}: cannot import {self.module}:{self.qualname} in this "
                    f"process ({type(exc).__name__}: {exc}); is the module on sys.path of the workers?"
                ) from exc
        if self.module:
            try:
                importlib.import_module(self.module)
            except ImportError as exc:
                raise RewardNotShippableError(
                    f"reward {self.name!r}: cannot import its module {self.module!r} in this "
                    f"process ({exc}); is the module on sys.path of the workers?"
                ) from exc
        registration = get_registration(self.name)
        reward = registration.reward
        if isinstance(reward, type):
            raise RewardNotShippableError(
                f"reward {self.name!r} is the BaseReward class {reward.__qualname__}; "
                "adapt an instance of it instead"
            )
        return reward

    @property
    def shippable(self) -> bool:
        """Whether pickling an adapter of this reward can work."""
        return self.kind != "local"
