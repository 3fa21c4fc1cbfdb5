"""rewardkit's language server (pygls 2.x): the static checks as you type, quick fixes, hover, completion.

A thin adapter over :mod:`rewardkit.checks`: the same diagnostics, codes and messages as
``rewardkit check``. Start it with ``rewardkit lsp`` or ``python -m rewardkit_lsp``.
"""

from typing import Any

__all__ = ["__version__"]


def __getattr__(name: str) -> Any:
    if name == "__version__":  # read lazily: importing this package must stay cheap
        from rewardkit_lsp.version import rewardkit_version

        return rewardkit_version()
    raise AttributeError(name)
