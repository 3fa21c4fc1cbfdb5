"""The trusted scripts that run inside the sandbox, as the files a ``Job`` carries.

``stdio.py`` runs the program as ``__main__`` (stdin/stdout tests); ``candidate.py`` loads it as a
module and answers call requests (call-form tests, and the calls a checker makes); ``checker.py``
runs a data set's check code with the candidate's functions as proxies whose calls the host
relays. Each is standard library only and imports the codec as ``_rk_codec`` from its work dir.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

#: The program's file name in the sandbox's work dir.
PROGRAM = "solution.py"

#: The names the scripts and the codec have in the sandbox's work dir.
SCRIPTS = {"stdio": "_rk_stdio.py", "candidate": "_rk_candidate.py", "checker": "_rk_checker.py"}
CODEC = "_rk_codec.py"
PRELUDE = "_rk_prelude.py"


@cache
def _source(package: str, name: str) -> bytes:
    return resources.files(package).joinpath(name).read_bytes()


def harness_files(kind: str) -> dict[str, bytes]:
    """The files of the ``kind`` harness (``stdio``, ``candidate`` or ``checker``), by their names
    in the sandbox: the script, the codec it imports and the LiveCodeBench/APPS prelude."""
    return {
        SCRIPTS[kind]: _source(__name__, f"{kind}.py"),
        CODEC: _source("rewardkit.code", "codec.py"),
        PRELUDE: _source(__name__, "prelude.py"),
    }
