"""rewardkit's version for the server's ``serverInfo``, without importing the rewardkit package.

``import rewardkit`` loads the reward runtime, which the protocol process never uses; reading
``rewardkit/_version.py`` (the one place the version is written) keeps it out of start-up.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

_VERSION = re.compile(r"""^__version__\s*=\s*["']([^"']+)["']""", re.MULTILINE)


def rewardkit_version() -> str:
    """The installed rewardkit's version string."""
    loaded = sys.modules.get("rewardkit._version")
    if loaded is not None:
        return str(loaded.__version__)
    spec = importlib.util.find_spec("rewardkit")
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        try:
            match = _VERSION.search((Path(folder) / "_version.py").read_text(encoding="utf-8"))
        except OSError:
            continue
        if match:
            return match.group(1)
    from rewardkit._version import __version__

    return __version__
