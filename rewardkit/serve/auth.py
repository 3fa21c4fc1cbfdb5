"""The optional bearer token of `rewardkit serve`: where it comes from and how a request is checked.

The token comes from ``--token-file PATH`` (its first line) or the ``REWARDKIT_SERVE_TOKEN``
environment variable; every route but ``/health`` then needs ``Authorization: Bearer <token>``,
compared in constant time (``hmac.compare_digest``), so timing says nothing about the token.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from collections.abc import Mapping
from typing import Any

from rewardkit.bounded_files import FileTooLargeError, NotRegularFileError, read_regular_file
from rewardkit.serve.errors import ServeConfigError

TOKEN_ENV = "REWARDKIT_SERVE_TOKEN"
"""The environment variable holding the token, for the server and for ``RemoteReward``."""

MAX_TOKEN_FILE_BYTES = 64 * 1024
"""A token file larger than this is refused (a symlink to ``/dev/zero`` must not be read whole)."""

OPEN_PATHS = frozenset({"/health"})
"""Routes answered without the token: liveness probes of load balancers and supervisors."""


def read_token(token_file: str | None, environ: Mapping[str, str] = os.environ) -> str | None:
    """The server's token: the first line of ``token_file``, else ``$REWARDKIT_SERVE_TOKEN``, else
    ``None`` (no authentication). An empty or unreadable file is a ``ServeConfigError``."""
    if token_file is None:
        token = environ.get(TOKEN_ENV, "").strip()
        where = f"${TOKEN_ENV}"
        if not token:
            return None
    else:
        try:
            text = read_regular_file(token_file, MAX_TOKEN_FILE_BYTES).decode("utf-8")
        except (NotRegularFileError, FileTooLargeError) as exc:
            raise ServeConfigError(
                f"cannot read the token file {token_file}: {exc.args[0]}"
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ServeConfigError(
                f"cannot read the token file {token_file}: {getattr(exc, 'strerror', None) or exc}"
            ) from None
        token = text.strip().splitlines()[0].strip() if text.strip() else ""
        where = f"the token file {token_file}"
        if not token:
            raise ServeConfigError(f"{where} is empty; put the token on its first line")
    if not token.isascii() or not token.isprintable() or " " in token:
        raise ServeConfigError(
            f"{where}: a token is printable ASCII without spaces (it travels in an HTTP header)"
        )
    return token


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server to this machine."""
    if host in ("localhost", ""):
        return host == "localhost"
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class BearerCheck:
    """Checks one request's ``Authorization`` header against the token (``None``: no check)."""

    def __init__(self, token: str | None) -> None:
        self.expected = None if token is None else f"bearer {token}".encode()

    def problem(self, scope: Mapping[str, Any]) -> str | None:
        """Why ``scope`` may not proceed, or ``None``."""
        if self.expected is None or scope.get("path") in OPEN_PATHS:
            return None
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                scheme, _, rest = value.partition(b" ")
                if hmac.compare_digest(scheme.lower() + b" " + rest.strip(), self.expected):
                    return None
                return "the bearer token is wrong"
        return (
            "this server requires a bearer token: send 'Authorization: Bearer <token>' "
            f"(RemoteReward: token=... or ${TOKEN_ENV}; eval --reward-url: --reward-token-file or ${TOKEN_ENV})"
        )
