"""The pip command that installs one of rewardkit's extras into this environment.

rewardkit is not on PyPI: ``pip install "rewardkit[serve]"`` fails as written. Every "needs the
X extra" message asks this module instead, which names the source this rewardkit was installed
from (its checkout, or the wheel's address, as pip recorded them in ``direct_url.json``).
"""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

__all__ = ["install_command", "install_target"]

UNKNOWN_SOURCE = "/path/to/rewardkit"


def _recorded_source() -> tuple[str, bool] | None:
    """(address, is a directory) of the source pip installed rewardkit from, when it recorded one
    (a checkout's ``rewardkit.egg-info`` on ``sys.path`` records none: the next one is asked)."""
    for distribution in metadata.distributions(name="rewardkit"):
        text = distribution.read_text("direct_url.json")
        if not text:
            continue
        try:
            recorded = json.loads(text)
            return str(recorded["url"]), "dir_info" in recorded
        except (ValueError, KeyError, TypeError):
            continue
    return None


def _checkout() -> Path | None:
    """The checkout this rewardkit is imported from, when it is one (run with ``PYTHONPATH``)."""
    root = Path(__file__).resolve().parent.parent
    pyproject = root / "pyproject.toml"
    try:
        return root if 'name = "rewardkit"' in pyproject.read_text(encoding="utf-8") else None
    except OSError:
        return None


def install_target(extra: str) -> str:
    """What to give pip for rewardkit with ``extra``: ``/checkout[extra]`` for a checkout,
    ``rewardkit[extra] @ URL`` for a wheel or an archive, a placeholder path when unknown."""
    source = _recorded_source()
    if source is None:
        checkout = _checkout()
        return f"{checkout or UNKNOWN_SOURCE}[{extra}]"
    url, is_directory = source
    parsed = urlparse(url)
    if is_directory and parsed.scheme == "file":
        return f"{unquote(parsed.path)}[{extra}]"
    return f"rewardkit[{extra}] @ {url}"


def install_command(extra: str) -> str:
    """The shell command that adds ``extra`` to this environment, e.g.
    ``pip install "/work/rewardkit[serve]"``."""
    return f'pip install "{install_target(extra)}"'
