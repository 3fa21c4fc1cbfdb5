"""The real language server with faults injected into its engine, keyed by markers in the source.

``BOOM``: the analysis raises (an exception inside a handler or a background check is logged to
the client and the server keeps answering). ``SLOW``: the analysis takes half a second (a newer
version arrives while an older one is being checked). ``RECURSE``: the analysis recurses until
Python's stack limit (``RecursionError``), as the parser may on pathologically nested code.
``HOG``: the analysis asks for more memory than there is (``MemoryError``).
"""

from __future__ import annotations

import sys
import time

from rewardkit_lsp.cli import main

from rewardkit.checks import ModuleAnalyzer

_original_analyze = ModuleAnalyzer.analyze


def _recurse(depth: int) -> int:
    return _recurse(depth + 1) + 1


def _analyze_with_faults(self, source, path, config):
    if "BOOM" in source:
        raise RuntimeError("injected engine failure (source contains BOOM)")
    if "SLOW" in source:
        time.sleep(0.5)
    if "RECURSE" in source:
        _recurse(0)
    if "HOG" in source:
        bytearray(1 << 62)  # no machine has 4 EiB: a real MemoryError
    return _original_analyze(self, source, path, config)


ModuleAnalyzer.analyze = _analyze_with_faults  # type: ignore[method-assign]

if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
