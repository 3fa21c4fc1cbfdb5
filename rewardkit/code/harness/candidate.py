"""Candidate runner (runs inside the sandbox): loads the program as a module, then answers call
requests, one JSON line each, with the encoded return value or the exception's type.

The program never sees a test's expected value: only the arguments of each call. Its own prints
go to stderr and its reads of stdin find nothing, so that the protocol's lines stay the runner's.
"""

from __future__ import annotations

import importlib.util
import io
import json
import sys
from typing import Any, TextIO


def _reply(channel: TextIO, message: dict[str, Any]) -> None:
    channel.write(json.dumps(message, separators=(",", ":")) + "\n")
    channel.flush()


def _exception(error: BaseException) -> dict[str, str]:
    try:
        name, message = str(type(error).__name__)[:100], str(error)[:500]
    except BaseException:
        name, message = "Exception", "(unreadable exception)"
    return {"raise": name, "message": message}


def _prelude(config: dict[str, Any]) -> dict[str, Any]:
    names: dict[str, Any] = {}
    if config.get("prelude"):
        with open("_rk_prelude.py", encoding="utf-8") as file:
            exec(compile(file.read(), "_rk_prelude.py", "exec"), names)  # noqa: S102 - our own prelude
    return {key: value for key, value in names.items() if not key.startswith("__")}


def _load(config: dict[str, Any]) -> Any:
    spec = importlib.util.spec_from_file_location("solution", "solution.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    vars(module).update(_prelude(config))
    sys.modules["solution"] = module
    spec.loader.exec_module(module)
    return module


class _Functions:
    """The program's functions by name; a LeetCode-style ``class Solution``'s methods first (as
    LiveCodeBench and prime_code call them), on one instance made at the first call."""

    def __init__(self, module: Any) -> None:
        self.module = module
        self.instance: Any = None

    def get(self, name: str) -> Any:
        solution = vars(self.module).get("Solution")
        if isinstance(solution, type) and hasattr(solution, name):
            if self.instance is None:
                self.instance = solution()
            return getattr(self.instance, name)
        if name not in vars(self.module):
            raise NameError(f"name {name!r} is not defined by the program")
        return getattr(self.module, name)


def main() -> None:
    """Load the program, say whether it loaded, then answer each request line until stdin ends."""
    requests, replies = sys.stdin, sys.stdout
    sys.stdin, sys.stdout = io.StringIO(""), sys.stderr
    import _rk_codec as codec  # the codec file beside this one

    _reply(replies, {"started": True})

    with open("_rk_config.json", encoding="utf-8") as file:
        config = json.load(file)
    try:
        functions = _Functions(_load(config))
    except BaseException as error:
        _reply(replies, {"loaded": False, **_exception(error)})
        return
    _reply(replies, {"loaded": True})
    for line in requests:
        request = json.loads(line)
        try:
            function = functions.get(request["fn"])
            value = function(*codec.decode(request["args"]), **codec.decode(request["kwargs"]))
            message = {"id": request["id"], "return": codec.encode(value)}
        except BaseException as error:
            message = {"id": request["id"], **_exception(error)}
        _reply(replies, message)


if __name__ == "__main__":
    main()
