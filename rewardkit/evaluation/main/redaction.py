"""Keeping credentials out of everything a run writes: results, reports, messages.

An endpoint's error body may echo the request (its `Authorization` header included), and a base
URL may carry credentials (`https://user:secret@host/v1`, `?api-key=...`). Every text that comes
from the endpoint, and every URL we show, goes through a `Redactor` that knows the run's secrets.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable
from urllib.parse import unquote, urlsplit, urlunsplit

REDACTED = "[REDACTED]"
_SECRET_QUERY_NAME = re.compile(r"key|token|secret|passw|sig|auth|cred", re.IGNORECASE)
_AUTHORIZATION_VALUE = re.compile(r"\b(Bearer|Basic)(\s+)[A-Za-z0-9._~+/=-]+", re.IGNORECASE)
_MIN_SECRET_LENGTH = 3
"""Shorter values (a user name `a`) would redact ordinary text; they are still never written
as part of a URL, which is redacted by structure."""


def _is_secret_pair(name: str, value: str) -> bool:
    return bool(value) and bool(_SECRET_QUERY_NAME.search(unquote(name)))


def _query_secrets(query: str) -> list[str]:
    pairs = (pair.partition("=") for pair in query.split("&"))
    return [value for name, _, value in pairs if _is_secret_pair(name, value)]


def redact_url(url: str) -> str:
    """`url` with its user information and the values of secret-looking query parameters
    (`api-key`, `token`, `sig`, ...) replaced by `[REDACTED]`."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rsplit('@', 1)[1]}"
    pairs = []
    for pair in parts.query.split("&") if parts.query else ():
        name, _, value = pair.partition("=")
        pairs.append(f"{name}={REDACTED}" if _is_secret_pair(name, value) else pair)
    return urlunsplit((parts.scheme, netloc, parts.path, "&".join(pairs), parts.fragment))


def url_secrets(url: str) -> list[str]:
    """The secret values a URL carries: user, password (raw and decoded), the Basic credentials
    built from them, and secret-looking query values."""
    parts = urlsplit(url)
    found: list[str] = []
    if parts.username is not None or parts.password is not None:
        user, password = parts.username or "", parts.password or ""
        found += [user, password, unquote(user), unquote(password)]
        credentials = f"{unquote(user)}:{unquote(password)}".encode()
        found.append(base64.b64encode(credentials).decode())
    for value in _query_secrets(parts.query):
        found += [value, unquote(value)]
    return found


class Redactor:
    """Replaces known secret values, and any `Bearer`/`Basic` credentials, with `[REDACTED]`."""

    def __init__(self, secrets: Iterable[str | None]) -> None:
        unique = {secret for secret in secrets if secret and len(secret) >= _MIN_SECRET_LENGTH}
        self.secrets = sorted(unique, key=len, reverse=True)  # longest first: no partial leaks

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return _AUTHORIZATION_VALUE.sub(rf"\1\2{REDACTED}", text)
