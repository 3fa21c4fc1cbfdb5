"""One key set for a reward's extras on every sample, as the frameworks' batch code needs.

verl appends each extras key into a list per batch and turns it into a column: a key that
only some samples have misaligns or breaks the batch. OpenRLHF concatenates per-sample info
by key, and TRL's completions table adds a column per key. So every sample a given adapter
returns carries the same keys: the declared ``extra_keys``, or else the keys of the first
successful result this adapter saw in this process. A missing key gets ``missing_extra``; a
key outside the set is dropped with one warning naming it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from rewardkit.errors import RewardShapeError

logger = logging.getLogger("rewardkit.adapters")


class ExtrasSchema:
    """The fixed extras key set of one adapter, and the check of names its framework reserves."""

    def __init__(
        self,
        *,
        owner: str,
        framework: str,
        declared: Iterable[str] | None,
        missing: Any,
        reserved: Mapping[str, str],
    ) -> None:
        self.owner = owner
        self.framework = framework
        self.missing = missing
        self.reserved = reserved
        self._lock = threading.Lock()
        self._warned: set[str] = set()
        self.keys: tuple[str, ...] | None = None
        if declared is not None:
            declared = tuple(declared)
            self.check_reserved(declared, source="extra_keys")
            self.keys = declared

    def check_reserved(self, keys: Iterable[str], *, source: str = "its result") -> None:
        """Raise ``RewardShapeError`` if any of ``keys`` is a name the framework reserves."""
        for key in keys:
            why = self.reserved.get(key)
            if why is not None:
                raise RewardShapeError(
                    f"reward {self.owner!r}: extra {key!r} in {source} is a name {self.framework} "
                    f"reserves ({why}); rename it, e.g. {self.owner + '_' + key!r}"
                )

    def learn(self, extras: Mapping[str, Any]) -> tuple[str, ...]:
        """The key set, fixed by ``extras`` (a successful result) if nothing fixed it yet."""
        if self.keys is None:
            self.check_reserved(extras)
            with self._lock:
                if self.keys is None:
                    self.keys = tuple(extras)
        return self.keys

    def conform_all(self, batch: list[Mapping[str, Any] | None]) -> list[dict[str, Any]]:
        """``conform`` for a whole batch, the key set fixed by its first successful result even
        when failed samples (``None``) come before it: every row of one batch has the same keys."""
        for extras in batch:
            if extras is not None:
                self.learn(extras)
                break
        return [self.conform(extras) for extras in batch]

    def conform(self, extras: Mapping[str, Any] | None) -> dict[str, Any]:
        """``extras`` reduced or filled to the key set (``None``: a failed sample, all missing)."""
        if extras is None:
            return {key: self.missing for key in self.keys or ()}
        self.check_reserved(extras)
        keys = self.learn(extras)
        unexpected = [key for key in extras if key not in keys and key not in self._warned]
        for key in unexpected:
            self._warned.add(key)
            logger.warning(
                "reward %r returned extra %r, which its first result (or extra_keys) did not have; "
                "%s needs the same keys on every sample, so it is dropped: pass "
                "extra_keys=[...] to the adapter to keep it",
                self.owner,
                key,
                self.framework,
            )
        return {key: extras.get(key, self.missing) for key in keys}
