"""``RemoteReward``: a reward served by `rewardkit serve`, usable wherever a local one is.

It is a ``BaseReward``: ``calculate_rewards(remote, samples)``, ``to_verl(remote)``,
``to_trl(remote)``, ``to_openrlhf(remote)`` and AgentFly's runner call it like any async reward.
Calls made together (``calculate_rewards`` runs up to 64 at once) go out as one request per
event-loop turn, up to ``max_batch`` samples each; ``score`` sends a batch directly and keeps
every sample's outcome. Scoring is idempotent, so a request that fails in transit, or gets 500,
502, 503 (honouring ``Retry-After``) or 504, is sent again, up to ``retries`` times.
"""

from __future__ import annotations

import asyncio
import os
import random
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import httpx

from rewardkit.runtime.define.results import RewardResult
from rewardkit.runtime.define.rewards import BaseReward
from rewardkit.serve.auth import TOKEN_ENV
from rewardkit.serve.outcomes import RemoteSampleError, SampleOutcome

RETRY_STATUSES = frozenset({408, 500, 502, 503, 504})
"""Answers worth sending the same request again for: the server (or a proxy before it) failed
or was saturated, and scoring has no side effect."""

NOT_SENT_FIELDS = frozenset({"context"})
"""Fields that cannot travel: a ``Context`` holds live resources of this process."""


class RemoteRewardError(RuntimeError):
    """A request to a reward server failed for good: refused (4xx, with the server's reason) or
    still failing after the retries. ``status`` is the last HTTP status (``None``: no answer)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class _Pending:
    fields: dict[str, Any]
    future: asyncio.Future[SampleOutcome]


@dataclass
class _LoopState:
    """What belongs to one event loop: its HTTP client and the calls waiting to go out."""

    client: httpx.AsyncClient
    pending: list[_Pending] = field(default_factory=list)
    flushing: bool = False


def retry_delay(attempt: int, backoff: float, response: httpx.Response | None) -> float:
    """Seconds before retry ``attempt`` (0-based): the answer's ``Retry-After``, else exponential
    backoff from ``backoff`` (at most 10 s) with jitter."""
    if response is not None:
        header = response.headers.get("retry-after", "")
        if header.isdigit():
            return float(header)
    return _backoff(attempt, backoff) * (0.5 + random.random() / 2)


def _backoff(attempt: int, backoff: float) -> float:
    """The longest wait before retry ``attempt`` without ``Retry-After``: exponential, at most 10 s."""
    return min(backoff * 2**attempt, 10.0)


class RemoteReward(BaseReward, auto_register=False):
    """The reward ``name`` served at ``url`` (``http://host:8000``; ``name=None``: the server's
    first reward). ``timeout`` bounds one HTTP request (seconds); ``retries`` how often a failed
    request is sent again; ``max_batch`` how many samples go in one request; ``headers`` go with
    every request (e.g. an authorization a proxy wants); ``token`` is the server's bearer token
    (default: ``$REWARDKIT_SERVE_TOKEN`` if set), sent as ``Authorization: Bearer``; ``transport`` replaces httpx's (tests,
    custom TLS). ``extra_keys``: the reward's result schema as the server serves it, read from
    the server when an adapter first asks for it (pass it to build adapters with the server down)."""

    name: ClassVar[str] = "RemoteReward"

    def __init__(
        self,
        url: str,
        name: str | None = None,
        *,
        timeout: float = 180.0,
        retries: int = 5,
        backoff: float = 0.5,
        max_batch: int = 256,
        headers: Mapping[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        extra_keys: Sequence[str] | Mapping[str, Any] | None = None,
        token: str | None = None,
    ) -> None:
        if retries < 0 or max_batch < 1 or not timeout > 0:
            raise ValueError(
                "RemoteReward: retries >= 0, max_batch >= 1 and timeout > 0 are required"
            )
        headers = dict(headers or {})
        has_authorization = any(key.lower() == "authorization" for key in headers)
        if token is not None and has_authorization:
            raise ValueError(
                "RemoteReward: pass either token= or an Authorization header, not both"
            )
        if token is None and not has_authorization:
            token = os.environ.get(TOKEN_ENV, "").strip() or None
        if token is not None:
            headers["Authorization"] = f"Bearer {token.strip()}"
        self.url = url.rstrip("/")
        self.reward_name = name
        self.name = name or "remote"  # type: ignore[misc]  # the instance reports the remote reward's name
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_batch = max_batch
        self.headers = headers
        self.transport = transport
        self._info: dict[str, Any] | None = None
        self._extra_keys = extra_keys
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState] = (
            weakref.WeakKeyDictionary()
        )

    def __repr__(self) -> str:
        return f"RemoteReward({self.url!r}, {self.reward_name!r})"

    @property
    def longest_call_seconds(self) -> float:
        """How long one request may take through its retries: every attempt timing out, and
        the backoffs between them."""
        backoffs = sum(_backoff(attempt, self.backoff) for attempt in range(self.retries))
        return (self.retries + 1) * self.timeout + backoffs

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_loops"] = None  # clients belong to this process's event loops
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._loops = weakref.WeakKeyDictionary()

    # -- the HTTP side ------------------------------------------------------------------------

    def _state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        state = self._loops.get(loop)
        if state is None:
            limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
            client = httpx.AsyncClient(
                timeout=self.timeout, headers=self.headers, limits=limits, transport=self.transport
            )
            state = self._loops[loop] = _LoopState(client)
        return state

    async def _request(self, method: str, path: str, payload: Any = None) -> Any:
        """The JSON answer to ``method path``, retrying what is worth retrying."""
        client = self._state().client
        response: httpx.Response | None = None
        last_error = ""
        for attempt in range(self.retries + 1):
            if attempt:
                await asyncio.sleep(retry_delay(attempt - 1, self.backoff, response))
            response = None
            try:
                response = await client.request(method, self.url + path, json=payload)
            except httpx.TransportError as exc:
                last_error = f"{type(exc).__name__}: {exc}"
                continue
            if response.status_code < 400:
                return response.json()
            last_error = f"HTTP {response.status_code}: {error_reason(response)}"
            if response.status_code not in RETRY_STATUSES:
                raise RemoteRewardError(
                    f"{method} {self.url}{path} was refused: {last_error}",
                    status=response.status_code,
                )
        status = None if response is None else response.status_code
        raise RemoteRewardError(
            f"{method} {self.url}{path} failed {self.retries + 1} times; last: {last_error}",
            status=status,
        )

    async def describe(self) -> dict[str, Any]:
        """What the server says about this reward: its fields, ``extra_keys``, timeout (cached)."""
        if self._info is None:
            path = "/v1/rewards" if self.reward_name is None else f"/v1/rewards/{self.reward_name}"
            info = await self._request("GET", path)
            if self.reward_name is None:
                info = info["rewards"][0]
                self.reward_name = self.name = info["name"]  # type: ignore[misc]
            self._info = info
        return self._info

    def _sendable(self, fields: Mapping[str, Any], info: Mapping[str, Any]) -> dict[str, Any]:
        if info.get("accepts_any_field"):
            return {key: value for key, value in fields.items() if key not in NOT_SENT_FIELDS}
        wanted = info.get("parameters", ())
        return {key: fields[key] for key in wanted if key in fields and key not in NOT_SENT_FIELDS}

    async def score(self, samples: Sequence[Mapping[str, Any]]) -> list[SampleOutcome]:
        """Every sample's outcome (reward, extras, failure), in order; ``max_batch`` per request."""
        info = await self.describe()
        path = f"/v1/rewards/{info['name']}/score"
        chunks = [
            [self._sendable(sample, info) for sample in samples[start : start + self.max_batch]]
            for start in range(0, len(samples), self.max_batch)
        ]
        answers = await asyncio.gather(
            *(self._request("POST", path, {"samples": chunk}) for chunk in chunks)
        )
        return [SampleOutcome.from_json(item) for answer in answers for item in answer["results"]]

    async def aclose(self) -> None:
        """Close this event loop's connections."""
        state = self._loops.pop(asyncio.get_running_loop(), None)
        if state is not None:
            await state.client.aclose()

    async def __aenter__(self) -> RemoteReward:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # -- the reward side ----------------------------------------------------------------------

    async def call(self, **fields: Any) -> RewardResult:
        """Score one sample (sent with the others of this loop turn); a sample the server scored
        as failed raises ``RemoteSampleError``, which callers record as that sample's failure."""
        outcome = await self._submit(fields)
        if outcome.failure is not None:
            raise RemoteSampleError(self.name, outcome.failure)
        if not outcome.applicable:
            return RewardResult.not_applicable(
                "the served reward does not apply to this sample", outcome.extras
            )
        return RewardResult(outcome.reward, outcome.extras)

    async def _submit(self, fields: dict[str, Any]) -> SampleOutcome:
        state = self._state()
        future: asyncio.Future[SampleOutcome] = asyncio.get_running_loop().create_future()
        state.pending.append(_Pending(fields, future))
        if not state.flushing:
            state.flushing = True
            asyncio.get_running_loop().call_soon(lambda: asyncio.ensure_future(self._flush(state)))
        return await future

    async def _flush(self, state: _LoopState) -> None:
        """Send what the loop turn gathered, ``max_batch`` samples per request, all at once."""
        pending, state.pending, state.flushing = state.pending, [], False
        chunks = [
            pending[start : start + self.max_batch]
            for start in range(0, len(pending), self.max_batch)
        ]
        await asyncio.gather(*(self._send(chunk) for chunk in chunks))

    async def _send(self, chunk: list[_Pending]) -> None:
        try:
            outcomes = await self.score([item.fields for item in chunk])
        except Exception as exc:
            for item in chunk:
                if not item.future.done():
                    item.future.set_exception(exc)
            return
        for item, outcome in zip(chunk, outcomes):
            if not item.future.done():
                item.future.set_result(outcome)


KIND_TYPES: Mapping[str, type] = {"number": float, "text": str, "other": list, "any": object}
"""A served ``extra_kinds`` value as the type ``rewardkit.runtime.define.schema`` reads back to the same kind."""


def _served_extra_keys(self: RemoteReward) -> Sequence[str] | Mapping[str, Any]:
    """The served reward's extras and their kinds (``GET /v1/rewards/{name}``, read once): an
    adapter of a ``RemoteReward`` fixes the same result schema as the server's."""
    if self._extra_keys is None:

        async def describe_once() -> dict[str, Any]:
            try:
                return await self.describe()
            finally:
                await self.aclose()  # this loop ends here: so do its connections

        from rewardkit.adapters.base import run_coroutine

        try:
            info = run_coroutine(describe_once())
        except (RemoteRewardError, httpx.HTTPError) as exc:
            raise RemoteRewardError(
                f"the result schema of remote reward {self.name!r} at {self.url} is read from the server, "
                f"which did not answer ({exc}); start it first, or pass extra_keys=[...] to RemoteReward"
            ) from exc
        kinds = info.get("extra_kinds") or {}
        self._extra_keys = {
            key: KIND_TYPES.get(kinds.get(key, "any"), object) for key in info["extra_keys"]
        }
    return self._extra_keys


# BaseReward.__init_subclass__ sets the class's ``extra_keys`` to its declaration; the served one
# is read from the server, per instance, when first needed.
RemoteReward.extra_keys = property(_served_extra_keys)  # type: ignore[assignment]


def error_reason(response: httpx.Response) -> str:
    """The server's error message, or the start of the body."""
    try:
        error = response.json().get("error", {})
        return str(error.get("message") or error)
    except (ValueError, AttributeError):
        return response.text[:200]
