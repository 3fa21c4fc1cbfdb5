"""Checker (runs inside its own sandbox, apart from the candidate): the data set's check code with
the candidate's functions as proxies. A proxy's call goes to the host as one JSON line and its
answer comes back from the host, which relays it to and from the candidate's sandbox. The
verdict of each test is this program's line, on a channel the candidate cannot write."""

from __future__ import annotations

import builtins
import io
import json
import sys
import traceback
from typing import Any, TextIO


class CandidateError(Exception):
    """The candidate raised an exception of a type that is not a builtin one."""


class _Stop(BaseException):
    """The host stopped the test: the candidate timed out, died or broke the protocol."""


def _reply(channel: TextIO, message: dict[str, Any]) -> None:
    channel.write(json.dumps(message, separators=(",", ":")) + "\n")
    channel.flush()


def _raised(name: str, message: str) -> BaseException:
    kind = vars(builtins).get(name)
    if isinstance(kind, type) and issubclass(kind, Exception):
        try:
            return kind(message)
        except Exception:
            pass
    return CandidateError(f"{name}: {message}")


def _proxy(name: str, requests: TextIO, replies: TextIO, codec: Any) -> Any:
    def proxy(*args: Any, **kwargs: Any) -> Any:
        _reply(
            replies,
            {"call": name, "args": codec.encode(list(args)), "kwargs": codec.encode(kwargs)},
        )
        line = requests.readline()
        if not line:
            raise _Stop
        answer = json.loads(line)
        if "return" in answer:
            return codec.decode(answer["return"])
        if "raise" in answer:
            raise _raised(answer["raise"], answer.get("message", ""))
        raise _Stop

    proxy.__name__ = proxy.__qualname__ = name
    return proxy


def _failing_line(error: BaseException, sources: dict[str, str]) -> str:
    """The line of the check code where ``error`` was raised (the innermost in the data set's code)."""
    line = ""
    for frame in traceback.extract_tb(error.__traceback__):
        if frame.filename in sources and frame.lineno:
            lines = sources[frame.filename].splitlines()
            if 0 < frame.lineno <= len(lines):
                line = lines[frame.lineno - 1].strip()
    return line[:300]


def _describe(error: BaseException) -> dict[str, str]:
    try:
        return {"error": str(type(error).__name__)[:100], "message": str(error)[:500]}
    except Exception:
        return {"error": "Exception", "message": ""}


def main() -> None:
    """Run the setup, bind the proxies, then run each test the host names, one line per result."""
    requests, replies = sys.stdin, sys.stdout
    sys.stdin, sys.stdout = io.StringIO(""), sys.stderr
    import _rk_codec as codec  # the codec file beside this one

    _reply(replies, {"started": True})

    with open("_rk_check.json", encoding="utf-8") as file:
        config = json.load(file)
    namespace: dict[str, Any] = {"__name__": "__check__"}
    sources = {"<setup>": config["setup"]}
    try:
        exec(compile(config["setup"], "<setup>", "exec"), namespace)  # noqa: S102 - the data set's test code, in the sandbox
    except BaseException as error:
        _reply(replies, {"setup_error": True, **_describe(error)})
        return
    for name in config["proxies"]:
        namespace[name] = _proxy(name, requests, replies, codec)
    _reply(replies, {"ready": True})
    for line in requests:
        index = json.loads(line)["run"]
        source = config["tests"][index]
        sources[f"<test {index}>"] = source
        try:
            exec(compile(source, f"<test {index}>", "exec"), namespace)  # noqa: S102 - a data set test, in the sandbox
            result: dict[str, Any] = {"done": index, "passed": True}
        except _Stop:
            result = {"done": index, "stopped": True}
        except BaseException as error:
            result = {
                "done": index,
                "passed": False,
                "line": _failing_line(error, sources),
                **_describe(error),
            }
        _reply(replies, result)


if __name__ == "__main__":
    main()
