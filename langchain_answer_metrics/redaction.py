"""Keep API keys and URL credentials out of every message the package records or prints.

Keys are registered when they are read (:mod:`langchain_answer_metrics.config` does it for
each key it takes from the environment, and for every key of a model handed to a
:class:`~langchain_answer_metrics.config.Panel`); :func:`redact` then replaces them in any
text, together with the ``user:password@`` part of URLs:

    >>> register_secret("sk-live-0123456789")
    >>> redact("401: Incorrect API key provided: sk-live-0123456789")
    '401: Incorrect API key provided: <redacted>'

The registry is process-wide: an error raised by one model may quote a key that another
part of the program configured.
"""

from __future__ import annotations

import re
import threading
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from pydantic import BaseModel, SecretStr

__all__ = [
    "REDACTED",
    "is_credential_name",
    "redact",
    "register_model_secrets",
    "register_secret",
    "register_url_credentials",
    "strip_url_credentials",
]

REDACTED = "<redacted>"

# Shorter values cannot be real keys, and replacing them would garble ordinary words
# (the placeholder "not-needed" sent to local servers is registered by no one).
MIN_SECRET_LENGTH = 4

_lock = threading.Lock()
_secrets: set[str] = set()
_pattern: re.Pattern[str] | None = None

# ``scheme://user:password@host``: what stands between ``//`` and an ``@`` before the
# path (no ``/``, whitespace or quote in between) is credentials.
_URL_CREDENTIALS = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)[^/\s@'\"<>]+@")

# Words of a name whose value is a credential (see is_credential_name).
_CREDENTIAL_WORDS = frozenset(
    {"key", "apikey", "token", "secret", "password", "passwd", "auth", "authorization",
     "cookie", "signature", "sig", "credential", "credentials"}
)  # fmt: skip
_NAME_WORDS = re.compile(r"[^a-z0-9]+")


def register_secret(value: str | SecretStr | None) -> None:
    """Remember ``value`` (a key, a token, a URL password) so :func:`redact` hides it."""
    global _pattern
    if isinstance(value, SecretStr):
        value = value.get_secret_value()
    if not value or len(value) < MIN_SECRET_LENGTH:
        return
    with _lock:
        if value in _secrets:
            return
        _secrets.add(value)
        # Longest first, so a key that contains another is replaced whole.
        ordered = sorted(_secrets, key=len, reverse=True)
        _pattern = re.compile("|".join(re.escape(secret) for secret in ordered))


def register_url_credentials(url: str | None) -> None:
    """Register the user and password of ``http://user:password@host/...``, if any."""
    if not url:
        return
    try:
        parts = urlsplit(url)
        username, password = parts.username, parts.password
    except ValueError:
        return
    register_secret(password)
    if password is None:
        register_secret(username)  # ``https://TOKEN@host``: the user part is the token


def register_model_secrets(model: Any) -> None:
    """Register every secret a LangChain model holds: its ``SecretStr`` fields, any
    field named like a key, and the credentials in its URL fields."""
    if not isinstance(model, BaseModel):
        return
    for name in type(model).model_fields:
        value = getattr(model, name, None)
        if isinstance(value, SecretStr):
            register_secret(value)
        elif isinstance(value, str):
            if is_credential_name(name):
                register_secret(value)
            elif "://" in value:
                register_url_credentials(value)


def redact(text: str) -> str:
    """``text`` with every registered secret and URL credential replaced by ``<redacted>``."""
    if not text:
        return text
    pattern = _pattern
    if pattern is not None:
        text = pattern.sub(REDACTED, text)
    if "@" in text:
        text = _URL_CREDENTIALS.sub(lambda match: f"{match['scheme']}{REDACTED}@", text)
    return text


def is_credential_name(name: object) -> bool:
    """Whether a setting, header or query parameter of this name holds a credential
    (``openai_api_key``, ``Authorization``, ``x-api-key``, ``access_token``, ``sig``).

    Whole words are compared, so ``tiktoken_enabled`` or ``max_tokens`` are not.
    """
    return not _CREDENTIAL_WORDS.isdisjoint(_NAME_WORDS.split(str(name).lower()))


def strip_url_credentials(url: str) -> str:
    """``url`` without ``user:password@`` and without query parameters named like a
    credential (``?api_key=...``): what may be shown or stored of an endpoint."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact(url)
    netloc = parts.netloc.rsplit("@", 1)[-1]
    query = parts.query
    if query:
        kept = [
            (name, value)
            for name, value in parse_qsl(query, keep_blank_values=True)
            if not is_credential_name(name)
        ]
        query = urlencode(kept)
    if netloc == parts.netloc and query == parts.query:
        return url
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
