"""The client's capabilities, read on demand from the JSON it sent.

cattrs builds a structuring function for every class under ``ClientCapabilities`` the first time
one arrives: about 100 ms of the ``initialize`` answer, for a server that reads a dozen of them.
:class:`CapabilitiesView` gives the same attribute access (lsprotocol's snake_case names; a
missing capability is ``None``) over the raw object instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _view(value: Any) -> Any:
    if isinstance(value, Mapping):
        return CapabilitiesView(value)
    if isinstance(value, list):
        return [_view(item) for item in value]
    return value


class CapabilitiesView:
    """Attribute access to a capabilities object, as lsprotocol's classes name the fields."""

    __slots__ = ("_raw",)

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self._raw = raw

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _view(self._raw.get(_camel(name)))

    def __repr__(self) -> str:
        return f"CapabilitiesView({dict(self._raw)!r})"


def structure_capabilities(raw: Any, _: Any) -> CapabilitiesView:
    """cattrs structure hook for ``ClientCapabilities``."""
    if not isinstance(raw, Mapping):
        raise TypeError(f"capabilities must be an object, got {type(raw).__name__}")
    return CapabilitiesView(raw)
