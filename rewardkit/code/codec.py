"""A tagged JSON codec of plain data: how values cross between sandboxed programs and the host.

None, bool, int, float (nan and infinities too), str, bytes, bytearray, list, tuple, dict, set,
frozenset and complex cross as themselves (subclasses as their base type: a namedtuple arrives
as a tuple, an ``int`` subclass with its own ``__eq__`` as a plain int). Anything else arrives as
an ``Opaque`` value that equals nothing and has no truth value, so no object of the program's
(its ``__eq__``, ``__bool__``, ``__hash__``) ever runs outside its sandbox.

This module is standard library only: it is copied into the sandbox beside the harness scripts.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any

#: Containers nested deeper than this encode as an opaque value (a self-containing list, say).
MAX_DEPTH = 100
#: Values with more items than this in all do not encode (``CodecError``).
MAX_ITEMS = 1_000_000
#: Ints with more bits than this cross as hexadecimal text (Python refuses to print ints of over
#: 4,300 digits in decimal).
_HEX_BITS = 12_000

TAG = "~"


class CodecError(ValueError):
    """A value that cannot be encoded, or a text that is not an encoded value."""


class Opaque:
    """A value of a type the codec does not carry: it equals nothing (not even itself), and asking
    its truth, length or items is an error, so that a check can only fail on it."""

    __slots__ = ("type_name",)

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name

    def __eq__(self, other: object) -> bool:
        return False

    def __ne__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return id(self)

    def __bool__(self) -> bool:
        raise TypeError(
            f"a value of type {self.type_name} (not plain data) has no truth value here"
        )

    def __repr__(self) -> str:
        return f"<{self.type_name} object>"


class _Encoder:
    def __init__(self) -> None:
        self.items = 0

    def encode(self, value: Any, depth: int = 0) -> Any:
        self.items += 1
        if self.items > MAX_ITEMS:
            raise CodecError(f"a value of more than {MAX_ITEMS:,} items")
        if value is None or type(value) is bool:
            return value
        if isinstance(value, bool):
            return bool(value)
        if isinstance(value, int):
            number = int.__index__(value)
            if number.bit_length() > _HEX_BITS:
                return {TAG: "int", "v": hex(number)}
            return number
        if isinstance(value, float):
            number = float.__float__(value)
            return number if math.isfinite(number) else {TAG: "float", "v": repr(number)}
        if isinstance(value, str):
            return str.__str__(value)
        if isinstance(value, (bytes, bytearray)):
            kind = "bytes" if isinstance(value, bytes) else "bytearray"
            return {TAG: kind, "v": base64.b64encode(bytes(value)).decode("ascii")}
        if isinstance(value, complex):
            number = complex.__complex__(value)
            return {
                TAG: "complex",
                "v": [self.encode(number.real, depth + 1), self.encode(number.imag, depth + 1)],
            }
        if depth >= MAX_DEPTH:
            return {TAG: "opaque", "v": "a value nested too deeply"}
        if isinstance(value, list):
            return [self.encode(item, depth + 1) for item in list.__iter__(value)]
        if isinstance(value, tuple):
            return {
                TAG: "tuple",
                "v": [self.encode(item, depth + 1) for item in tuple.__iter__(value)],
            }
        if isinstance(value, dict):
            pairs = dict.items(value)
            return {
                TAG: "dict",
                "v": [[self.encode(k, depth + 1), self.encode(v, depth + 1)] for k, v in pairs],
            }
        if isinstance(value, (set, frozenset)):
            kind = "frozenset" if isinstance(value, frozenset) else "set"
            members = set.__iter__(value) if isinstance(value, set) else frozenset.__iter__(value)
            return {TAG: kind, "v": [self.encode(item, depth + 1) for item in members]}
        return {TAG: "opaque", "v": _type_name(value)}


def _type_name(value: object) -> str:
    kind = type(value)
    name = f"{getattr(kind, '__module__', '?')}.{getattr(kind, '__qualname__', '?')}"
    return name if isinstance(name, str) and len(name) <= 200 else name[:200]


def encode(value: Any) -> Any:
    """``value`` as JSON data (lists, numbers, strings and ``{"~": tag, "v": ...}`` objects)."""
    try:
        return _Encoder().encode(value)
    except RecursionError:
        raise CodecError("a value nested too deeply to encode") from None


def dumps(value: Any) -> str:
    """``value`` encoded, as one line of JSON."""
    return json.dumps(encode(value), separators=(",", ":"), allow_nan=False)


def _decode_list(data: Any, depth: int) -> list[Any]:
    if not isinstance(data, list):
        raise CodecError(f"expected a list, got {type(data).__name__}")
    return [decode(item, depth + 1) for item in data]


def decode(data: Any, depth: int = 0) -> Any:
    """The value ``data`` (from ``encode``) stands for; malformed data is a ``CodecError``."""
    if depth > MAX_DEPTH + 2:
        raise CodecError("data nested too deeply")
    if data is None or isinstance(data, (bool, int, str)):
        return data
    if isinstance(data, float):
        return data
    if isinstance(data, list):
        return _decode_list(data, depth)
    if not isinstance(data, dict) or set(data) != {TAG, "v"}:
        raise CodecError(f"not an encoded value: {str(data)[:80]}")
    tag, payload = data[TAG], data["v"]
    try:
        if tag == "tuple":
            return tuple(_decode_list(payload, depth))
        if tag == "dict":
            pairs = _decode_list(payload, depth)
            if not all(isinstance(pair, list) and len(pair) == 2 for pair in pairs):
                raise CodecError("a dict's items must be [key, value] pairs")
            return {key: value for key, value in pairs}
        if tag == "set":
            return set(_decode_list(payload, depth))
        if tag == "frozenset":
            return frozenset(_decode_list(payload, depth))
        if tag in ("bytes", "bytearray") and isinstance(payload, str):
            raw = base64.b64decode(payload.encode("ascii"), validate=True)
            return raw if tag == "bytes" else bytearray(raw)
        if tag == "complex":
            real, imag = _decode_list(payload, depth)
            return complex(real, imag)
        if tag == "float" and payload in ("nan", "inf", "-inf"):
            return float(payload)
        if tag == "int" and isinstance(payload, str):
            return int(payload, 16)
        if tag == "opaque" and isinstance(payload, str):
            return Opaque(payload[:200])
    except (TypeError, ValueError) as error:  # unhashable members, bad base64, wrong arity
        raise CodecError(f"malformed {tag!r} value: {error}") from None
    raise CodecError(f"unknown or malformed tag {str(tag)[:40]!r}")


def loads(text: str | bytes) -> Any:
    """The value one line of ``dumps`` stands for."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise CodecError(f"not JSON: {error}") from None
    return decode(data)
