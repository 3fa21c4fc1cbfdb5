"""`rewardkit eval math --reward-url URL`: grade each case with a served reward.

``RemoteGrader`` has ``rewardkit.math.grade``'s signature, so the eval runner uses it as any
``--grader``: in its worker processes (each with its own connection), under its per-case budget.
The case's response is the reward's ``final_response`` and its gold the ``answer``. A served
math reward's extras (``correct``, ``tag``, ``reason``: ``math_reward``'s) decide the outcome;
for another reward, ``correct`` is a reward above 0. A sample the server scored as failed, or a
server that does not answer after the retries, raises: the runner records a ``HARNESS_ERROR``
naming it, which never counts against the model.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlsplit

import httpx

from rewardkit.failures import FailureTag
from rewardkit.math.verdict import MathVerdict
from rewardkit.serve.client import RETRY_STATUSES, RemoteRewardError, error_reason, retry_delay
from rewardkit.serve.outcomes import RemoteSampleError, SampleOutcome


def split_reward_url(url: str) -> tuple[str, str | None]:
    """``http://host:8000`` -> (that, ``None``: the server's first reward);
    ``http://host:8000/v1/rewards/NAME`` -> (``http://host:8000``, ``NAME``)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"not an http(s) URL: {url!r} (e.g. http://host:8000 or http://host:8000/v1/rewards/math_reward)")
    path = parts.path.rstrip("/")
    head, marker, name = path.rpartition("/v1/rewards/")
    base = f"{parts.scheme}://{parts.netloc}{head if marker else path}"
    return base, (name or None) if marker else None


class RemoteGrader:
    """A grader (``rewardkit.math.grade``'s signature) backed by `rewardkit serve` at ``url``."""

    def __init__(self, url: str, *, request_timeout: float = 120.0, retries: int = 3) -> None:
        self.url = url
        self.base, self.reward_name = split_reward_url(url)
        self.request_timeout = request_timeout
        self.retries = retries
        self._client: httpx.Client | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_client": None}  # each worker process opens its own

    def __repr__(self) -> str:  # how the eval report names the grader
        return f"RemoteGrader({self.url!r})"

    def _post(self, samples: list[dict[str, Any]]) -> dict[str, Any]:
        if self._client is None:
            self._client = httpx.Client(timeout=self.request_timeout)
        path = "/v1/score" if self.reward_name is None else f"/v1/rewards/{self.reward_name}/score"
        response: httpx.Response | None = None
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(retry_delay(attempt - 1, 0.5, response))
            response = None
            try:
                response = self._client.post(self.base + path, json={"samples": samples})
            except httpx.TransportError as exc:
                last = f"{type(exc).__name__}: {exc}"
                continue
            if response.status_code < 400:
                return dict(response.json())
            last = f"HTTP {response.status_code}: {error_reason(response)}"
            if response.status_code not in RETRY_STATUSES:
                break
        raise RemoteRewardError(f"reward server {self.url}: {last}")

    def __call__(
        self,
        response: str,
        gold: str,
        *,
        policy: str = "lenient",
        extract: str = "boxed",
        timeout: float = 1.0,
        sandbox: bool = True,
    ) -> MathVerdict:
        answer = self._post([{"final_response": response, "answer": gold}])
        outcome = SampleOutcome.from_json(answer["results"][0])
        if outcome.failure is not None:
            raise RemoteSampleError(str(answer.get("reward", self.reward_name)), outcome.failure)
        return verdict_of(outcome, gold)


def verdict_of(outcome: SampleOutcome, gold: str) -> MathVerdict:
    """The eval runner's verdict for a served sample's outcome."""
    extras = outcome.extras
    correct = bool(extras["correct"]) if isinstance(extras.get("correct"), bool) else outcome.reward > 0
    tag: FailureTag | None = None
    if not correct:
        served_tag = extras.get("tag")
        tag = FailureTag(served_tag) if served_tag in FailureTag._value2member_map_ else FailureTag.WRONG_ANSWER
    reason = str(extras.get("reason") or ("served" if correct else "served_reward"))
    detail = {"normalized_answer": "", "normalized_gold": gold, "reward": repr(outcome.reward)}
    return MathVerdict(correct, tag, None, gold, reason, detail)
