"""The real language server with faults injected into its analysis process (see faulty_worker.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from rewardkit_lsp.cli import main

if __name__ == "__main__":
    worker = [sys.executable, str(Path(__file__).with_name("faulty_worker.py"))]
    raise SystemExit(main(sys.argv[1:], worker_command=worker))
