"""Debian's Chromium as the test suite launches it (the HTML report test, the VS Code workbench).

The flags keep Chromium off the network this machine does not have (background networking,
component updates, sync) and make it run as root without a GPU.
"""

from __future__ import annotations

from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
