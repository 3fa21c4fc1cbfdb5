"""pygls' protocol, fed by :mod:`rewardkit_lsp.transport` and answering every request.

pygls drops a request whose params do not structure (it logs and answers nothing) and ignores
requests after ``shutdown``; editors then wait forever. Here a request with invalid params gets
-32602 naming the method and the field, anything after ``shutdown`` gets InvalidRequest, and a
message that is not JSON-RPC gets InvalidRequest or a parse error.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import Any

import cattrs
from lsprotocol import types
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, LanguageServerProtocol

from rewardkit_lsp.framing import FrameProblem

logger = logging.getLogger(__name__)

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602


def _reason(error: BaseException) -> str:
    """A short account of why params could not be read (cattrs' messages name the field)."""
    if isinstance(error, cattrs.BaseValidationError):
        return "; ".join(cattrs.transform_error(error))
    return f"{type(error).__name__}: {error}"


class RewardkitProtocol(LanguageServerProtocol):
    """pygls' protocol, receiving from :mod:`rewardkit_lsp.transport` and answering every request."""

    def _check_handler_result(self, future: Any) -> None:
        # pygls 2.1 files each notification's future under a fresh id in ``_request_futures``
        # and never removes it (about 2 KB per keystroke): drop it once done. Later, not now:
        # pygls' ``shutdown`` cancels these futures while iterating over that dictionary.
        super()._check_handler_result(future)
        self._forget_soon(future)

    def _execute_handler(
        self,
        msg_id: Any,
        handler: Any,
        callback: Any,
        args: Any = None,
        kwargs: Any = None,
    ) -> None:
        # The same for the steps of pygls' generator handlers (its built-in didOpen/didClose
        # call ours through them): each is filed under a fresh uuid and kept for good, one
        # finished task per document opened or closed.
        super()._execute_handler(msg_id, handler, callback, args=args, kwargs=kwargs)
        if isinstance(callback, functools.partial) and callback.func == self._run_generator:
            future = self._request_futures.get(msg_id)
            if future is not None:
                future.add_done_callback(self._forget_soon)

    def _forget_soon(self, future: Any) -> None:
        """Drop ``future`` from ``_request_futures`` on the loop's next turn (now, off the loop)."""
        try:
            asyncio.get_running_loop().call_soon(self._forget, future)
        except RuntimeError:
            self._forget(future)

    def _forget(self, future: Any) -> None:
        finished = [key for key, pending in self._request_futures.items() if pending is future]
        for key in finished:
            del self._request_futures[key]

    def send_json(self, message: dict[str, Any]) -> None:
        """Send a message that is already plain JSON (no cattrs on the hot path)."""
        self._send_data(message)

    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        if error is None and (result is None or isinstance(result, dict | list)):
            self._result_types.pop(msg_id, None)
            self._send_data({"jsonrpc": "2.0", "id": msg_id, "result": result})
            return
        super()._send_response(msg_id, result, error)

    def reply_error(self, msg_id: Any, code: int, message: str) -> None:
        """Answer request ``msg_id`` (``None`` when unknown) with a JSON-RPC error."""
        logger.warning("answering %r with error %d: %s", msg_id, code, message)
        self._send_data(
            {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
        )

    def receive(self, items: list[Any]) -> None:
        """Handle what the transport read: messages and framing problems, in order."""
        for item in items:
            try:
                if isinstance(item, FrameProblem):
                    self._frame_problem(item)
                else:
                    self._receive(item)
            except (SystemExit, KeyboardInterrupt):
                raise
            except Exception:  # never let one message stop the others
                logger.exception("failed to handle a message")

    def _frame_problem(self, problem: FrameProblem) -> None:
        logger.warning("malformed input: %s", problem.message)
        server: Any = self._server
        if getattr(server, "initialized", False):  # the client's log exists after initialize
            server.log(
                f"malformed input from the client: {problem.message}", types.MessageType.Warning
            )
        if problem.parse_error:
            self.reply_error(None, PARSE_ERROR, f"parse error: {problem.message}")

    def _receive(self, data: Any) -> None:
        if not isinstance(data, dict):
            self.reply_error(
                None, INVALID_REQUEST, "a message must be a JSON object (LSP has no batches)"
            )
            return
        has_id = "id" in data
        msg_id = data.get("id")
        if has_id and (isinstance(msg_id, bool) or not isinstance(msg_id, str | int | None)):
            self.reply_error(
                None, INVALID_REQUEST, f"invalid id {msg_id!r}: expected a string or an integer"
            )
            return
        method = data.get("method")
        if method is None and has_id and ("result" in data or "error" in data):
            self.handle_message(self.structure_message(data))  # the client's answer to a request
            return
        if not isinstance(method, str) or data.get("jsonrpc") != "2.0":
            if has_id:
                self.reply_error(
                    msg_id, INVALID_REQUEST, 'expected {"jsonrpc": "2.0", "method": <string>, ...}'
                )
            else:
                logger.warning("ignored a message that is not JSON-RPC 2.0: %.200r", data)
            return
        if self._shutdown and method != types.EXIT:
            if has_id:
                self.reply_error(
                    msg_id,
                    INVALID_REQUEST,
                    f"{method}: the server is shut down; only `exit` may follow `shutdown`",
                )
            return
        message_type = self.get_message_type(method) or (
            JsonRPCRequestMessage if has_id else JsonRPCNotification
        )
        try:
            message = self._converter.structure(data, message_type)
        except Exception as error:
            if has_id:
                self.reply_error(
                    msg_id, INVALID_PARAMS, f"invalid params for {method}: {_reason(error)}"
                )
            else:
                logger.warning("ignored %s with invalid params: %s", method, _reason(error))
            return
        self.handle_message(message)
