"""Client settings of the ``rewardkit`` section (initializationOptions, workspace/configuration).

Keys are camelCase as editors send them. A bad value is reported (named, with what was
expected) and the previous value kept, so one typo in an editor's settings never stops checking.
Keys the server does not know are ignored: the section also holds the editor extension's own
settings (VS Code's ``rewardkit.interpreter``, ``rewardkit.args``, ``rewardkit.trace``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

SECTION = "rewardkit"
"""The configuration section clients store these settings under."""


class SettingsError(ValueError):
    """A client setting has a value of the wrong type or range."""


@dataclass(frozen=True)
class ServerSettings:
    """What the client can tune; every field has a working default."""

    enable: bool = True
    """Report diagnostics at all (hover and completion stay available)."""
    task_fields: tuple[str, ...] = ()
    """Task fields declared by the editor, added to those of ``[tool.rewardkit]``."""
    debounce_ms: int = 200
    """Wait this long after the last change before checking (0: check at once)."""
    max_file_size: int = 1_000_000
    """Documents longer than this (in characters) are not checked, to keep the editor responsive."""


_KEYS: dict[str, str] = {
    "enable": "enable",
    "taskFields": "task_fields",
    "debounceMs": "debounce_ms",
    "maxFileSize": "max_file_size",
}


def _validated(key: str, value: Any) -> Any:
    """Return ``value`` in the field's type, or raise ``SettingsError`` naming ``key``."""
    where = f"setting {SECTION}.{key}"
    if key == "enable":
        if not isinstance(value, bool):
            raise SettingsError(f"{where}: expected true or false, got {value!r}")
        return value
    if key == "taskFields":
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise SettingsError(f"{where}: expected a list of field names, got {value!r}")
        return tuple(value)
    if key in {"debounceMs", "maxFileSize"}:
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise SettingsError(f"{where}: expected a number >= 0, got {value!r}")
        return int(value)
    raise SettingsError(f"{where}: not a server setting (known: {', '.join(_KEYS)})")


def section_of(raw: Any) -> Mapping[str, Any] | None:
    """The ``rewardkit`` section of ``raw``, which may be the section itself or contain it."""
    if not isinstance(raw, Mapping):
        return None
    inner = raw.get(SECTION)
    return inner if isinstance(inner, Mapping) else raw


def merge_settings(base: ServerSettings, raw: Any) -> tuple[ServerSettings, list[str]]:
    """Apply the client's ``raw`` settings over ``base``; return them and the problems found."""
    section = section_of(raw)
    if section is None:
        return base, [] if raw is None else [
            f"settings of {SECTION}: expected an object, got {raw!r}"
        ]
    changes: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in section.items():
        if value is None or key not in _KEYS:
            continue
        try:
            changes[_KEYS[key]] = _validated(key, value)
        except SettingsError as error:
            problems.append(str(error))
    return dataclasses.replace(base, **changes), problems
