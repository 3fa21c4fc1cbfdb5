"""An adapter's result schema: the reward's fixed extras keys, checked against the names its
framework reserves, with the adapter's fill values.

verl appends each extras key into a list per batch and turns it into a column: a key that only
some samples have misaligns or breaks the batch. OpenRLHF concatenates per-sample info by key,
and TRL's completions table adds a column per key. So the adapter takes the reward's
``rewardkit.runtime.define.schema.ResultSchema`` when it is built (``extra_keys``, the reward's declaration or
its returns; else ``ResultSchemaError``) and every sample it returns carries exactly those keys:
a key a result lacks, and every key of a failed sample, gets the adapter's fill value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from rewardkit.runtime.define.errors import RewardShapeError
from rewardkit.runtime.define.schema import ResultSchema, result_schema


def check_reserved(
    keys: Iterable[str], *, owner: str, framework: str, reserved: Mapping[str, str], source: str
) -> None:
    """Raise ``RewardShapeError`` if any of ``keys`` is a name the framework reserves."""
    for key in keys:
        why = reserved.get(key)
        if why is not None:
            raise RewardShapeError(
                f"reward {owner!r}: extra {key!r} in {source} is a name {framework} "
                f"reserves ({why}); rename it, e.g. {owner + '_' + key!r}"
            )


def adapter_schema(
    reward: Any,
    *,
    owner: str,
    framework: str,
    extra_keys: Iterable[str] | Mapping[str, Any] | None,
    reserved: Mapping[str, str],
    fill_for: Callable[[str], Any],
) -> ResultSchema:
    """The reward's result schema for one adapter: reserved names refused, ``fill_for(key)`` as
    each key's fill. Raises ``ResultSchemaError`` when the keys cannot be known."""
    schema = result_schema(reward, extra_keys=extra_keys)
    source = (
        "extra_keys"
        if extra_keys is not None
        else (
            "its extra_keys" if schema.source == "declared" else f"its returns ({schema.location})"
        )
    )
    check_reserved(schema.keys, owner=owner, framework=framework, reserved=reserved, source=source)
    return schema.with_fills({key: fill_for(key) for key in schema.keys})
