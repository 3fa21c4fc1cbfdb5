"""The real analysis process with faults injected into the engine, keyed by markers in the source.

``BOOM``: the analysis raises (an exception inside a handler or a background check is logged to
the client and the server keeps answering). ``SLOW``: the analysis takes half a second (a newer
version arrives while an older one is being checked). ``CRASH``: the process dies at once, as a
crash of a native parser would (the server starts a new one and keeps serving).
"""

from __future__ import annotations

import os
import time

from rewardkit_lsp.worker import main

from rewardkit.checks import ModuleAnalyzer

_original_analyze = ModuleAnalyzer.analyze


def _analyze_with_faults(self, source, path, config):
    if "BOOM" in source:
        raise RuntimeError("injected engine failure (source contains BOOM)")
    if "SLOW" in source:
        time.sleep(0.5)
    if "CRASH" in source:
        os._exit(70)
    return _original_analyze(self, source, path, config)


ModuleAnalyzer.analyze = _analyze_with_faults  # type: ignore[method-assign]

if __name__ == "__main__":
    raise SystemExit(main())
