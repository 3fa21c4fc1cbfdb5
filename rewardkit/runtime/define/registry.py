"""The reward registry: names -> where each reward was defined. Looking a name up, built-ins
included, is ``rewardkit.builtin_rewards``' (it names the graders' modules, a layer above).

Rules (see docs/runtime.md): names are case-insensitive; a user reward named like a built-in
takes the name; two different user definitions under one name raise ``RewardRegistryError``
naming both (module:line); registering the same qualified function again (a module reload)
replaces it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from rewardkit.runtime.define.errors import RewardRegistryError


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


def name_key(name: str) -> str:
    """A reward name as the registry compares it (case-insensitive); a non-string is a ``TypeError``."""
    if not isinstance(name, str):
        raise TypeError(f"a reward name must be a string, got {name!r}")
    return name.casefold()


def register(entry: Registration) -> None:
    """Add ``entry`` under its name, applying the registry's rules (see module docstring)."""
    key = name_key(entry.name)
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
        _registry.pop(name_key(name), None)


def registered(name: str) -> Registration | None:
    """The registration of ``name`` (case-insensitive), if a reward registered it."""
    return _registry.get(name_key(name))


def registered_names() -> set[str]:
    """The names of every registered reward."""
    with _lock:
        return {entry.name for entry in _registry.values()}


__all__ = ["Registration", "name_key", "register", "registered", "registered_names", "unregister"]
