"""Looking rewards up by name (``get_reward``, ``list_rewards``), built-ins included: each
built-in's module is imported on its first lookup, so ``import rewardkit`` stays light. This
table names the graders' modules, so it sits beside them, above the registry it reads."""

from __future__ import annotations

import difflib
import importlib
from types import MappingProxyType
from typing import Any, Final

from rewardkit.runtime.define.errors import RewardRegistryError, UnknownRewardError
from rewardkit.runtime.define.registry import (
    Registration,
    name_key,
    register,
    registered,
    registered_names,
)

BUILTIN_REWARDS: Final = MappingProxyType(
    {
        "math_reward": "rewardkit.math.reward",
        "code_reward": "rewardkit.code.reward",
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


def list_rewards() -> list[str]:
    """Every reward name ``get_reward`` knows, sorted; built-ins are listed without importing them."""
    names = registered_names()
    taken = {name_key(name) for name in names}
    names.update(name for name in BUILTIN_REWARDS if name_key(name) not in taken)
    return sorted(names, key=str.casefold)


def get_registration(name: str) -> Registration:
    """The registration of ``name`` (case-insensitive), importing a built-in's module if needed."""
    key = name_key(name)
    entry = registered(name)
    if entry is not None:
        return entry
    builtin_module = {name_key(builtin): module for builtin, module in BUILTIN_REWARDS.items()}.get(
        key
    )
    if builtin_module is not None:
        try:
            module = importlib.import_module(builtin_module)
        except ImportError as exc:
            raise RewardRegistryError(
                f"built-in reward {name!r} could not be loaded from {builtin_module}: {exc}"
            ) from exc
        entry = registered(name)
        if entry is not None:
            return entry
        # Imported earlier while a user reward held the name, which has since been removed.
        for value in vars(module).values():
            found = getattr(value, "registration", None)
            if isinstance(found, Registration) and name_key(found.name) == key:
                register(found)
                return found
        raise RewardRegistryError(
            f"built-in reward {name!r}: importing {builtin_module} did not register it"
        )
    known = list_rewards()
    close = difflib.get_close_matches(key, [name_key(n) for n in known], n=3, cutoff=0.6)
    by_key = {name_key(n): n for n in known}
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


__all__ = ["BUILTIN_REWARDS", "get_registration", "get_reward", "list_rewards"]
