"""Finding what `rewardkit serve TARGET` names: ``module:attribute``, ``path/file.py:attribute``
or a registry name, with a message that says which part is wrong.

A module that imports but lacks the attribute gets a did-you-mean among the rewards it defines
(not a question about ``sys.path``); a module that cannot be found names the directories
searched; a module that fails while importing shows its own error.
"""

from __future__ import annotations

import difflib
import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from rewardkit.adapters.base import RewardAdapter
from rewardkit.adapters.reference import RewardReference
from rewardkit.runtime.define.errors import RewardError
from rewardkit.runtime.define.rewards import BaseReward, Reward, load_module_from_file
from rewardkit.serve.config import ServeConfigError


def resolve_target(target: str) -> Any:
    """The object ``target`` names; ``ServeConfigError`` saying what is wrong otherwise."""
    module_name, sep, attribute = target.rpartition(":")
    if not sep:
        try:
            return RewardReference.of(
                target
            ).resolve()  # a registry name (the error lists close ones)
        except (RewardError, KeyError) as exc:
            raise ServeConfigError(f"reward {target!r}: {exc}") from None
    if not module_name or not attribute:
        raise ServeConfigError(
            f"reward {target!r}: expected MODULE:ATTRIBUTE, FILE.py:ATTRIBUTE or a registry name"
        )
    module = (
        _load_file(target, module_name)
        if module_name.endswith(".py")
        else _import(target, module_name)
    )
    found: Any = module
    for part in attribute.split("."):
        if not hasattr(found, part):
            raise ServeConfigError(_no_attribute(target, module, attribute))
        found = getattr(found, part)
    return found


def _load_file(target: str, module_name: str) -> ModuleType:
    path = Path(module_name).resolve()
    if not path.is_file():
        raise ServeConfigError(f"reward {target!r}: no such file {path}")
    try:
        return load_module_from_file(f"rewardkit_served_{path.stem}", str(path))
    except Exception as exc:
        raise ServeConfigError(
            f"reward {target!r}: importing {path} failed: {type(exc).__name__}: {exc}"
        ) from None


def _import(target: str, module_name: str) -> ModuleType:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if (
            exc.name is not None
            and module_name.startswith(exc.name)
            and module_name[len(exc.name) :][:1] in ("", ".")
        ):
            searched = ", ".join(path or "." for path in sys.path[:3])
            raise ServeConfigError(
                f"reward {target!r}: no module named {exc.name!r} (searched {searched}, ...); run from the "
                "directory that holds it or pass --app-dir"
            ) from None
        raise ServeConfigError(_import_failed(target, module_name, exc)) from None
    except Exception as exc:
        raise ServeConfigError(_import_failed(target, module_name, exc)) from None


def _import_failed(target: str, module_name: str, exc: BaseException) -> str:
    return (
        f"reward {target!r}: importing module {module_name!r} failed: {type(exc).__name__}: {exc}"
    )


def reward_names(module: ModuleType) -> list[str]:
    """The module's attributes that can be served: rewards, ``BaseReward`` instances, adapters."""
    return [
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and isinstance(value, (Reward, BaseReward, RewardAdapter))
    ]


def _no_attribute(target: str, module: ModuleType, attribute: str) -> str:
    where = getattr(module, "__file__", None) or module.__name__
    rewards = reward_names(module)
    candidates = rewards or [
        name for name, value in vars(module).items() if callable(value) and not name.startswith("_")
    ]
    close = difflib.get_close_matches(attribute, candidates, n=3, cutoff=0.5)
    message = f"reward {target!r}: module {module.__name__!r} ({where}) was imported but has no attribute {attribute!r}"
    if close:
        message += f"; did you mean {' or '.join(repr(name) for name in close)}?"
    if rewards:
        message += f" Its rewards: {', '.join(rewards)}"
    else:
        message += " It defines no @reward"
    return message
