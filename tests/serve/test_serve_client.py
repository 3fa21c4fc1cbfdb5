"""``RemoteReward``: a served reward used where a local one is (calculate_rewards, the adapters,
a process pool), its batching of calls, its retries, and its per-sample results."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import ServerProcess

from rewardkit import calculate_rewards
from rewardkit.adapters import to_openrlhf, to_trl, to_verl
from rewardkit.runtime.run.context import Context
from rewardkit.serve import RemoteReward, RemoteRewardError, RemoteSampleError

PROMPT = "<|im_start|>user\nWhat is 6*7?<|im_end|>\n<|im_start|>assistant\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One server for this module's tests: exact (the default), exact_async and length_reward."""
    workdir = tmp_path_factory.mktemp("client-server")
    process = ServerProcess(
        ["serve_rewards:exact", "serve_rewards:exact_async", "serve_rewards:length_reward", "--timeout", "2"],
        workdir=workdir,
    )
    try:
        yield process.wait_ready()
    finally:
        process.stop()


def score_requests(server: ServerProcess) -> float:
    """How many JSON API requests the server has answered (its own count)."""
    text = httpx.get(server.url + "/metrics", timeout=10).text
    found = re.search(r'rewardkit_serve_requests_total\{route="/v1/rewards/\{name\}/score",status="200"\} (\S+)', text)
    return float(found.group(1)) if found else 0.0


SAMPLES = [
    {"final_response": "boom", "answer": "4"},
    {"final_response": "hang", "answer": "4"},
    *({"final_response": str(n), "answer": "4"} for n in range(62)),
]


def test_calculate_rewards_keeps_every_samples_result_and_sends_one_request(server: ServerProcess) -> None:
    remote = RemoteReward(server.url, "exact")
    before = score_requests(server)
    results = asyncio.run(calculate_rewards(remote, SAMPLES, on_error="record"))
    assert score_requests(server) - before == 1, "64 calls of one loop turn go out as one request"
    assert results[0].reward == 0.0
    assert results[0]["error"].startswith("RemoteSampleError: remote reward 'exact' failed on the server (reward_error)")
    assert "(timeout)" in results[1]["error"]
    assert [result.reward for result in results[2:]] == [1.0 if n == 4 else 0.0 for n in range(62)]
    assert results[6].extras == {"acc": True, "length": 1}


def test_score_keeps_order_and_sends_max_batch_samples_per_request(server: ServerProcess) -> None:
    remote = RemoteReward(server.url, "exact_async", max_batch=3)
    samples = [{"final_response": str(n), "answer": "7", "unused": n} for n in range(10)]
    before = score_requests(server)
    outcomes = asyncio.run(remote.score(samples))
    assert score_requests(server) - before == 4
    assert [outcome.reward for outcome in outcomes] == [1.0 if n == 7 else 0.0 for n in range(10)]
    assert all(outcome.ok for outcome in outcomes)


def test_the_default_reward_is_the_servers_first(server: ServerProcess) -> None:
    remote = RemoteReward(server.url)
    info = asyncio.run(remote.describe())
    assert info["name"] == "exact"
    assert remote.name == "exact"
    assert info["required"] == ["final_response", "answer"]


def test_the_adapters_take_a_remote_reward(server: ServerProcess) -> None:
    remote = RemoteReward(server.url, "exact")
    verl = to_verl(remote)

    async def verl_reward_loop() -> list[Any]:
        return list(
            await asyncio.gather(
                verl(data_source="d", solution_str="boom", ground_truth="4", extra_info={}),
                verl(data_source="d", solution_str="4", ground_truth="4", extra_info={}),
            )
        )

    scores = asyncio.run(verl_reward_loop())
    assert [score["score"] for score in scores] == [0.0, 1.0]
    assert "RemoteSampleError" in scores[0]["error"]
    assert list(scores[0]) == list(scores[1]) == ["score", "acc", "length", "error"]  # the failure first, same keys
    openrlhf = to_openrlhf(remote, return_tensors=False)
    answer = openrlhf([PROMPT + "boom<|im_end|>", PROMPT + "42<|im_end|>"], [PROMPT] * 2, ["42", "42"])
    assert answer["rewards"] == [0.0, 1.0]
    assert answer["extra_logs"]["error"] == [1.0, 0.0]
    trl = to_trl(remote)
    rewards = asyncio.run(trl(prompts=["q", "q"], completions=["4", "5"], answer=["4", "4"]))
    assert rewards == [1.0, 0.0]


def test_an_adapter_of_a_remote_reward_has_the_servers_schema(server: ServerProcess) -> None:
    adapter = to_openrlhf(RemoteReward(server.url, "exact"), return_tensors=False)
    assert adapter.schema.keys == ("acc", "length")
    assert dict(adapter.schema.kinds) == {"acc": "number", "length": "number"}
    served = httpx.get(server.url + "/v1/rewards/exact", timeout=10).json()
    assert served["extra_keys"] == ["acc", "length"]
    assert served["schema_source"] == "returns"


def test_without_the_server_the_schema_must_be_declared() -> None:
    down = RemoteReward("http://127.0.0.1:9", "exact", retries=0)
    with pytest.raises(RemoteRewardError, match=r"did not answer .*pass extra_keys=\[...\] to RemoteReward"):
        to_verl(down)
    declared = to_verl(RemoteReward("http://127.0.0.1:9", "exact", extra_keys=["acc"]))
    assert declared.schema.keys == ("acc",)


def _score_in_another_process(adapter: Any) -> Any:
    return adapter([PROMPT + "42"], [PROMPT], ["42"])


def test_a_remote_reward_travels_to_worker_processes_by_value(server: ServerProcess) -> None:
    adapter = to_openrlhf(RemoteReward(server.url, "exact"), return_tensors=False)
    with concurrent.futures.ProcessPoolExecutor(1) as pool:
        answer = pool.submit(_score_in_another_process, adapter).result(timeout=300)
    assert answer["rewards"] == [1.0]


class Scripted:
    """An httpx transport that answers from a script and records what it was sent."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.sent: list[Any] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(json.loads(request.content) if request.content else None)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        return answer


INFO = {"name": "exact", "parameters": ["final_response", "answer"], "required": ["final_response", "answer"]}


def ok(count: int = 1) -> httpx.Response:
    results = [{"reward": 1.0, "extras": {"acc": True}, "failure": None}] * count
    return httpx.Response(200, json={"reward": "exact", "extra_keys": ["acc"], "results": results})


def test_transport_errors_and_busy_answers_are_retried() -> None:
    script = Scripted(
        httpx.Response(200, json=INFO),
        httpx.ConnectError("refused"),
        httpx.Response(503, headers={"retry-after": "0"}, json={"error": {"message": "busy"}}),
        httpx.Response(502, text="bad gateway"),
        ok(),
    )
    remote = RemoteReward("http://rm", "exact", backoff=0.001, transport=httpx.MockTransport(script))
    (outcome,) = asyncio.run(remote.score([{"final_response": "4", "answer": "4"}]))
    assert outcome.reward == 1.0
    assert len(script.sent) == 5


def test_a_refused_request_is_raised_at_once_with_the_servers_reason() -> None:
    refusal = httpx.Response(413, json={"error": {"type": "PayloadTooLarge", "message": "request body of 9 bytes is over"}})
    script = Scripted(httpx.Response(200, json=INFO), refusal)
    remote = RemoteReward("http://rm", "exact", transport=httpx.MockTransport(script))
    with pytest.raises(RemoteRewardError, match="413: request body of 9 bytes is over") as caught:
        asyncio.run(remote.score([{"final_response": "4", "answer": "4"}]))
    assert caught.value.status == 413
    assert len(script.sent) == 2


def test_after_the_retries_every_waiting_sample_records_the_failure() -> None:
    script = Scripted(httpx.Response(200, json=INFO), httpx.Response(503, headers={"retry-after": "0"}))
    remote = RemoteReward("http://rm", "exact", retries=2, transport=httpx.MockTransport(script))
    samples = [{"final_response": "4", "answer": "4"}] * 3
    results = asyncio.run(calculate_rewards(remote, samples, on_error="record"))
    assert len(script.sent) == 1 + 3  # the description, then one batched request sent three times
    assert all("failed 3 times; last: HTTP 503" in result["error"] for result in results)


def test_only_the_rewards_own_fields_are_sent() -> None:
    script = Scripted(httpx.Response(200, json=INFO), ok(1))
    remote = RemoteReward("http://rm", "exact", transport=httpx.MockTransport(script))
    context = Context("rollout-1")
    result = asyncio.run(remote(final_response="4", answer="4", context=context, chain_id="c", id="r1"))
    assert result.reward == 1.0
    assert script.sent[1] == {"samples": [{"final_response": "4", "answer": "4"}]}


def test_a_failed_sample_raises_remote_sample_error_with_its_tag() -> None:
    failed = {"reward": 0.0, "extras": {"acc": None}, "failure": {"tag": "timeout", "type": "TimeoutError", "message": "slow"}}
    script = Scripted(httpx.Response(200, json=INFO), httpx.Response(200, json={"results": [failed]}))
    remote = RemoteReward("http://rm", "exact", transport=httpx.MockTransport(script))
    with pytest.raises(RemoteSampleError, match=r"\(timeout\): TimeoutError: slow") as caught:
        asyncio.run(remote(final_response="4", answer="4"))
    assert caught.value.failure.tag == "timeout"


def test_pickling_drops_the_connections(tmp_path: Path) -> None:
    import pickle

    remote = RemoteReward("http://rm:8000/", "exact", retries=1)
    copy = pickle.loads(pickle.dumps(remote))
    assert (copy.url, copy.name, copy.retries) == ("http://rm:8000", "exact", 1)
