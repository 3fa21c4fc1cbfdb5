"""The reward registry: names -> reward objects, with built-ins imported only when asked for.

Rules (see docs/runtime.md): names are case-insensitive; a user reward named like a built-in
takes the name; two different user definitions under one name raise ``RewardRegistryError``
naming both (module:line); registering the same qualified function again (a module reload)
replaces it.
"""

from __future__ import annotations

import difflib
import importlib
import threading
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from rewardkit.runtime.define.errors import RewardRegistryError, UnknownRewardError

BUILTIN_REWARDS: Final = MappingProxyType(
    {
        "math_reward": "rewardkit.math.reward",
        "qa_f1_reward": "rewardkit.qa",
        "think_answer_format_reward": "rewardkit.shaping.format",
        "tag_count_reward": "rewardkit.shaping.format",
        "reasoning_steps_reward": "rewardkit.shaping.format",
        "repetition_penalty_reward": "rewardkit.shaping.repetition",
        "soft_overlong_punishment_reward": "rewardkit.shaping.length",
        "cosine_scaled_reward": "rewardkit.shaping.length",
        "len_reward": "rewardkit.shaping.length",
        "open_r1_len_reward": "rewardkit.shaping.length",
        "token_repetition_penalty_reward": "rewardkit.shaping.repetition",
    }
)
"""Built-in reward name -> the module that defines it, imported on first ``get_reward``."""


@dataclass(frozen=True)
class Registration:
    """Where a registered reward was defined, for lookups and for conflict messages."""

    name: str
    reward: Any
    module: str
    qualname: str
    line: int

    @property
    def definition(self) -> str:
        """``module:line`` of the definition, as conflict messages show it."""
        return f"{self.module}:{self.line}"

    @property
    def is_builtin(self) -> bool:
        """Defined inside the ``rewardkit`` package itself."""
        return self.module == "rewardkit" or self.module.startswith("rewardkit.")


_registry: dict[str, Registration] = {}
_lock = threading.RLock()


def _key(name: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"a reward name must be a string, got {name!r}")
    return name.casefold()


def register(entry: Registration) -> None:
    """Add ``entry`` under its name, applying the registry's rules (see module docstring)."""
    key = _key(entry.name)
    with _lock:
        existing = _registry.get(key)
        if existing is None or (
            existing.module == entry.module and existing.qualname == entry.qualname
        ):
            _registry[key] = entry
            return
        if existing.is_builtin and not entry.is_builtin:
            _registry[key] = entry  # a user's reward takes a built-in's name
            return
        if entry.is_builtin and not existing.is_builtin:
            return  # the user's reward keeps the name; the built-in stays importable directly
        raise RewardRegistryError(
            f"reward name {entry.name!r} is already taken: {existing.qualname} at "
            f"{existing.definition} and {entry.qualname} at {entry.definition}; rename one "
            "(`@reward(name=...)`) or pass auto_register=False"
        )


def unregister(name: str) -> None:
    """Remove the reward registered under ``name`` (case-insensitive); a no-op if there is none."""
    with _lock:
        _registry.pop(_key(name), None)


def list_rewards() -> list[str]:
    """Every reward name ``get_reward`` knows, sorted; built-ins are listed without importing them."""
    with _lock:
        names = {entry.name for entry in _registry.values()}
        taken = {_key(name) for name in names}
    names.update(name for name in BUILTIN_REWARDS if _key(name) not in taken)
    return sorted(names, key=str.casefold)


def get_registration(name: str) -> Registration:
    """The registration of ``name`` (case-insensitive), importing a built-in's module if needed."""
    key = _key(name)
    entry = _registry.get(key)
    if entry is not None:
        return entry
    builtin_module = {_key(builtin): module for builtin, module in BUILTIN_REWARDS.items()}.get(key)
    if builtin_module is not None:
        try:
            module = importlib.import_module(builtin_module)
        except ImportError as exc:
            raise RewardRegistryError(
                f"built-in reward {name!r} could not be loaded from {builtin_module}: {exc}"
            ) from exc
        entry = _registry.get(key)
        if entry is not None:
            return entry
        # Imported earlier while a user reward held the name, which has since been removed.
        for value in vars(module).values():
            found = getattr(value, "registration", None)
            if isinstance(found, Registration) and _key(found.name) == key:
                register(found)
                return _registry[key]
        raise RewardRegistryError(
            f"built-in reward {name!r}: importing {builtin_module} did not register it"
        )
    known = list_rewards()
    close = difflib.get_close_matches(key, [_key(n) for n in known], n=3, cutoff=0.6)
    by_key = {_key(n): n for n in known}
    hint = (
        f"; did you mean {', '.join(repr(by_key[c]) for c in close)}?"
        if close
        else f"; known rewards: {', '.join(known) or 'none'}"
    )
    raise UnknownRewardError(f"no reward named {name!r}{hint}")


def get_reward(name: str) -> Any:
    """The reward registered as ``name`` (case-insensitive): a reward object or a ``BaseReward`` class.

    Unknown names raise ``UnknownRewardError`` (a ``KeyError``) listing close matches.
    """
    return get_registration(name).reward
