"""Generation against a real chat-completions server on loopback: retries, auth, rate limits,
slow and hanging responses, truncation. Failures become ADAPTER_ERROR cases; the run goes on."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from eval_helpers import decoded_report_data, read_jsonl, write_jsonl

from rewardkit.evaluation import AdapterError
from rewardkit.evaluation.cli import main

API_KEY = "sk-loopback-test"


class ChatServer(ThreadingHTTPServer):
    """An OpenAI-compatible `/v1/chat/completions` whose behaviour is chosen by the question."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), ChatHandler)
        self.attempts: Counter[str] = Counter()
        self.requests: list[dict] = []
        self.lock = threading.Lock()

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # the client gave up on a hanging response: writing to it fails, as intended

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class ChatHandler(BaseHTTPRequestHandler):
    server: ChatServer

    def log_message(self, *args: object) -> None:
        pass

    def send_json(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def completion(self, content: str, finish_reason: str = "stop") -> None:
        self.send_json(
            200,
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": "loopback-model",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": finish_reason,
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30},
            },
        )

    def do_POST(self) -> None:
        if urlsplit(self.path).path != "/v1/chat/completions":
            self.send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        question = request["messages"][-1]["content"]
        with self.server.lock:
            self.server.requests.append(
                {"body": request, "auth": self.headers.get("Authorization"), "path": self.path}
            )
            self.server.attempts[question] += 1
            attempt = self.server.attempts[question]
        if question.startswith("echo"):  # an endpoint whose errors echo the whole request
            echoed = f"POST {self.path}\n{self.headers}"
            self.send_json(401 if question == "echo401" else 500, {"error": {"message": echoed}})
            return
        if self.headers.get("Authorization") != f"Bearer {API_KEY}":
            self.send_json(
                401,
                {
                    "error": {
                        "message": "Incorrect API key provided",
                        "type": "invalid_request_error",
                    }
                },
            )
            return
        kind, _, answer = question.partition(":")
        solution = f"Let me think step by step. The result is {answer}.\n\n$\\boxed{{{answer}}}$"
        if kind == "flaky500" and attempt == 1:
            self.send_json(500, {"error": {"message": "internal error"}})
        elif kind == "ratelimit" and attempt == 1:
            self.send_json(429, {"error": {"message": "Rate limit reached"}}, {"Retry-After": "0"})
        elif kind == "down500":
            self.send_json(503, {"error": {"message": "model is overloaded"}})
        elif kind == "forbidden":
            self.send_json(403, {"error": {"message": "this key cannot use the model"}})
        elif kind == "hang":
            time.sleep(3)
            self.completion(solution)
        elif kind == "slow":
            time.sleep(0.2)
            self.completion(solution)
        elif kind == "truncate":
            self.completion("Let me think step by step. First we expand the product and", "length")
        else:
            self.completion(solution)


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    server = ChatServer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def problems(tmp_path: Path) -> Path:
    rows = [
        {"id": "ok", "question": "ok:7", "answer": "7"},
        {"id": "wrong", "question": "ok:8", "answer": "7"},
        {"id": "flaky", "question": "flaky500:12", "answer": "12"},
        {"id": "ratelimit", "question": "ratelimit:3", "answer": "3"},
        {"id": "slow", "question": r"slow:\frac{1}{2}", "answer": "0.5"},
        {"id": "hang", "question": "hang:1", "answer": "1"},
        {"id": "down", "question": "down500:1", "answer": "1"},
        {"id": "forbidden", "question": "forbidden:1", "answer": "1"},
        {"id": "truncated", "question": "truncate:1", "answer": "1"},
    ]
    return write_jsonl(tmp_path / "problems.jsonl", rows)


def generate(chat_server: ChatServer, tmp_path: Path, *extra: str) -> int:
    return main(
        [
            "math",
            str(problems(tmp_path)),
            "--model",
            "openai:loopback-model",
            "--base-url",
            chat_server.base_url,
            "--workers",
            "0",
            "--retries",
            "1",
            "--retry-backoff",
            "0.01",
            "--request-timeout",
            "1",
            "--concurrency",
            "4",
            "--output",
            str(tmp_path / "out.jsonl"),
            "--report",
            str(tmp_path / "report.json"),
            *extra,
        ]
    )


def test_generation_grades_answers_and_turns_endpoint_failures_into_adapter_errors(
    chat_server: ChatServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("LOOPBACK_KEY", API_KEY)
    assert (
        generate(chat_server, tmp_path, "--api-key-env", "LOOPBACK_KEY", "--max-tokens", "1234")
        == 0
    )
    records = {r["id"]: r for r in read_jsonl(tmp_path / "out.jsonl")}
    outcome = {case_id: r["tag"] or "PASS" for case_id, r in records.items()}
    assert outcome == {
        "ok": "PASS",
        "wrong": "WRONG_ANSWER",
        "flaky": "PASS",
        "ratelimit": "PASS",
        "slow": "PASS",
        "hang": "ADAPTER_ERROR",
        "down": "ADAPTER_ERROR",
        "forbidden": "ADAPTER_ERROR",
        "truncated": "NO_ANSWER",
    }
    assert "no response within 1 s" in records["hang"]["detail"]["error"]
    assert "HTTP 503" in records["down"]["detail"]["error"]
    assert "gave up after 2 attempts" in records["down"]["detail"]["error"]
    assert "HTTP 403" in records["forbidden"]["detail"]["error"]
    assert chat_server.attempts["forbidden:1"] == 1  # client errors are not retried
    assert chat_server.attempts["flaky500:12"] == chat_server.attempts["ratelimit:3"] == 2
    assert records["ok"]["response"].endswith(r"$\boxed{7}$")
    body = chat_server.requests[0]["body"]
    assert body["model"] == "loopback-model"
    assert body["max_tokens"] == 1234
    assert r"\boxed{}" in body["messages"][0]["content"]
    assert {request["auth"] for request in chat_server.requests} == {f"Bearer {API_KEY}"}
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["failure_counts"]["ADAPTER_ERROR"] == 3
    assert report["score"] == pytest.approx(4 / 6)  # ADAPTER_ERRORs are excluded
    assert "api_key" not in json.dumps(report["config"])
    assert "score" in capsys.readouterr().out


def test_a_rejected_key_is_an_adapter_error_for_every_case_not_a_crash(
    chat_server: ChatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """Every case an ADAPTER_ERROR: the run completes, but nothing could be scored (exit 3)."""
    monkeypatch.setenv("LOOPBACK_KEY", "sk-wrong")
    assert generate(chat_server, tmp_path, "--api-key-env", "LOOPBACK_KEY") == 3
    assert "nothing could be scored: all 9 cases are ADAPTER_ERROR or HARNESS_ERROR" in (
        capsys.readouterr().err
    )
    assert json.loads((tmp_path / "report.json").read_text())["score"] is None
    records = read_jsonl(tmp_path / "out.jsonl")
    assert len(records) == 9
    assert {r["tag"] for r in records} == {"ADAPTER_ERROR"}
    assert all("HTTP 401" in r["detail"]["error"] for r in records)


def test_resume_does_not_ask_the_model_again_for_done_cases(
    chat_server: ChatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOPBACK_KEY", API_KEY)
    assert generate(chat_server, tmp_path, "--api-key-env", "LOOPBACK_KEY", "--limit", "2") == 0
    before = sum(chat_server.attempts.values())
    assert (
        generate(chat_server, tmp_path, "--api-key-env", "LOOPBACK_KEY", "--resume", "--limit", "3")
        == 0
    )
    assert sum(chat_server.attempts.values()) == before + 2  # only "flaky" (500, then ok)
    assert sorted(r["id"] for r in read_jsonl(tmp_path / "out.jsonl")) == ["flaky", "ok", "wrong"]


SECRETS = ("sk-loopback-test", "hunter2", "QUERYSECRET", "Basic ", "Bearer sk")


def test_credentials_never_reach_any_output(
    chat_server: ChatServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    """An endpoint whose error body echoes the request once put `Bearer sk-...` into the
    results and the HTML report; a base URL's `user:secret@` and `?api-key=` were written
    verbatim everywhere, and the query broke the request path."""
    monkeypatch.setenv("LOOPBACK_KEY", API_KEY)
    port = chat_server.server_address[1]
    base_url = f"http://alice:hunter2@127.0.0.1:{port}/v1?api-key=QUERYSECRET"
    rows = [
        {"id": "ok", "question": "ok:7", "answer": "7"},
        {"id": "echo401", "question": "echo401", "answer": "1"},
        {"id": "echo500", "question": "echo500", "answer": "1"},
    ]
    data = write_jsonl(tmp_path / "problems.jsonl", rows)
    outputs = [tmp_path / name for name in ("out.jsonl", "report.json", "report.html")]
    status = main(
        ["math", str(data), "--model", "openai:loopback-model", "--base-url", base_url,
         "--api-key-env", "LOOPBACK_KEY", "--workers", "0", "--retries", "1",
         "--retry-backoff", "0.01", "--output", str(outputs[0]), "--report", str(outputs[1]),
         "--html", str(outputs[2])]
    )  # fmt: skip
    assert status == 0
    assert {request["path"] for request in chat_server.requests} == {
        "/v1/chat/completions?api-key=QUERYSECRET"  # the query kept, after the right path
    }
    assert {request["auth"] for request in chat_server.requests} == {f"Bearer {API_KEY}"}
    records = {record["id"]: record for record in read_jsonl(outputs[0])}
    assert records["ok"]["passed"]
    for case_id in ("echo401", "echo500"):
        error = records[case_id]["detail"]["error"]
        assert "Authorization: Bearer [REDACTED]" in error
        assert "api-key=[REDACTED]" in error
    captured = capfd.readouterr()
    html = outputs[2].read_text(encoding="utf-8")
    texts = [output.read_text(encoding="utf-8") for output in outputs[:2]]
    texts += [captured.out, captured.err, html, decoded_report_data(html)]
    for text in texts:
        for secret in SECRETS:
            assert secret not in text, (secret, text[:400])
    report = json.loads(outputs[1].read_text(encoding="utf-8"))
    assert report["config"]["generation"]["base_url"] == (
        f"http://[REDACTED]@127.0.0.1:{port}/v1?api-key=[REDACTED]"
    )


def test_url_credentials_are_sent_as_basic_authentication(chat_server: ChatServer) -> None:
    from rewardkit.evaluation import ChatClient, ChatEndpoint

    port = chat_server.server_address[1]
    endpoint = ChatEndpoint(base_url=f"http://alice:hunter2@127.0.0.1:{port}/v1/", model="m")
    with pytest.raises(AdapterError) as caught:  # the loopback server wants the Bearer key
        ChatClient(endpoint).complete("ok:1")
    assert chat_server.requests[-1]["auth"] == "Basic YWxpY2U6aHVudGVyMg=="  # alice:hunter2
    assert chat_server.requests[-1]["path"] == "/v1/chat/completions"
    assert "hunter2" not in str(caught.value)
    assert "hunter2" not in repr(endpoint)
