"""The served app in this process (httpx's ASGI transport): routes, per-sample failures, the
fixed extras schema, request errors, the in-flight bound and metrics."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from serve_rewards import exact

from rewardkit.adapters import to_openrlhf
from rewardkit.serve import RewardSpec, ServeConfig, create_app

PROMPT = "<|im_start|>user\nWhat is 6*7?<|im_end|>\n<|im_start|>assistant\n"


def config(*targets: str, **settings: Any) -> ServeConfig:
    return ServeConfig(rewards=tuple(RewardSpec.parse(target) for target in targets), **settings)


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(config("serve_rewards:exact", "serve_rewards:exact_async", "length_reward", timeout=1.0))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://served") as session:
        yield session


async def test_failing_samples_first_are_typed_and_carry_the_same_keys(client: httpx.AsyncClient) -> None:
    samples = [
        {"final_response": "boom", "answer": "4"},
        {"final_response": "none", "answer": "4"},
        {"final_response": "hang", "answer": "4"},
        {"final_response": "4"},  # no answer while the others have one: this sample alone fails
        {"final_response": "4", "answer": "4"},
        {"final_response": "5", "answer": "4"},
    ]
    response = await client.post("/v1/rewards/exact/score", json={"samples": samples})
    assert response.status_code == 200
    body = response.json()
    assert body["reward"] == "exact"
    results = body["results"]
    assert [item["reward"] for item in results] == [0.0, 0.0, 0.0, 0.0, 1.0, 0.0]
    assert [item["failure"] and item["failure"]["tag"] for item in results] == [
        "reward_error",
        "bad_result",
        "timeout",
        "bad_sample",
        None,
        None,
    ]
    assert results[0]["failure"]["type"] == "ValueError"
    assert "failed on purpose" in results[0]["failure"]["message"]
    assert results[3]["failure"]["type"] == "MissingFieldError"
    assert "'answer'" in results[3]["failure"]["message"]
    keys = {tuple(item["extras"]) for item in results}
    assert keys == {("acc", "length")}, "every sample, failed or not, carries the reward's keys"
    assert results[4]["extras"] == {"acc": True, "length": 1}


async def test_json_api_gives_what_the_reward_gives_locally(client: httpx.AsyncClient) -> None:
    samples = [{"final_response": text, "answer": "42"} for text in ("42", " 42 ", "41", "")]
    response = await client.post("/v1/score", json={"samples": samples})  # the first reward: exact
    local = [exact(**sample) for sample in samples]
    assert [(item["reward"], item["extras"]) for item in response.json()["results"]] == [
        (result.reward, result.extras) for result in local
    ]


async def test_get_reward_is_openrlhfs_protocol_and_the_adapters_result(client: httpx.AsyncClient) -> None:
    queries = [PROMPT + "boom<|im_end|>", PROMPT + "42<|im_end|>", PROMPT + "41<|im_end|>"]
    payload = {"query": queries, "prompts": [PROMPT] * 3, "labels": ["42"] * 3}
    response = await client.post("/get_reward", json=payload)
    assert response.status_code == 200
    body = response.json()
    expected = to_openrlhf(exact, return_tensors=False, timeout=1.0)(queries, [PROMPT] * 3, ["42"] * 3)
    assert body == expected
    assert body["rewards"] == [0.0, 1.0, 0.0]
    assert body["scores"] == body["rewards"]
    assert body["extra_logs"] == {"acc": [0.0, 1.0, 0.0], "length": [0.0, 2.0, 2.0], "error": [1.0, 0.0, 0.0]}


async def test_several_rewards_by_name(client: httpx.AsyncClient) -> None:
    listing = (await client.get("/v1/rewards")).json()["rewards"]
    assert [item["name"] for item in listing] == ["exact", "exact_async", "length_reward"]
    assert listing[0]["required"] == ["final_response", "answer"]
    assert listing[1]["is_async"] is True
    one = await client.post("/v1/rewards/length_reward/score", json={"samples": [{"final_response": "x" * 50}]})
    assert one.json()["results"][0] == {"reward": 0.5, "extras": {"chars": 50}, "failure": None, "applicable": True}
    payload = {"query": [PROMPT + "abc"], "prompts": [PROMPT], "labels": [None]}
    named = await client.post("/get_reward/LENGTH_REWARD", json=payload)  # names are case-insensitive
    assert named.json()["extra_logs"]["chars"] == [3.0]
    assert (await client.get("/v1/rewards/exact_async")).json()["parameters"] == ["final_response", "answer"]


async def test_unknown_reward_is_404_naming_the_served_ones(client: httpx.AsyncClient) -> None:
    response = await client.post("/v1/rewards/exactt/score", json={"samples": [{}]})
    assert response.status_code == 404
    error = response.json()["error"]
    assert "'exactt'" in error["message"]
    assert error["rewards"] == ["exact", "exact_async", "length_reward"]


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b'{"samples": [{"final_response": "4",]}', "malformed JSON"),
        (b"", "body: the body is empty; expected a JSON object"),
        (b'{"samples": {"final_response": "4"}}', "body.samples: Input should be a valid list"),
        (b'{"samples": [1, 2]}', "body.samples.0: Input should be a valid dictionary"),
        (b'{"query": ["a"]}', "body.samples: Field required"),
    ],
)
async def test_malformed_requests_are_400_with_the_reason(client: httpx.AsyncClient, body: bytes, reason: str) -> None:
    response = await client.post("/v1/score", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert reason in response.json()["error"]["message"]


async def test_a_field_no_sample_has_is_a_request_error_with_a_suggestion(client: httpx.AsyncClient) -> None:
    response = await client.post("/v1/score", json={"samples": [{"final_response": "4", "answr": "4"}] * 2})
    assert response.status_code == 400
    message = response.json()["error"]["message"]
    assert "'answer'" in message
    assert "Did you mean 'answr'?" in message


async def test_openrlhf_lengths_must_agree(client: httpx.AsyncClient) -> None:
    response = await client.post("/get_reward", json={"query": ["a", "b"], "prompts": ["a"], "labels": ["1", "2"]})
    assert response.status_code == 400
    assert "expected one of each per sample" in response.json()["error"]["message"]


async def test_body_over_the_limit_is_413() -> None:
    app = create_app(config("serve_rewards:exact", max_body_size=1024))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://served") as session:
        big = {"samples": [{"final_response": "x" * 2000, "answer": "x"}]}
        response = await session.post("/v1/score", json=big)
        assert response.status_code == 413
        assert "1024 bytes" in response.json()["error"]["message"]
        small = await session.post("/v1/score", json={"samples": [{"final_response": "x", "answer": "x"}]})
        assert small.status_code == 200


async def test_a_saturated_worker_answers_503_with_retry_after() -> None:
    app = create_app(config("serve_rewards:exact_async", max_in_flight=2, retry_after=3, timeout=60))
    slow = {"samples": [{"final_response": "slow:1.5", "answer": "x"}] * 2}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://served") as session:
        first = asyncio.ensure_future(session.post("/v1/score", json=slow))

        async def in_flight() -> int:
            return int((await session.get("/health")).json()["in_flight_samples"])

        while await in_flight() < 2:  # noqa: ASYNC110 - polling the server's own view of its load
            await asyncio.sleep(0.01)
        refused = await session.post("/v1/score", json={"samples": [{"final_response": "x", "answer": "x"}]})
        assert refused.status_code == 503
        assert refused.headers["retry-after"] == "3"
        assert "limit 2" in refused.json()["error"]["message"]
        assert (await first).status_code == 200
        assert await in_flight() == 0
        again = await session.post("/v1/score", json={"samples": [{"final_response": "x", "answer": "x"}]})
        assert again.status_code == 200


async def test_a_request_larger_than_the_bound_runs_alone() -> None:
    app = create_app(config("serve_rewards:exact", max_in_flight=2))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://served") as session:
        response = await session.post("/v1/score", json={"samples": [{"final_response": "x", "answer": "x"}] * 5})
        assert response.status_code == 200
        assert len(response.json()["results"]) == 5


async def test_metrics_count_requests_samples_failures_and_latency(client: httpx.AsyncClient) -> None:
    samples = [{"final_response": "boom", "answer": "4"}, {"final_response": "4", "answer": "4"}]
    await client.post("/v1/rewards/exact/score", json={"samples": samples})
    await client.post("/v1/score", content=b"{", headers={"content-type": "application/json"})
    text = (await client.get("/metrics")).text
    assert 'rewardkit_serve_samples_total{reward="exact"} 2.0' in text
    assert 'rewardkit_serve_sample_failures_total{reward="exact",tag="reward_error"} 1.0' in text
    assert 'rewardkit_serve_requests_total{route="/v1/rewards/{name}/score",status="200"} 1.0' in text
    assert 'rewardkit_serve_requests_total{route="/v1/score",status="400"} 1.0' in text
    assert 'rewardkit_serve_rejected_requests_total{reason="malformed"} 1.0' in text
    assert 'rewardkit_serve_sample_duration_seconds_bucket{le="+Inf",reward="exact"} 2.0' in text
    assert "rewardkit_serve_request_duration_seconds_count" in text
    assert "rewardkit_serve_in_flight_samples 0.0" in text


async def test_health_and_openapi_document_the_routes(client: httpx.AsyncClient) -> None:
    health = (await client.get("/health")).json()
    assert health["status"] == "ok"
    assert health["rewards"] == ["exact", "exact_async", "length_reward"]
    schema = (await client.get("/openapi.json")).json()
    assert {"/get_reward", "/get_reward/{name}", "/v1/score", "/v1/rewards/{name}/score", "/health", "/metrics"} <= set(
        schema["paths"]
    )
    score = schema["paths"]["/v1/rewards/{name}/score"]["post"]
    assert {"200", "400", "404", "413", "503"} <= set(score["responses"])
    assert json.dumps(schema).count("extra_keys") >= 1
