"""Generating responses from an OpenAI-compatible chat endpoint (vLLM, llama.cpp, hosted APIs).

Standard library HTTP in a thread pool: no client dependency. Transport errors, 408/409/429
and 5xx are retried with exponential backoff (honouring `Retry-After`); auth and other client
errors are not. What still fails becomes an `ADAPTER_ERROR` case carrying the error text, and the
run goes on.
"""

from __future__ import annotations

import http.client
import json
import random
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

from rewardkit.evaluation.cases import DecidedCase, MathCase
from rewardkit.failures import FailureTag

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
    """Where and how to ask for completions; `backoff` is the first retry delay in seconds."""

    base_url: str
    model: str
    api_key: str | None = None
    max_tokens: int = DEFAULT_MAX_TOKENS
    temperature: float = 0.0
    request_timeout: float = 600.0
    retries: int = 4
    backoff: float = 1.0
    max_backoff: float = 60.0
    system_prompt: str = DEFAULT_SYSTEM_PROMPT

    @property
    def url(self) -> str:
        """The chat-completions URL (`base_url` is e.g. `http://localhost:8000/v1`)."""
        return self.base_url.rstrip("/") + "/chat/completions"


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
        if endpoint.api_key:
            headers["Authorization"] = f"Bearer {endpoint.api_key}"
        request = urllib.request.Request(endpoint.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=endpoint.request_timeout) as response:
                payload = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            text = exc.read()[:300].decode("utf-8", "replace").strip()
            message = f"HTTP {exc.code} {exc.reason} from {endpoint.url}" + (
                f": {text}" if text else ""
            )
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
            raise _Retryable(f"transport error talking to {endpoint.url}: {reason}") from None
        except json.JSONDecodeError as exc:
            raise _Retryable(f"invalid JSON from {endpoint.url}: {exc.msg}") from None
        try:
            choice = payload["choices"][0]
            text = choice["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise AdapterError(
                f"unexpected response shape from {endpoint.url}: {json.dumps(payload)[:300]}"
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
