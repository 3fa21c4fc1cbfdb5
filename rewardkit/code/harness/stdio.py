"""Stdin/stdout harness (runs inside the sandbox): the program as ``__main__``, after the
LiveCodeBench/APPS imports when ``_rk_config.json`` asks for them."""

from __future__ import annotations

import json
import runpy
import sys


def main() -> None:
    """Run ``solution.py`` as ``__main__`` with the prelude's names in its globals."""
    with open("_rk_config.json", encoding="utf-8") as file:
        config = json.load(file)
    names: dict[str, object] = {}
    if config.get("prelude"):
        with open("_rk_prelude.py", encoding="utf-8") as file:
            exec(compile(file.read(), "_rk_prelude.py", "exec"), names)  # noqa: S102 - our own prelude
    names = {key: value for key, value in names.items() if not key.startswith("__")}
    sys.argv = ["solution.py"]
    runpy.run_path("solution.py", init_globals=names, run_name="__main__")


if __name__ == "__main__":
    main()
