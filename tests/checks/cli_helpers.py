"""What the tests of ``rewardkit check`` share: a bad and a good reward, and a way to run the CLI."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

BAD = (
    "from rewardkit import reward\n"
    "\n"
    "@reward(name='qa')\n"
    "def qa(final_respone, answr):\n"
    "    return {'score': 1.0}\n"
)
GOOD = (
    "from rewardkit import reward\n"
    "\n"
    "@reward(name='qa')\n"
    "def qa(final_response, answer):\n"
    "    return {'reward': float(final_response == answer)}\n"
)


def run_check(
    *args: str,
    cwd: Path,
    stdin: str | bytes | None = None,
    timeout: float | None = None,
    prefix: Sequence[str] = (),
) -> subprocess.CompletedProcess[str]:
    """``rewardkit check ARGS`` in a fresh process (``prefix``: a command it runs under, such as
    ``setpriv``; ``timeout``: generous, for what would otherwise hang forever)."""
    data = stdin.encode() if isinstance(stdin, str) else stdin
    completed = subprocess.run(
        [*prefix, sys.executable, "-m", "rewardkit", "check", *args],
        cwd=cwd,
        input=data,
        capture_output=True,
        check=False,
        timeout=timeout,
    )
    return subprocess.CompletedProcess(
        completed.args, completed.returncode, completed.stdout.decode(), completed.stderr.decode()
    )
