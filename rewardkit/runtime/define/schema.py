"""A reward's result schema: the extras keys every one of its samples carries, known before its
first call, and the value each key takes on a sample that has none (failed, or not applicable).

Trainers batch per-sample extras by key (verl makes a column of each key, OpenRLHF concatenates
experiences' info by key, TRL adds a completions-table column per key): a key some samples lack
crashes them or misaligns the batch. So every consumer of a reward's results (the framework
adapters, ``rewardkit serve``) takes its key set from here, once, and gives every sample exactly
those keys: success or failure, first or last, sync or async, in any process.

Contract (stable; used by ``rewardkit.adapters`` and ``rewardkit serve``):

* ``result_schema(reward, *, extra_keys=None, fill=None) -> ResultSchema``, without calling the
  reward. The keys come from, in order: ``extra_keys`` passed here (an adapter's option); the
  reward's own declaration (``@reward(extra_keys=[...])``, or ``extra_keys = (...)`` on a
  ``BaseReward`` subclass); else the keys its ``return`` statements name
  (``rewardkit.runtime.define.return_keys``: dict displays, ``dict(...)``, local dicts, plain helper functions
  followed). ``extra_keys`` is a sequence of names, or a mapping name -> type (``bool``/``int``/
  ``float``: a number, ``str``: text, ``list``/``dict``/``tuple``/``set``: other, anything else:
  any value); ``()`` means "no extras".
* When none of these can tell, it raises ``ResultSchemaError`` (a ``RewardShapeError``) that
  names the reward, its ``file:line``, the return it could not read and ``extra_keys``: raised
  when the adapter (or server) is built, never mid-training.
* ``ResultSchema.keys`` (ordered names, ``reward`` never among them), ``.kinds`` (name ->
  ``"number"``/``"text"``/``"other"``/``"any"``: what frameworks that log numbers only need), ``.fills`` (name -> value on a sample without extras),
  ``.source`` (``"declared"`` or ``"returns"``), ``.location``.
* ``ResultSchema.conform(extras)``: a dict with exactly ``keys``: ``extras``' values, a key it
  lacks given its fill, a key outside the schema dropped (logged once per reward and key).
  ``conform(None)`` is the row of a sample without extras: a failure, and equally a "not
  applicable" (skipped) sample; callers tell those apart by their own ``error`` field.
* Fill values: ``None`` unless ``fill`` says otherwise (a value for every key, or a mapping of
  per-key values, the rest ``None``). ``None`` is what frameworks' means skip or cannot mistake
  for a measurement: verl's validation metrics and TRL's logged means leave it out, JSON writes
  ``null``. A framework that needs a number in every row (OpenRLHF's tensors) has its adapter
  pass a number (0.0 by default), never NaN, which would make ``torch.mean`` NaN.
"""

from __future__ import annotations

import ast
import functools
import inspect
import linecache
import logging
import types
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from rewardkit.runtime.define.errors import RewardShapeError
from rewardkit.runtime.define.return_keys import (
    Kind,
    Shape,
    Unknown,
    is_number_annotation,
    returned_shape,
)
from rewardkit.runtime.define.rewards import BaseReward, Reward, as_reward

logger = logging.getLogger("rewardkit.schema")

SchemaSource = Literal["declared", "returns"]

_NUMBER_TYPES = (bool, int, float)


class ResultSchemaError(RewardShapeError):
    """A reward's extras keys cannot be known before its first call: declare ``extra_keys``."""


@dataclass(frozen=True)
class ResultSchema:
    """The fixed extras of one reward: keys (in order), each key's kind and its fill value."""

    reward_name: str
    keys: tuple[str, ...]
    kinds: Mapping[str, Kind]
    fills: Mapping[str, Any]
    source: SchemaSource
    location: str
    _warned: set[str] = field(default_factory=set, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kinds", types.MappingProxyType(dict(self.kinds)))
        object.__setattr__(self, "fills", types.MappingProxyType(dict(self.fills)))

    def __reduce__(self) -> tuple[Any, ...]:
        fields = (
            self.reward_name,
            self.keys,
            dict(self.kinds),
            dict(self.fills),
            self.source,
            self.location,
        )
        return (ResultSchema, fields)

    def conform(self, extras: Mapping[str, Any] | None) -> dict[str, Any]:
        """``extras`` with exactly this schema's keys (``None``: a sample without extras)."""
        fills = self.fills
        if extras is None:
            return dict(fills)
        row = {key: extras.get(key, fills[key]) for key in self.keys}
        if not extras.keys() <= fills.keys():
            self._warn_unexpected(extras)
        return row

    def _warn_unexpected(self, extras: Mapping[str, Any]) -> None:
        for key in extras:
            if key in self.fills or key in self._warned:
                continue
            self._warned.add(key)  # a race logs a key twice at worst
            logger.warning(
                "reward %r returned extra %r, which is not in its result schema (%s, from %s); every "
                "sample carries the same keys, so it is dropped: declare it in extra_keys=[...] to keep it",
                self.reward_name,
                key,
                ", ".join(self.keys) or "no extras",
                "extra_keys" if self.source == "declared" else f"the returns at {self.location}",
            )

    def with_fills(self, fill: Any = None) -> ResultSchema:
        """The same schema with other fill values (``fill``: one value, or a per-key mapping)."""
        return ResultSchema(
            self.reward_name,
            self.keys,
            self.kinds,
            _fills(self.keys, fill),
            self.source,
            self.location,
        )


def result_schema(
    reward: Any, *, extra_keys: Iterable[str] | Mapping[str, Any] | None = None, fill: Any = None
) -> ResultSchema:
    """The result schema of ``reward`` (a reward object, ``BaseReward`` instance or plain
    callable), known without calling it; see the module docstring. Raises ``ResultSchemaError``."""
    target = as_reward(reward)
    name = target.name
    location = _location(target)
    declared = extra_keys if extra_keys is not None else getattr(target, "extra_keys", None)
    if declared is not None:
        kinds = declared_kinds(declared, owner=f"reward {name!r}")
        source: SchemaSource = "declared"
    else:
        kinds = dict(_read_returns(target, name, location).keys)
        source = "returns"
    keys = tuple(kinds)
    return ResultSchema(name, keys, kinds, _fills(keys, fill), source, location)


def declared_kinds(extra_keys: Iterable[str] | Mapping[str, Any], *, owner: str) -> dict[str, Kind]:
    """Validate declared ``extra_keys`` (names, or name -> type) into name -> kind."""
    if isinstance(extra_keys, (str, bytes)):
        raise TypeError(
            f"{owner}: extra_keys must be a list of names, not the string {extra_keys!r}"
        )
    items = (
        extra_keys.items()
        if isinstance(extra_keys, Mapping)
        else ((key, Any) for key in extra_keys)
    )
    kinds: dict[str, Kind] = {}
    for key, annotation in items:
        if not isinstance(key, str) or not key:
            raise TypeError(
                f"{owner}: extra_keys holds {key!r}; each extra is named by a non-empty string"
            )
        if key == "reward":
            raise RewardShapeError(
                f"{owner}: extra_keys cannot hold 'reward': it is the reward itself, not an extra"
            )
        if key in kinds:
            raise RewardShapeError(f"{owner}: extra_keys names {key!r} twice")
        kinds[key] = _kind_of_type(annotation)
    return kinds


def _kind_of_type(annotation: Any) -> Kind:
    if isinstance(annotation, type) and issubclass(annotation, _NUMBER_TYPES):
        return "number"
    if annotation is str:
        return "text"
    if isinstance(annotation, type) and issubclass(annotation, (list, tuple, dict, set)):
        return "other"
    return "any"


def _fills(keys: tuple[str, ...], fill: Any) -> Mapping[str, Any]:
    if isinstance(fill, Mapping):
        unknown = [key for key in fill if key not in keys]
        if unknown:
            raise RewardShapeError(
                f"fill names {unknown!r}, which are not extras of the schema ({', '.join(keys)})"
            )
        return {key: fill.get(key) for key in keys}
    return dict.fromkeys(keys, fill)


# -- reading the definition ------------------------------------------------------------------


def _function_of(target: Reward | BaseReward) -> Any:
    """The function whose returns make the reward's result."""
    if isinstance(target, BaseReward):
        return type(target).call
    function = target.__wrapped__
    while isinstance(function, functools.partial):
        function = function.func
    if not inspect.isroutine(function) and callable(function):
        return type(function).__call__
    return inspect.unwrap(function)


def _location(target: Reward | BaseReward) -> str:
    binding = target.binding
    return binding.location if binding is not None else type(target).__qualname__


def _read_returns(target: Reward | BaseReward, name: str, location: str) -> Shape:
    function = _function_of(target)
    try:
        return _shape_of(function, depth=3)
    except Unknown as exc:
        where = f"line {exc.line}: " if exc.line else ""
        raise ResultSchemaError(
            f"reward {name!r} ({location}): the extras every sample carries cannot be known before "
            f"its first call ({where}{exc.reason}); a reward that returns a number says so with `-> float` "
            "on its def; else declare the extras: @reward(extra_keys=['acc', ...]) on the definition "
            "(extra_keys = (...) on a BaseReward), or extra_keys=[...] on the adapter (extra_keys=() for none)"
        ) from None


def _shape_of(function: Any, *, depth: int) -> Shape:
    """The shape ``function``'s returns give, following calls of plain module-level functions."""
    try:
        node = _definition_node(function)
    except Unknown:
        if _returns_a_number(function):  # `-> float` on a function whose source is not available
            return Shape()
        raise
    scope = getattr(function, "__globals__", {})

    def follow(called: str, remaining: int) -> Shape | None:
        root, *attributes = called.split(".")
        helper = scope.get(root)
        for attribute in attributes:  # `module.function`, through imported modules only
            if not isinstance(helper, types.ModuleType):
                return None
            helper = getattr(helper, attribute, None)
        if isinstance(helper, Reward):
            helper = helper.__wrapped__
        if not isinstance(helper, types.FunctionType):
            return None
        return _shape_of(helper, depth=remaining)

    return returned_shape(node, follow, depth=depth)


def _returns_a_number(function: Any) -> bool:
    """Whether ``function``'s return annotation, as Python evaluated it, says "a number"."""
    annotation = getattr(function, "__annotations__", {}).get("return")
    if isinstance(annotation, str):
        return (
            is_number_annotation(ast.parse(annotation, mode="eval").body)
            if annotation.isidentifier()
            else False
        )
    arguments = [part for part in typing.get_args(annotation) if part is not type(None)]
    if arguments and typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return all(isinstance(part, type) and issubclass(part, _NUMBER_TYPES) for part in arguments)
    return isinstance(annotation, type) and issubclass(annotation, _NUMBER_TYPES)


def _definition_node(function: Any) -> ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda:
    """The ``def`` (or lambda) of ``function`` in its module's source, found by its first line."""
    code = getattr(function, "__code__", None)
    if code is None:
        raise Unknown(f"{function!r} has no Python source to read")
    lines = linecache.getlines(code.co_filename, getattr(function, "__globals__", None))
    if not lines:
        raise Unknown(f"the source of {code.co_name!r} ({code.co_filename}) is not available")
    tree = _parse(code.co_filename, "".join(lines))
    if tree is None:
        raise Unknown(f"{code.co_filename} does not parse")
    matches: list[ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == code.co_name:
            first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
            if code.co_firstlineno in (first, node.lineno):
                matches.append(node)
        elif (
            isinstance(node, ast.Lambda)
            and code.co_name == "<lambda>"
            and node.lineno == code.co_firstlineno
        ):
            matches.append(node)
    if len(matches) != 1:
        raise Unknown(
            f"the definition of {code.co_name!r} is not found in {code.co_filename}:{code.co_firstlineno}"
        )
    return matches[0]


@functools.lru_cache(maxsize=64)
def _parse(filename: str, source: str) -> ast.Module | None:
    try:
        return ast.parse(source, filename)
    except (SyntaxError, ValueError):
        return None
