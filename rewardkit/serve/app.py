"""The HTTP face of `rewardkit serve`: a FastAPI app over one ``RewardService``.

Routes (docs/serve.md; the OpenAPI schema is served at ``/docs`` and ``/openapi.json``):

- ``POST /get_reward`` (the first reward) and ``POST /get_reward/{name}``: OpenRLHF's protocol,
  ``{"query", "prompts", "labels"}`` in, ``{"rewards", "scores", "extra_logs"}`` out.
- ``POST /v1/rewards/{name}/score`` and ``POST /v1/score``: samples of named fields in, one
  result per sample out (reward, extras with the reward's fixed keys, typed failure).
- ``GET /v1/rewards[/{name}]``, ``GET /health``, ``GET /metrics`` (Prometheus).

Limits: a body over ``max_body_size`` is refused with 413 before it is read whole; malformed
JSON or a request of the wrong shape is 400 with the reason; a worker holding ``max_in_flight``
samples answers 503 with ``Retry-After``; a client that disconnects has its samples cancelled.
A failing sample is a per-sample failure inside a 200, never an error for the batch.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException

from rewardkit._version import __version__
from rewardkit.runtime.define.errors import FieldCollisionError
from rewardkit.serve.auth import BearerCheck
from rewardkit.serve.config import ServeConfig, with_token
from rewardkit.serve.connections import ConnectionGuard, connection_guard
from rewardkit.serve.metrics import ServeMetrics
from rewardkit.serve.service import (
    Overloaded,
    RequestError,
    RewardService,
    ServedReward,
    UnknownServedReward,
)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

CLIENT_CLOSED_REQUEST = 499
"""Recorded (never sent: nobody is listening) for a request whose client disconnected."""


# -- documented request and response shapes ----------------------------------------------------


class Failure(BaseModel):
    """Why one sample failed; the other samples of the request are unaffected."""

    tag: str = Field(description="timeout, reward_error, bad_result or bad_sample")
    type: str = Field(description="the exception's type, e.g. TimeoutError")
    message: str


class SampleResult(BaseModel):
    reward: float = Field(
        description="the reward; the reward's fallback (default 0.0) when the sample failed"
    )
    extras: dict[str, Any] = Field(description="exactly the reward's extra_keys, on every sample")
    failure: Failure | None = None
    applicable: bool = Field(
        default=True, description="false: the reward does not apply to the sample (not a failure)"
    )


class ScoreRequest(BaseModel):
    samples: list[dict[str, Any]] = Field(
        description="one object of fields per sample, named as the reward's parameters "
        "(e.g. final_response, answer)",
    )


class ScoreResponse(BaseModel):
    reward: str
    extra_keys: list[str] | None
    results: list[SampleResult]


class OpenRLHFRequest(BaseModel):
    """What OpenRLHF's `--reward.remote_url` client posts."""

    query: list[str] = Field(description="prompt + response, decoded with special tokens")
    prompts: list[str]
    labels: list[Any] | None = Field(
        default=None, description="the dataset's label column (one per query)"
    )


class OpenRLHFResponse(BaseModel):
    rewards: list[float]
    scores: list[float]
    extra_logs: dict[str, list[float]] = Field(
        description="numeric extras, plus error (1.0 = the sample failed)"
    )


class ErrorBody(BaseModel):
    error: dict[str, Any] = Field(description="type and message (and reward names, for 404)")


ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "malformed JSON or a request of the wrong shape"},
    401: {
        "model": ErrorBody,
        "description": "the server has a token and the request did not carry it",
    },
    408: {"model": ErrorBody, "description": "the body did not arrive within --read-timeout"},
    404: {"model": ErrorBody, "description": "no reward of that name is served"},
    413: {"model": ErrorBody, "description": "body larger than max_body_size"},
    503: {
        "model": ErrorBody,
        "description": "the worker is at max_in_flight samples: retry after Retry-After seconds",
    },
}


# -- responses -----------------------------------------------------------------------------------


def json_response(
    content: Any, status: int = 200, headers: dict[str, str] | None = None
) -> Response:
    """A JSON response serialized with orjson (numpy values as numbers, anything else as text)."""
    body = orjson.dumps(
        content, option=orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS, default=str
    )
    return Response(body, status_code=status, headers=headers, media_type="application/json")


def error_response(
    status: int, kind: str, message: str, headers: dict[str, str] | None = None, **more: Any
) -> Response:
    return json_response({"error": {"type": kind, "message": message, **more}}, status, headers)


# -- body limit and per-request metrics (plain ASGI: cheaper than a Starlette middleware) -------


class Gatekeeper:
    """Before the app: the bearer token (every route but ``/health``), the cap on open
    connections (503), the body read whole within ``read_timeout`` (408) and up to
    ``max_body_size`` (413, the rest unread), then replayed to the app; every request is counted
    by route and status."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        config: ServeConfig,
        metrics: ServeMetrics,
        worker_id: str,
        guard: ConnectionGuard | None = None,
    ) -> None:
        self.app = app
        self.max_body_size = config.max_body_size
        self.read_timeout = config.read_timeout
        self.retry_after = str(config.retry_after)
        self.auth = BearerCheck(config.token)
        self.guard = guard
        self.metrics = metrics
        self.worker_header = (b"x-rewardkit-worker", worker_id.encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = CLIENT_CLOSED_REQUEST

        async def send_counted(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), self.worker_header]
            await send(message)

        try:
            refusal = self._refusal(scope)
            if refusal is not None:
                await refusal(scope, _no_receive, send_counted)
                return
            replay = await self._read_body(scope, receive, send_counted)
            if replay is not None:
                await self.app(scope, replay, send_counted)
        finally:
            route = scope.get("route")
            label = getattr(route, "path", None) or "unmatched"
            self.metrics.requests.labels(label, str(status)).inc()
            self.metrics.request_seconds.labels(label).observe(time.perf_counter() - started)

    def _refusal(self, scope: Scope) -> Response | None:
        """The answer to a request refused before its body is read: no token, too many connections."""
        problem = self.auth.problem(scope)
        if problem is not None:
            self.metrics.rejected.labels("unauthorized").inc()
            return error_response(
                401,
                "Unauthorized",
                problem,
                headers={"www-authenticate": 'Bearer realm="rewardkit"', "connection": "close"},
            )
        if self.guard is not None and not self.guard.admit():
            self.metrics.rejected.labels("too_many_connections").inc()
            return error_response(
                503,
                "TooManyConnections",
                f"this worker has {self.guard.open} connections open (limit {self.guard.cap}, --max-connections); "
                "retry later",
                headers={"retry-after": self.retry_after, "connection": "close"},
            )
        return None

    async def _read_body(self, scope: Scope, receive: Receive, send: Send) -> Receive | None:
        """A ``receive`` replaying the whole body, or ``None`` once a 413, a 408 (or a disconnect) ended it."""
        limit = self.max_body_size
        for name, value in scope.get("headers", ()):
            if name == b"content-length" and value.isdigit() and int(value) > limit:
                await self._too_large(scope, send, int(value))
                return None
        try:
            body = await within(self.read_timeout, self._body(receive, limit))
        except asyncio.TimeoutError:
            self.metrics.rejected.labels("read_timeout").inc()
            response = error_response(
                408,
                "RequestTimeout",
                f"the request body did not arrive within {self.read_timeout:g} s (--read-timeout)",
                headers={"connection": "close"},
            )
            await response(scope, _no_receive, send)
            return None
        if body is None:
            return None
        if len(body) > limit:
            await self._too_large(scope, send, None)
            return None
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: waits for the client to disconnect

        return replay

    @staticmethod
    async def _body(receive: Receive, limit: int) -> bytes | None:
        """The body, or the first ``limit + 1`` bytes and more once it is over ``limit``; ``None``
        when the client left."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            chunks.append(chunk)
            if size > limit or not message.get("more_body", False):
                return b"".join(chunks)

    async def _too_large(self, scope: Scope, send: Send, declared: int | None) -> None:
        self.metrics.rejected.labels("body_too_large").inc()
        size = f"{declared} bytes" if declared is not None else "more"
        response = error_response(
            413,
            "PayloadTooLarge",
            f"request body of {size} is over this server's limit of {self.max_body_size} bytes "
            "(--max-body-size); send fewer samples per request",
            headers={"connection": "close"},
        )
        await response(scope, _no_receive, send)


if sys.version_info >= (3, 11):

    async def within(seconds: float, work: Awaitable[Any]) -> Any:
        """``await work`` for at most ``seconds`` (``asyncio.TimeoutError`` after), no extra task."""
        async with asyncio.timeout(seconds):
            return await work

else:  # pragma: no cover - Python 3.10

    async def within(seconds: float, work: Awaitable[Any]) -> Any:
        return await asyncio.wait_for(work, seconds)


async def _no_receive() -> Message:  # pragma: no cover - a finished response never reads
    return {"type": "http.disconnect"}


# -- the app ---------------------------------------------------------------------------------------


class ClientDisconnected(Exception):
    """The client went away before its answer was ready; its work was cancelled."""


async def _until_disconnected(request: Request) -> None:
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def run_for_client(request: Request, work: Awaitable[Any]) -> Any:
    """Await ``work``, cancelling it (and raising ``ClientDisconnected``) if the client leaves first."""
    work_task = asyncio.ensure_future(work)
    watch = asyncio.ensure_future(_until_disconnected(request))
    try:
        await asyncio.wait({work_task, watch}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watch.cancel()
        if not work_task.done():
            work_task.cancel()
            await asyncio.gather(work_task, return_exceptions=True)
    if work_task.cancelled():
        raise ClientDisconnected()
    return work_task.result()


class ServeApp:
    """Builds the FastAPI app and holds what its handlers share."""

    def __init__(self, config: ServeConfig, *, worker_id: str | None = None) -> None:
        self.config = config
        self.metrics = ServeMetrics()
        self.service = RewardService(config, on_sample=self.metrics.sample_done)
        self.worker_id = worker_id or f"{socket.gethostname()}/{os.getpid()}"

    async def admitted(
        self, count: int, work: Callable[[], Awaitable[Any]], request: Request
    ) -> Any:
        """Run ``work()`` for ``count`` samples under the in-flight bound, cancelled on disconnect."""
        admission = self.service.admission
        admission.admit(count)  # raises Overloaded
        self._gauges()
        try:
            return await run_for_client(request, work())
        finally:
            admission.release(count)
            self._gauges()

    def _gauges(self) -> None:
        admission = self.service.admission
        self.metrics.in_flight_samples.set(admission.samples)
        self.metrics.in_flight_requests.set(admission.requests)

    def reward(self, name: str | None) -> ServedReward:
        try:
            return self.service.get(name)
        except UnknownServedReward:
            self.metrics.rejected.labels("unknown_reward").inc()
            raise

    async def score(self, name: str | None, body: ScoreRequest, request: Request) -> Response:
        served = self.reward(name)
        samples = body.samples
        outcomes = await self.admitted(len(samples), lambda: served.score(samples), request)
        return json_response(
            {
                "reward": served.name,
                "extra_keys": None if served.extra_keys is None else list(served.extra_keys),
                "results": [outcome.as_json() for outcome in outcomes],
            }
        )

    async def get_reward(
        self, name: str | None, body: OpenRLHFRequest, request: Request
    ) -> Response:
        served = self.reward(name)
        queries, prompts = body.query, body.prompts
        labels = body.labels if body.labels is not None else [None] * len(queries)
        if not len(queries) == len(prompts) == len(labels):
            raise RequestError(
                f"{len(queries)} query, {len(prompts)} prompts and {len(labels)} labels: "
                "expected one of each per sample"
            )
        result = await self.admitted(
            len(queries), lambda: served.get_reward(queries, prompts, labels), request
        )
        return json_response(result)

    def health(self) -> Response:
        admission = self.service.admission
        return json_response(
            {
                "status": "ok",
                "version": __version__,
                "worker": self.worker_id,
                "rewards": [served.name for served in self.service.rewards.values()],
                "in_flight_samples": admission.samples,
                "in_flight_requests": admission.requests,
                "max_in_flight": admission.limit,
            }
        )

    def build(self) -> ASGIApp:
        """The FastAPI app behind the body limit and per-request metrics."""
        app = FastAPI(
            title="rewardkit serve",
            version=__version__,
            description="rewardkit rewards over HTTP: OpenRLHF's /get_reward and a JSON API.",
        )
        app.state.serve = self
        self._routes(app)
        self._error_handlers(app)
        return Gatekeeper(
            app,
            config=self.config,
            metrics=self.metrics,
            worker_id=self.worker_id,
            guard=connection_guard(self.config),
        )

    def _scoring_routes(
        self,
        app: FastAPI,
        handle: Callable[[str | None, Any, Request], Awaitable[Response]],
        body_model: type[BaseModel],
        paths: tuple[str, str],
        summary: str,
        **doc: Any,
    ) -> None:
        """``handle`` at ``paths``: with the first served reward, and with the one the path names."""

        async def default(body: Any, request: Request) -> Response:
            return await handle(None, body, request)

        async def named(name: str, body: Any, request: Request) -> Response:
            return await handle(name, body, request)

        for endpoint in (default, named):  # the request's model, for FastAPI to parse and document
            endpoint.__annotations__["body"] = body_model
        route = handle.__name__
        app.post(
            paths[0], name=f"{route}_default", summary=f"{summary} the first served reward", **doc
        )(default)
        app.post(
            paths[1], name=f"{route}_named", summary=f"{summary} the reward served as `name`", **doc
        )(named)

    def _routes(self, app: FastAPI) -> None:
        openrlhf_paths = ("/get_reward", "/get_reward/{name}")
        self._scoring_routes(
            app,
            self.get_reward,
            OpenRLHFRequest,
            openrlhf_paths,
            "OpenRLHF: score with",
            response_model=OpenRLHFResponse,
            responses=ERRORS,
            tags=["OpenRLHF"],
        )
        score_paths = ("/v1/score", "/v1/rewards/{name}/score")
        self._scoring_routes(
            app,
            self.score,
            ScoreRequest,
            score_paths,
            "Score samples with",
            response_model=ScoreResponse,
            responses=ERRORS,
            tags=["JSON API"],
        )

        @app.get(
            "/v1/rewards",
            summary="The served rewards: fields, extra_keys, timeout",
            tags=["JSON API"],
        )
        async def rewards() -> Response:
            return json_response({"rewards": self.service.describe()})

        @app.get(
            "/v1/rewards/{name}", summary="One served reward", tags=["JSON API"], responses=ERRORS
        )
        async def reward_info(name: str) -> Response:
            return json_response(self.reward(name).describe())

        @app.get("/health", summary="Liveness and load of this worker", tags=["operations"])
        async def health() -> Response:
            return self.health()

        @app.get("/metrics", summary="Prometheus metrics (all workers)", tags=["operations"])
        async def metrics() -> Response:
            body, content_type = self.metrics.exposition()
            return Response(body, media_type=content_type)

    def _error_handlers(self, app: FastAPI) -> None:
        metrics = self.metrics

        @app.exception_handler(RequestValidationError)
        async def malformed(request: Request, exc: RequestValidationError) -> Response:
            metrics.rejected.labels("malformed").inc()
            return error_response(400, "MalformedRequest", _validation_reason(exc))

        @app.exception_handler(RequestError)
        @app.exception_handler(FieldCollisionError)
        async def bad_request(request: Request, exc: Exception) -> Response:
            metrics.rejected.labels("malformed").inc()
            return error_response(400, type(exc).__name__, str(exc))

        @app.exception_handler(UnknownServedReward)
        async def unknown_reward(request: Request, exc: UnknownServedReward) -> Response:
            names = [served.name for served in self.service.rewards.values()]
            return error_response(404, "UnknownReward", str(exc), rewards=names)

        @app.exception_handler(Overloaded)
        async def overloaded(request: Request, exc: Overloaded) -> Response:
            metrics.rejected.labels("overloaded").inc()
            return error_response(
                503, "Overloaded", str(exc), headers={"retry-after": str(self.config.retry_after)}
            )

        @app.exception_handler(HTTPException)
        async def http_error(request: Request, exc: HTTPException) -> Response:
            if exc.status_code == 400:
                metrics.rejected.labels("malformed").inc()
                return error_response(400, "MalformedRequest", _unparsable(exc.__cause__))
            return error_response(
                exc.status_code, type(exc).__name__, str(exc.detail), headers=exc.headers
            )

        @app.exception_handler(ClientDisconnected)
        async def disconnected(request: Request, exc: ClientDisconnected) -> Response:
            return Response(status_code=CLIENT_CLOSED_REQUEST)


def _validation_reason(exc: RequestValidationError) -> str:
    """One line per problem: where in the body (``body.samples.3``) and what."""
    parts = []
    for error in exc.errors():
        location = ".".join(str(part) for part in error.get("loc", ()))
        message = error.get("msg", "invalid")
        if error.get("type") == "missing" and tuple(error.get("loc", ())) == ("body",):
            message = "the body is empty; expected a JSON object"
        elif error.get("type") == "json_invalid":
            context = error.get("ctx") or {}
            message = f"malformed JSON: {context.get('error', message)}"
            location = (
                f"body (character {error['loc'][1]})" if len(error.get("loc", ())) > 1 else "body"
            )
        parts.append(f"{location}: {message}")
    return "; ".join(parts) or "invalid request"


def _unparsable(cause: BaseException | None) -> str:
    """Why a body could not be read as JSON at all (FastAPI says only "error parsing the body")."""
    if isinstance(cause, UnicodeDecodeError):
        return f"body: not valid UTF-8 (byte {cause.object[cause.start : cause.start + 1]!r} at position {cause.start}); send JSON in UTF-8"
    if isinstance(cause, RecursionError):
        return (
            "body: JSON nested too deeply to read; samples are objects of fields, a few levels deep"
        )
    if isinstance(cause, ValueError) and "digits" in str(cause):
        return f"body: a number too long to read ({cause}); send it as a string"
    detail = f": {type(cause).__name__}: {cause}" if cause is not None else ""
    return f"body: could not be read as JSON{detail}"[:500]


def create_app(config: ServeConfig, *, worker_id: str | None = None) -> ASGIApp:
    """The ASGI app serving ``config``'s rewards (imported and checked now), behind its token
    (``config.token``, else read from ``token_file`` or ``$REWARDKIT_SERVE_TOKEN``)."""
    return ServeApp(with_token(config.check()), worker_id=worker_id).build()
