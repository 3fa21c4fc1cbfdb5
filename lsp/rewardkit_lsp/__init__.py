"""rewardkit's language server (pygls 2.x): the static checks as you type, quick fixes, hover, completion.

A thin adapter over :mod:`rewardkit.checks`: the same diagnostics, codes and messages as
``rewardkit check``. Start it with ``rewardkit lsp`` or ``python -m rewardkit_lsp``.
"""

from rewardkit._version import __version__

__all__ = ["__version__"]
