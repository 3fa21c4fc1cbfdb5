"""Hostile input on the wire: bad frames never kill or deafen the server, every request is answered."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from lsp_harness import WAIT_LIMIT
from raw_wire import RawServer, frame, hover_params
from rewardkit_lsp.transport import THREADED_IO

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RawServer]:
    raw = RawServer()
    raw.initialize(tmp_path)
    yield raw
    raw.close()


def _hover(server: RawServer, request_id: int, uri: str) -> bytes:
    return server.request(request_id, "textDocument/hover", hover_params(uri))


def _still_answers(server: RawServer, tmp_path: Path, request_id: int) -> None:
    server.send(_hover(server, request_id, (tmp_path / "x.py").as_uri()))
    answer = server.answer_to(request_id)
    assert answer == {"jsonrpc": "2.0", "id": request_id, "result": None}
    assert server.process.poll() is None


def test_a_huge_content_length_is_refused_and_the_server_reads_on(
    server: RawServer, tmp_path: Path
):
    server.send(b"Content-Length: 100000000000\r\n\r\n" + b'{"jsonrpc": "2.0", "id": 7, "meth')
    error = server.answer_to(None)["error"]
    assert error["code"] == PARSE_ERROR
    assert "100000000000" in error["message"]
    _still_answers(server, tmp_path, 2)


def test_a_length_counted_in_characters_still_gets_its_answer(server: RawServer, tmp_path: Path):
    uri = f"file://{tmp_path.as_posix()}/café_🎯.py"  # a raw, unescaped name
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": hover_params(uri)},
        ensure_ascii=False,
    )
    assert len(body) < len(body.encode())
    server.send(b"Content-Length: %d\r\n\r\n" % len(body) + body.encode())
    assert server.answer_to(2)["result"] is None
    _still_answers(server, tmp_path, 3)


def test_a_length_counted_in_characters_followed_by_more_frames(server: RawServer, tmp_path: Path):
    uri = f"file://{tmp_path.as_posix()}/naïve.py"
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": hover_params(uri)},
        ensure_ascii=False,
    )
    server.send(b"Content-Length: %d\r\n\r\n" % len(body) + body.encode() + _hover(server, 3, uri))
    assert server.answer_to(2)["result"] is None
    assert server.answer_to(3)["result"] is None


@pytest.mark.parametrize(
    ("header", "newline"),
    [(b"Content-Length", b"\n"), (b"content-length", b"\r\n"), (b"CONTENT-LENGTH", b"\n")],
    ids=["lf-only", "lower-case", "upper-case-lf"],
)
def test_lf_only_framing_and_any_header_case_are_read(
    server: RawServer, tmp_path: Path, header: bytes, newline: bytes
):
    message = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "textDocument/hover",
        "params": hover_params((tmp_path / "x.py").as_uri()),
    }
    server.send(frame(message, header=header, newline=newline))
    assert server.answer_to(2)["result"] is None
    _still_answers(server, tmp_path, 3)


def test_garbage_between_frames_is_skipped(server: RawServer, tmp_path: Path):
    server.send(b"this is not a frame\r\n\r\n{}\r\n")
    _still_answers(server, tmp_path, 2)


def test_a_length_longer_than_the_message_is_noticed_at_the_next_header(
    server: RawServer, tmp_path: Path
):
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "textDocument/hover",
            "params": hover_params((tmp_path / "x.py").as_uri()),
        }
    ).encode()
    server.send(b"Content-Length: %d\r\n\r\n" % (len(body) + 40) + body)
    server.send(_hover(server, 3, (tmp_path / "y.py").as_uri()))
    assert server.answer_to(2)["result"] is None
    assert server.answer_to(3)["result"] is None


@pytest.mark.parametrize(
    "params",
    [
        hover_params("file:///x.py", line=-1),
        [],
        None,
        {"textDocument": 5, "position": {"line": 0, "character": 0}},
        {"textDocument": {"uri": "file:///x.py"}, "position": {"line": "one", "character": 0}},
    ],
    ids=["line-minus-one", "list", "null", "wrong-type", "string-line"],
)
def test_requests_with_invalid_params_get_invalid_params(server: RawServer, params: object):
    server.send(server.request(5, "textDocument/hover", params))
    error = server.answer_to(5)["error"]
    assert error["code"] == INVALID_PARAMS
    assert "textDocument/hover" in error["message"]


def test_malformed_messages_get_invalid_request_or_parse_error(server: RawServer, tmp_path: Path):
    server.send(frame({"jsonrpc": "2.0", "id": 4, "method": 12}))
    assert server.answer_to(4)["error"]["code"] == INVALID_REQUEST
    server.send(frame({"jsonrpc": "2.0", "id": {"no": 1}, "method": "textDocument/hover"}))
    assert server.answer_to(None)["error"]["code"] == INVALID_REQUEST
    server.send(b"Content-Length: 9\r\n\r\n{not json")
    server.send(server.request(6, "rewardkit/unknown", {}))
    assert server.answer_to(None)["error"]["code"] == PARSE_ERROR
    assert server.answer_to(6)["error"]["code"] == METHOD_NOT_FOUND
    _still_answers(server, tmp_path, 7)


def test_requests_after_shutdown_get_invalid_request_and_exit_ends_cleanly(
    server: RawServer, tmp_path: Path
):
    server.send(server.request(2, "shutdown", None))
    assert server.answer_to(2) == {"jsonrpc": "2.0", "id": 2, "result": None}
    server.send(_hover(server, 3, (tmp_path / "x.py").as_uri()))
    assert server.answer_to(3)["error"]["code"] == INVALID_REQUEST
    server.send(server.request(4, "shutdown", None))
    assert server.answer_to(4)["error"]["code"] == INVALID_REQUEST
    server.send(frame({"jsonrpc": "2.0", "method": "exit"}))
    assert server.process.wait(timeout=WAIT_LIMIT) == 0


def test_exit_without_shutdown_is_status_1(tmp_path: Path):
    raw = RawServer()
    raw.initialize(tmp_path)
    raw.send(frame({"jsonrpc": "2.0", "method": "exit"}))
    assert raw.process.wait(timeout=WAIT_LIMIT) == 1


def test_thread_based_pipes_serve_the_same(tmp_path: Path):
    """Where the event loop cannot wait on pipes (Windows), threads read and write them."""
    environment = {**os.environ, THREADED_IO: "1"}
    raw = RawServer(env=environment)
    try:
        raw.initialize(tmp_path)
        uri = (tmp_path / "qa.py").as_uri()
        text = "from rewardkit import reward\n\n@reward\ndef qa(final_respone):\n    return 1.0\n"
        raw.send(
            frame(
                {
                    "jsonrpc": "2.0",
                    "method": "textDocument/didOpen",
                    "params": {
                        "textDocument": {
                            "uri": uri,
                            "languageId": "python",
                            "version": 1,
                            "text": text,
                        }
                    },
                }
            )
        )
        published = raw.notification("textDocument/publishDiagnostics")["params"]
        assert [d["code"] for d in published["diagnostics"]] == ["RK102"]
        raw.send(raw.request(2, "textDocument/hover", hover_params(uri, line=3, character=9)))
        assert "final_response" in raw.answer_to(2)["result"]["contents"]["value"]
        raw.send(raw.request(3, "shutdown", None))
        raw.answer_to(3)
        raw.send(frame({"jsonrpc": "2.0", "method": "exit"}))
        assert raw.process.wait(timeout=WAIT_LIMIT) == 0
    finally:
        raw.close()
