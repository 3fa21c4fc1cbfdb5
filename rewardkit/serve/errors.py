"""The error of a bad `rewardkit serve` setting, below both the configuration and the token reader
(``rewardkit.serve.config`` reads the token through ``rewardkit.serve.auth``, which raises it)."""

from __future__ import annotations


class ServeConfigError(ValueError):
    """A bad option or configuration file entry; the message names it (and the file)."""
