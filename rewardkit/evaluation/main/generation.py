"""Generating responses from an OpenAI-compatible chat endpoint (vLLM, llama.cpp, hosted APIs).

Standard library HTTP in a thread pool: no client dependency. Transport errors, 408/409/429
and 5xx are retried with exponential backoff (honouring `Retry-After`); auth and other client
errors are not. What still fails becomes an `ADAPTER_ERROR` case carrying the error text, and the
run goes on.
"""

from __future__ import annotations

import base64
import functools
import json
import random
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, fields
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from rewardkit.evaluation.inputs.cases import DecidedCase, MathCase
from rewardkit.evaluation.main.redaction import Redactor, redact_url, url_secrets
from rewardkit.runtime.define.failures import FailureTag

DEFAULT_SYSTEM_PROMPT = (
    "Solve the problem. Reason step by step, then give the final answer in \\boxed{}, "
    "as the last thing you write, with nothing but the answer inside the box."
)
DEFAULT_MAX_TOKENS = 8192
"""Generous on purpose: truncated reasoning is the usual cause of NO_ANSWER."""
RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class AdapterError(Exception):
    """The endpoint did not produce a completion after retries; the message says why."""


class ModelSpecError(ValueError):
    """`--model` is not of the form `openai:MODEL`."""


def parse_model_spec(spec: str) -> str:
    """`openai:MODEL` -> `MODEL`; the provider prefix names the protocol spoken."""
    provider, sep, model = spec.partition(":")
    if not sep or provider != "openai" or not model:
        raise ModelSpecError(
            f"--model {spec!r}: expected openai:MODEL (an OpenAI-compatible chat endpoint)"
        )
    return model


@dataclass(frozen=True)
class ChatEndpoint:
    """Where and how to ask for completions; `backoff` is the first retry delay in seconds.

    `base_url` may carry credentials: `https://user:secret@host/v1` is sent as HTTP Basic
    authentication (unless `api_key` gives a Bearer token), and a query (`?api-key=...`) is kept
    on every request. Neither, nor the key, is ever written out (`redactor`)."""

    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    max_tokens: int = DEFAULT_MAX_TOKENS
    temperature: float = 0.0
    request_timeout: float = 600.0
    retries: int = 4
    backoff: float = 1.0
    max_backoff: float = 60.0
    system_prompt: str = DEFAULT_SYSTEM_PROMPT

    @property
    def url(self) -> str:
        """The chat-completions URL to request: `/chat/completions` appended to the base URL's
        path (before its query), without user information (sent as a header instead)."""
        parts = urlsplit(self.base_url)
        host = parts.netloc.rsplit("@", 1)[-1]
        path = parts.path.rstrip("/") + "/chat/completions"
        return urlunsplit((parts.scheme, host, path, parts.query, ""))

    @property
    def display_url(self) -> str:
        """`url` with secret query values redacted: the form every message shows."""
        return redact_url(self.url)

    @property
    def authorization(self) -> str | None:
        """The `Authorization` header: Bearer `api_key`, else Basic from the URL's user info."""
        if self.api_key:
            return f"Bearer {self.api_key}"
        parts = urlsplit(self.base_url)
        if parts.username is None and parts.password is None:
            return None
        credentials = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
        return "Basic " + base64.b64encode(credentials.encode()).decode()

    @functools.cached_property
    def redactor(self) -> Redactor:
        """Removes this endpoint's credentials from any text (error bodies echo requests)."""
        return Redactor([self.api_key, *url_secrets(self.base_url)])

    def __repr__(self) -> str:
        settings = ", ".join(f"{name}={value!r}" for name, value in self.public_settings().items())
        return f"ChatEndpoint({settings})"

    def verdict_settings(self) -> dict[str, Any]:
        """The settings that decide which responses are generated (a resumed run must match)."""
        return {
            "model": self.model,
            "base_url": redact_url(self.base_url),
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "system_prompt": self.system_prompt,
        }

    def public_settings(self) -> dict[str, Any]:
        """Every setting but the key, the URL redacted: what reports show."""
        settings = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "api_key"}
        settings["base_url"] = redact_url(self.base_url)
        return settings


@dataclass(frozen=True)
class Completion:
    """One completion: its text, why generation stopped (`stop`, `length`), and attempts used."""

    text: str
    finish_reason: str | None
    attempts: int


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ChatClient:
    """Blocking, thread-safe client for one endpoint (`complete` is called from worker threads)."""

    def __init__(self, endpoint: ChatEndpoint) -> None:
        self.endpoint = endpoint
        self._random = random.Random()
        self._lock = threading.Lock()

    def _request(self, question: str) -> Completion:
        try:
            return self._send(question)
        except (_Retryable, AdapterError) as error:  # error bodies may echo the credentials
            error.args = (self.endpoint.redactor(str(error)),)
            raise

    def _send(self, question: str) -> Completion:
        # (imported here: urllib.request and http.client cost every `rewardkit eval` run
        # ~25 ms of start-up, and only generation needs them)
        import http.client
        import socket
        import urllib.error
        import urllib.request

        endpoint = self.endpoint
        body = json.dumps(
            {
                "model": endpoint.model,
                "messages": [
                    {"role": "system", "content": endpoint.system_prompt},
                    {"role": "user", "content": question},
                ],
                "max_tokens": endpoint.max_tokens,
                "temperature": endpoint.temperature,
            }
        ).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        authorization = endpoint.authorization
        if authorization:
            headers["Authorization"] = authorization
        request = urllib.request.Request(endpoint.url, data=body, headers=headers, method="POST")
        where = endpoint.display_url
        try:
            with urllib.request.urlopen(request, timeout=endpoint.request_timeout) as response:
                payload = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            # (redacted before it is cut short: a cut secret would no longer match)
            body = exc.read(1 << 16).decode("utf-8", "replace")
            text = endpoint.redactor(body).strip()[:300]
            message = f"HTTP {exc.code} {exc.reason} from {where}" + (f": {text}" if text else "")
            if exc.code in RETRYABLE_STATUS or exc.code >= 500:
                raise _Retryable(message, _retry_after(exc.headers.get("Retry-After"))) from None
            raise AdapterError(message) from None
        except (
            urllib.error.URLError,
            TimeoutError,
            ConnectionError,
            http.client.HTTPException,
        ) as exc:
            reason = getattr(exc, "reason", None) or exc
            if isinstance(reason, (socket.timeout, TimeoutError)):
                reason = f"no response within {endpoint.request_timeout:g} s"
            raise _Retryable(f"transport error talking to {where}: {reason}") from None
        except json.JSONDecodeError as exc:
            raise _Retryable(f"invalid JSON from {where}: {exc.msg}") from None
        try:
            choice = payload["choices"][0]
            text = choice["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise AdapterError(
                f"unexpected response shape from {where}: {json.dumps(payload)[:300]}"
            ) from None
        return Completion(text=text or "", finish_reason=choice.get("finish_reason"), attempts=1)

    def complete(self, question: str) -> Completion:
        """Ask for one completion, retrying transient failures; raise `AdapterError` when out of retries."""
        endpoint = self.endpoint
        for attempt in range(1, endpoint.retries + 2):
            try:
                completion = self._request(question)
                return Completion(completion.text, completion.finish_reason, attempt)
            except _Retryable as exc:
                if attempt > endpoint.retries:
                    raise AdapterError(f"{exc} (gave up after {attempt} attempts)") from None
                delay = min(endpoint.max_backoff, endpoint.backoff * 2 ** (attempt - 1))
                with self._lock:
                    delay *= 0.5 + self._random.random() / 2
                if exc.retry_after is not None:
                    delay = min(endpoint.max_backoff, max(delay, exc.retry_after))
                time.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover


def _retry_after(value: str | None) -> float | None:
    """Seconds from a `Retry-After` header (the HTTP-date form is ignored)."""
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def generate_cases(
    problems: Iterable[MathCase | DecidedCase], client: ChatClient, *, concurrency: int = 8
) -> Iterator[MathCase | DecidedCase]:
    """Yield each problem with its generated response, in completion order, `concurrency` at a time.

    A problem whose request fails after retries comes back as an `ADAPTER_ERROR` `DecidedCase`.
    """

    def ask(problem: MathCase) -> MathCase | DecidedCase:
        try:
            completion = client.complete(problem.question or "")
        except AdapterError as exc:
            return DecidedCase(
                id=problem.id,
                tag=FailureTag.ADAPTER_ERROR,
                error=str(exc),
                line=problem.line,
                gold=problem.gold,
            )
        return MathCase(
            id=problem.id,
            response=completion.text,
            gold=problem.gold,
            line=problem.line,
            question=problem.question,
        )

    with ThreadPoolExecutor(
        max_workers=max(1, concurrency), thread_name_prefix="rewardkit-generate"
    ) as pool:
        pending: set[Future[MathCase | DecidedCase]] = set()
        for problem in problems:
            if isinstance(problem, DecidedCase):
                yield problem
                continue
            pending.add(pool.submit(ask, problem))
            if len(pending) >= 2 * concurrency:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    yield future.result()
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield future.result()
