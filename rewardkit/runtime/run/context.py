"""The rollout ``Context`` and shared resources (``ResourceSpec``), AgentFly-compatible.

Tools and rewards of one rollout that acquire the same spec get the same instance
(``scope="rollout"``); ``scope="global"`` hands out instances from a bounded pool shared
across rollouts. ``async with Context(...)`` (or ``end_resource``/``release_resource``)
guarantees cleanup even when a reward raises.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from rewardkit.runtime.define.errors import ResourceTimeoutError

Scope = Literal["rollout", "global"]
_SCOPES = ("rollout", "global")
_BACKENDS = ("local",)


@dataclass(frozen=True)
class ResourceSpec:
    """How to make and dispose of a shared resource (an environment, a browser, a client).

    ``key`` identifies the resource; ``factory()`` (sync or async) creates an instance;
    ``close(instance)`` (sync or async, optional) disposes of one; ``max_instances`` bounds
    the ``scope="global"`` pool (``None``: unbounded).
    """

    key: str
    factory: Callable[[], Any]
    close: Callable[[Any], Any] | None = None
    max_instances: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.key, str) or not self.key:
            raise ValueError(f"ResourceSpec key must be a non-empty string, got {self.key!r}")
        if not callable(self.factory):
            raise TypeError(
                f"ResourceSpec {self.key!r}: factory must be callable, got {self.factory!r}"
            )
        if self.close is not None and not callable(self.close):
            raise TypeError(
                f"ResourceSpec {self.key!r}: close must be callable, got {self.close!r}"
            )
        if self.max_instances is not None and (
            not isinstance(self.max_instances, int) or self.max_instances < 1
        ):
            raise ValueError(
                f"ResourceSpec {self.key!r}: max_instances must be a positive integer or None, "
                f"got {self.max_instances!r}"
            )


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


async def _close(spec: ResourceSpec, instance: Any) -> None:
    if spec.close is not None:
        await _maybe_await(spec.close(instance))


def _conflicting_specs(known: ResourceSpec, other: ResourceSpec) -> ValueError:
    return ValueError(
        f"resource key {other.key!r} names two different specs ({known!r} and {other!r}); "
        "give each spec its own key"
    )


_CAPACITY = object()
"""Handed to a global-pool waiter instead of an instance: "you may create one"."""


@dataclass(eq=False)
class _GlobalPool:
    spec: ResourceSpec
    free: list[Any] = field(default_factory=list)
    count: int = 0  # instances that exist or are being created
    waiters: deque[asyncio.Future[Any]] = field(default_factory=deque)

    def hand_over(self, item: Any) -> bool:
        """Give ``item`` (an instance or ``_CAPACITY``) to the oldest live waiter, if any."""
        while self.waiters:
            waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.set_result(item)
                return True
        return False


@dataclass(eq=False)
class _Slot:
    """One rollout's claim on a spec: its instance once created (or checked out)."""

    spec: ResourceSpec
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    ready: bool = False
    instance: Any = None


class ResourceManager:
    """Process-local pools behind ``Context.acquire_resource`` (the ``"local"`` backend).

    One default manager is shared by every ``Context``; pass ``resources=ResourceManager()``
    to a ``Context`` for an isolated one (tests do).
    """

    def __init__(self) -> None:
        self._slots: dict[tuple[Scope, str, str], _Slot] = {}
        self._pools: dict[str, _GlobalPool] = {}
        # Slots whose close was interrupted (a cancelled cleanup): aclose() closes them again.
        self._interrupted: list[tuple[_Slot, _GlobalPool | None]] = []
        # Context cleanups still running after their caller was cancelled: aclose() awaits them.
        self._cleanups: set[asyncio.Future[None]] = set()

    async def acquire(
        self, spec: ResourceSpec, resource_id: str, scope: Scope, timeout: float
    ) -> Any:
        """The instance of ``spec`` for ``resource_id`` in ``scope``, creating or checking one out."""
        slot_key = (scope, spec.key, resource_id)
        slot = self._slots.get(slot_key)
        if slot is None:
            slot = self._slots[slot_key] = _Slot(spec)
        elif slot.spec != spec:
            raise _conflicting_specs(slot.spec, spec)
        async with slot.lock:
            if not slot.ready:
                if scope == "rollout":
                    instance = await _maybe_await(spec.factory())
                else:
                    instance = await self._check_out(spec, timeout)
                if self._slots.get(slot_key) is not slot:
                    # The rollout ended (end/release_resource) while this acquire waited: its
                    # cleanup could not see this instance, so hand it back here, not leak it.
                    await self._let_go(spec, scope, instance)
                    raise RuntimeError(
                        f"resource {spec.key!r} for {resource_id!r}: the rollout ended its {scope} "
                        "resources while this acquire_resource was still waiting"
                    )
                slot.instance = instance
                slot.ready = True
            return slot.instance

    async def _let_go(self, spec: ResourceSpec, scope: Scope, instance: Any) -> None:
        """Close a rollout instance, or return a global one to its pool."""
        if scope == "rollout":
            await _close(spec, instance)
        else:
            self._give_back(self._pools[spec.key], instance)

    async def _check_out(self, spec: ResourceSpec, timeout: float) -> Any:
        pool = self._pools.get(spec.key)
        if pool is None:
            pool = self._pools[spec.key] = _GlobalPool(spec)
        elif pool.spec != spec:
            raise _conflicting_specs(pool.spec, spec)
        if pool.free:
            return pool.free.pop()
        if spec.max_instances is None or pool.count < spec.max_instances:
            pool.count += 1
            return await self._create_in(pool)
        waiter: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        pool.waiters.append(waiter)
        started = time.monotonic()
        try:
            await asyncio.wait({waiter}, timeout=timeout)
        except asyncio.CancelledError:
            self._abandon(pool, waiter)
            raise
        if not waiter.done():
            self._abandon(pool, waiter)
            raise ResourceTimeoutError(
                f"no instance of resource {spec.key!r} became free within {timeout} s "
                f"(max_instances={spec.max_instances}, all in use; waited "
                f"{time.monotonic() - started:.1f} s); release_resource('global') after use"
            )
        item = waiter.result()
        if item is _CAPACITY:
            return await self._create_in(pool)
        return item

    def _abandon(self, pool: _GlobalPool, waiter: asyncio.Future[Any]) -> None:
        """A waiter gave up: drop it, and pass on anything it had been handed meanwhile."""
        if waiter in pool.waiters:
            pool.waiters.remove(waiter)
        if waiter.done() and not waiter.cancelled():
            self._give_back(pool, waiter.result())
        else:
            waiter.cancel()

    def _give_back(self, pool: _GlobalPool, item: Any) -> None:
        if pool.hand_over(item):
            return
        if item is _CAPACITY:
            pool.count -= 1
        else:
            pool.free.append(item)

    async def _create_in(self, pool: _GlobalPool) -> Any:
        """Create an instance for a reserved place in ``pool``; free the place if it fails."""
        try:
            return await _maybe_await(pool.spec.factory())
        except BaseException:
            self._give_back(pool, _CAPACITY)
            raise

    async def finish(self, resource_ids: Iterable[str], scope: Scope, *, dispose: bool) -> None:
        """Let go of every ``scope`` resource of ``resource_ids``: close it (``dispose``) or, for
        global ones, return it to its pool. Every one is handled even if a ``close`` raises;
        the first error is raised afterwards."""
        ids = set(resource_ids)
        keys = [key for key in self._slots if key[0] == scope and key[2] in ids]
        errors: list[BaseException] = []
        for key in keys:
            slot = self._slots.pop(key, None)
            if slot is None or not slot.ready:
                continue
            pool = self._pools.get(slot.spec.key) if scope == "global" else None
            if dispose or pool is None:
                error = await self._close_slot(slot, pool)
                if error is not None:
                    errors.append(error)
            else:
                self._give_back(pool, slot.instance)
        if errors:
            raise errors[0]

    async def _close_slot(self, slot: _Slot, pool: _GlobalPool | None) -> Exception | None:
        """Close a slot's instance (and free its place in ``pool``); the error of its ``close``, if any.

        If this is cancelled mid-close, the slot is kept for ``aclose()``, which closes it again:
        cancelling a cleanup never loses an instance."""
        entry = (slot, pool)
        self._interrupted.append(entry)
        error: Exception | None = None
        try:
            await _close(slot.spec, slot.instance)
        except Exception as exc:
            error = exc
        self._interrupted.remove(entry)
        if pool is not None:
            self._give_back(pool, _CAPACITY)
        return error

    def track_cleanup(self, cleanup: asyncio.Future[None]) -> None:
        """Track a running cleanup whose caller may be cancelled, so that ``aclose()`` awaits it."""
        self._cleanups.add(cleanup)
        cleanup.add_done_callback(self._cleanups.discard)

    async def aclose(self) -> None:
        """Close every instance this manager holds (rollout slots, checked-out and free global ones),
        after the cleanups of cancelled contexts have run, and again those whose close was interrupted."""
        while self._cleanups:
            await asyncio.gather(*self._cleanups, return_exceptions=True)
        errors: list[BaseException] = []
        while self._interrupted:
            error = await self._close_slot(*self._interrupted.pop(0))
            if error is not None:
                errors.append(error)
        rollout_ids = {key[2] for key in self._slots if key[0] == "rollout"}
        global_ids = {key[2] for key in self._slots if key[0] == "global"}
        await self.finish(rollout_ids, "rollout", dispose=True)
        await self.finish(global_ids, "global", dispose=False)
        for pool in self._pools.values():
            while pool.free:
                instance = pool.free.pop()
                pool.count -= 1
                try:
                    await _close(pool.spec, instance)
                except Exception as exc:
                    errors.append(exc)
        if errors:
            raise errors[0]

    def in_use(self, key: str) -> int:
        """How many instances of the spec ``key`` exist in the global pool (checked out or free)."""
        pool = self._pools.get(key)
        return 0 if pool is None else pool.count


default_resources = ResourceManager()
"""The process-wide manager every ``Context`` uses unless given its own."""


class Context:
    """What a reward knows about its rollout: ids, metadata, the final response, the
    trajectory, and the shared resources (``acquire_resource``).

    ``async with Context(...) as context:`` ends its rollout resources and releases its
    global ones on exit, also when the reward raised.
    """

    def __init__(
        self,
        rollout_id: str,
        group_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        *,
        final_response: str | None = None,
        trajectory: list[dict[str, Any]] | None = None,
        resources: ResourceManager | None = None,
    ) -> None:
        if not isinstance(rollout_id, str) or not rollout_id:
            raise ValueError(f"Context rollout_id must be a non-empty string, got {rollout_id!r}")
        self.rollout_id = rollout_id
        self.group_id = group_id
        self.metadata: dict[str, Any] = {} if metadata is None else metadata
        self.final_response = final_response
        self.trajectory: list[dict[str, Any]] = [] if trajectory is None else trajectory
        self.resources = default_resources if resources is None else resources
        self._resource_ids: set[str] = {rollout_id}

    def __repr__(self) -> str:
        return f"Context(rollout_id={self.rollout_id!r}, group_id={self.group_id!r})"

    async def acquire_resource(
        self,
        spec: ResourceSpec,
        id: str | None = None,
        scope: Scope = "rollout",
        backend: str = "local",
        timeout: float = 600.0,
    ) -> Any:
        """The instance of ``spec`` for this rollout (``id`` defaults to ``rollout_id``).

        ``scope="rollout"``: created on first use, shared by every tool and reward of the
        rollout asking with the same ``id``. ``scope="global"``: checked out of a pool of at
        most ``spec.max_instances``, waiting up to ``timeout`` seconds for a free one
        (then ``ResourceTimeoutError``).
        """
        if not isinstance(spec, ResourceSpec):
            raise TypeError(f"acquire_resource: spec must be a ResourceSpec, got {spec!r}")
        if scope not in _SCOPES:
            raise ValueError(
                f"acquire_resource: scope must be 'rollout' or 'global', got {scope!r}"
            )
        if backend not in _BACKENDS:
            raise ValueError(
                f"acquire_resource: backend {backend!r} is not supported (supported: {', '.join(_BACKENDS)})"
            )
        resource_id = self.rollout_id if id is None else str(id)
        self._resource_ids.add(resource_id)
        return await self.resources.acquire(spec, resource_id, scope, timeout)

    async def release_resource(self, scope: Scope = "global") -> None:
        """Hand this rollout's ``global`` instances back to their pools (``rollout`` ones have no
        pool to go back to, so releasing them ends them)."""
        self._check_scope(scope)
        await self.resources.finish(self._resource_ids, scope, dispose=scope == "rollout")

    async def end_resource(self, scope: Scope = "rollout") -> None:
        """Close this rollout's instances of ``scope`` (``global`` ones are closed and leave their pool)."""
        self._check_scope(scope)
        await self.resources.finish(self._resource_ids, scope, dispose=True)

    async def close(self) -> None:
        """End rollout resources and release global ones; both run even if one raises.

        The cleanup is shielded: cancelling the task that closes the context (a timeout, a
        cancelled rollout) does not interrupt it; the cancellation propagates once the cleanup
        is done (a second cancellation leaves it running, and ``resources.aclose()`` awaits it).
        """
        cleanup = asyncio.ensure_future(self._clean_up())
        self.resources.track_cleanup(cleanup)
        try:
            await asyncio.shield(cleanup)
        except asyncio.CancelledError:
            if not cleanup.done():
                await asyncio.wait({cleanup})
            raise

    async def _clean_up(self) -> None:
        try:
            await self.end_resource("rollout")
        finally:
            await self.release_resource("global")

    async def __aenter__(self) -> Context:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @staticmethod
    def _check_scope(scope: str) -> None:
        if scope not in _SCOPES:
            raise ValueError(f"scope must be 'rollout' or 'global', got {scope!r}")


__all__ = ["Context", "ResourceManager", "ResourceSpec", "default_resources"]
