"""`rewardkit eval math --reward-url URL`: grade each case with a served reward.

``RemoteGrader`` has ``rewardkit.math.grade``'s signature, so the eval runner uses it as any
``--grader``: in its worker processes (each with its own connection). The case's response is
the reward's ``final_response`` and its gold the ``answer``. A served math reward's extras
(``correct``, ``tag``, ``reason``: ``math_reward``'s) decide the outcome; for another reward,
``correct`` is a reward above 0. Requests go through ``RemoteReward`` (its retries, its token).

Our side's failures are never the model's: ``connect`` reaches the server before a run (its
``/health``, then the reward's description); a sample the server scored as failed, or a server
that does not answer after the retries, raises, and the runner records a ``HARNESS_ERROR``
naming it. The HTTP time is not the case's grading budget (``harness_seconds``). Once the
server did not answer, the process fails the next cases at once (``RewardServerDown``) and
asks ``/health`` again at most every ``probe_interval`` seconds: a dead server costs a run of
3,000 cases a second per worker, not 2 s per case.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Coroutine
from typing import Any
from urllib.parse import urlsplit

import httpx

from rewardkit.math.grading import CompareOptions
from rewardkit.math.verdict import MathVerdict
from rewardkit.runtime.define.failures import FailureTag
from rewardkit.serve.auth import TOKEN_ENV
from rewardkit.serve.client import RETRY_STATUSES, RemoteReward, RemoteRewardError
from rewardkit.serve.outcomes import RemoteSampleError, SampleOutcome

_DOWN_SERVERS: dict[str, tuple[str, float]] = {}
"""In this process: the reward servers found not answering (base URL -> why, when last asked).
Per process, not per grader object: an eval worker gets a fresh copy of its grader with each
task, and every one of them must know the server is down."""


class RewardServerDown(RuntimeError):
    """The reward server did not answer (refused the connection, timed out, 5xx after the
    retries): the case was not graded, a ``HARNESS_ERROR`` with reason ``reward_server``."""

    eval_reason = "reward_server"
    """The ``detail.reason`` the eval runner gives a case that raised this."""


class RewardServerRefused(RuntimeError):
    """The reward server answered but refuses what we ask (no such reward, a missing or wrong
    token): a usage error, found before the run."""


def split_reward_url(url: str) -> tuple[str, str | None]:
    """``http://host:8000`` -> (that, ``None``: the server's first reward);
    ``http://host:8000/v1/rewards/NAME`` -> (``http://host:8000``, ``NAME``)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(
            f"not an http(s) URL: {url!r} (e.g. http://host:8000 or http://host:8000/v1/rewards/math_reward)"
        )
    path = parts.path.rstrip("/")
    head, marker, name = path.rpartition("/v1/rewards/")
    base = f"{parts.scheme}://{parts.netloc}{head if marker else path}"
    return base, (name or None) if marker else None


class RemoteGrader:
    """A grader (``rewardkit.math.grade``'s signature) backed by `rewardkit serve` at ``url``.
    ``token``: the server's bearer token (None: ``RemoteReward`` reads ``REWARDKIT_SERVE_TOKEN``)."""

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        request_timeout: float = 60.0,
        retries: int = 2,
        backoff: float = 0.25,
        probe_interval: float = 5.0,
    ) -> None:
        self.url = url
        self.base, self.reward_name = split_reward_url(url)
        self.token = token
        self.probe_interval = probe_interval
        self._remote = RemoteReward(
            self.base,
            self.reward_name,
            timeout=request_timeout,
            retries=retries,
            backoff=backoff,
            max_batch=1,
            token=token,
        )
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_pid = 0

    @property
    def harness_seconds(self) -> float:
        """The longest a call may take on our side (every attempt timing out, the backoffs, a
        health probe): the runner's kill deadline adds it to the case's budget, so HTTP time
        is never charged to the model."""
        return self._remote.longest_call_seconds + 5.0

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_loop": None, "_loop_pid": 0}  # each process runs its own loop

    def __repr__(self) -> str:  # how the eval report and the metadata name the grader
        return f"RemoteGrader({self.url!r})"

    @property
    def served_name(self) -> str | None:
        """The served reward's name (known once ``connect`` asked, or named in the URL)."""
        return self.reward_name or self._remote.reward_name

    def describe(self) -> str:
        """One line for the eval header: which served reward grades, and where."""
        name = self.served_name
        return (
            f"served reward {name!r} at {self.base}"
            if name
            else f"the first reward served at {self.base}"
        )

    # -- before the run ------------------------------------------------------------------------

    def connect(self) -> str:
        """Reach the server before a run: ``GET /health``, then the reward's description (its
        name, checking the token). ``RewardServerDown`` when it does not answer,
        ``RewardServerRefused`` when it refuses; returns the served reward's name."""
        problem = self._health_problem(timeout=10.0)
        if problem is not None:
            raise RewardServerDown(f"the reward server at {self.base} does not answer: {problem}")
        try:
            info = self._run(self._remote.describe())
        except RemoteRewardError as exc:
            if exc.status is None or exc.status in RETRY_STATUSES:
                raise RewardServerDown(
                    f"the reward server at {self.base} does not answer: {exc}"
                ) from None
            raise RewardServerRefused(
                f"the reward server at {self.base} refused: {exc}{self._refusal_hint(exc)}"
            ) from None
        return str(info["name"])

    def _refusal_hint(self, exc: RemoteRewardError) -> str:
        if exc.status in (401, 403):
            sent = self.token is not None or bool(os.environ.get(TOKEN_ENV, "").strip())
            source = "a token it does not accept" if sent else f"no token (${TOKEN_ENV} is not set)"
            return f" (sent {source}; give the server's token with --reward-token-file or ${TOKEN_ENV})"
        return ""  # (a 404 names the served rewards itself)

    def _health_problem(self, *, timeout: float) -> str | None:
        """Why ``GET /health`` failed (None: it answered 200)."""
        try:
            response = httpx.get(self.base + "/health", timeout=timeout)
        except httpx.HTTPError as exc:
            return f"GET /health: {type(exc).__name__}: {exc}"
        if response.status_code != 200:
            return f"GET /health: HTTP {response.status_code}"
        return None

    # -- one case ------------------------------------------------------------------------------

    def _run(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        """Run ``coroutine`` on this process's own event loop (a daemon thread: the caller may
        have a loop running; the loop's connections are reused across cases)."""
        if self._loop is None or self._loop_pid != os.getpid():
            self._loop, self._loop_pid = asyncio.new_event_loop(), os.getpid()
            threading.Thread(
                target=self._loop.run_forever, name="rewardkit-remote-grader", daemon=True
            ).start()
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def _check_alive(self) -> None:
        """Fail at once while the server is known not to answer; ask ``/health`` again at most
        every ``probe_interval`` seconds."""
        down = _DOWN_SERVERS.get(self.base)
        if down is None:
            return
        why, probed_at = down
        now = time.monotonic()
        if now - probed_at >= self.probe_interval:
            _DOWN_SERVERS[self.base] = (why, now)
            if self._health_problem(timeout=5.0) is None:
                _DOWN_SERVERS.pop(self.base, None)
                return
        raise RewardServerDown(
            f"the reward server at {self.base} does not answer ({why}); "
            f"not sent: it is asked again every {self.probe_interval:g} s"
        )

    def __call__(self, response: str, gold: str, **grade_options: object) -> MathVerdict:
        """Grade as the served reward does: ``grade``'s options (``policy``, ``timeout``, ...)
        are the server's business, taken and not sent; any other keyword is a ``TypeError``."""
        unknown = sorted(set(grade_options) - _GRADE_OPTIONS)
        if unknown:
            raise TypeError(f"RemoteGrader() got an unexpected keyword argument {unknown[0]!r}")
        self._check_alive()
        try:
            (outcome,) = self._run(
                self._remote.score([{"final_response": response, "answer": gold}])
            )
        except RemoteRewardError as exc:
            if exc.status is None or exc.status in RETRY_STATUSES:
                _DOWN_SERVERS[self.base] = (str(exc), time.monotonic())
                raise RewardServerDown(
                    f"the reward server at {self.base} did not answer: {exc}"
                ) from None
            raise
        if outcome.failure is not None:
            raise RemoteSampleError(self.served_name or "remote", outcome.failure)
        return verdict_of(outcome, gold)


_GRADE_OPTIONS = frozenset({"extract", *CompareOptions.__annotations__})


def verdict_of(outcome: SampleOutcome, gold: str) -> MathVerdict:
    """The eval runner's verdict for a served sample's outcome."""
    extras = outcome.extras
    correct = (
        bool(extras["correct"]) if isinstance(extras.get("correct"), bool) else outcome.reward > 0
    )
    tag: FailureTag | None = None
    if not correct:
        served_tag = extras.get("tag")
        tag = (
            FailureTag(served_tag)
            if served_tag in FailureTag._value2member_map_
            else FailureTag.WRONG_ANSWER
        )
    reason = str(extras.get("reason") or ("served" if correct else "served_reward"))
    detail = {"normalized_answer": "", "normalized_gold": gold, "reward": repr(outcome.reward)}
    return MathVerdict(correct, tag, None, gold, reason, detail)
