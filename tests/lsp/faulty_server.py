"""The real language server with faults injected into the engine, keyed by markers in the source.

``BOOM``: the analysis raises (an exception inside a handler or a background check is logged to
the client and the server keeps answering). ``SLOW``: the analysis takes half a second (a newer
version arrives while an older one is being checked).
"""

from __future__ import annotations

import sys
import time

from rewardkit_lsp.cli import main

from rewardkit.checks import ModuleAnalyzer

_original_analyze = ModuleAnalyzer.analyze


def _analyze_or_explode(self, source, path, config):
    if "BOOM" in source:
        raise RuntimeError("injected engine failure (source contains BOOM)")
    if "SLOW" in source:
        time.sleep(0.5)
    return _original_analyze(self, source, path, config)


ModuleAnalyzer.analyze = _analyze_or_explode  # type: ignore[method-assign]

if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
