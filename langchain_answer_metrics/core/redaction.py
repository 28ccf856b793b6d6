"""Keep API keys and URL credentials out of every message the package records or prints.

Keys are registered when they are read (:mod:`langchain_answer_metrics.config` does it for
each key it takes from the environment, and for every key of a model handed to a
:class:`~langchain_answer_metrics.config.Panel`); :func:`redact` then replaces them in any
text, together with the ``user:password@`` part of URLs:

    >>> register_secret("sk-live-0123456789")
    >>> redact("401: Incorrect API key provided: sk-live-0123456789")
    '401: Incorrect API key provided: <redacted>'

A secret is also hidden in the forms an HTTP client sends it in: a provider whose 401
quotes the ``Authorization`` header quotes ``Bearer <key>`` (the key itself) or
``Basic <base64 of user:password>`` (httpx turns ``http://user:password@host`` into that),
so the base64 encodings of ``user:password``, ``:password``, ``password:`` and of the
password alone are registered with it. The log lines of the HTTP libraries (httpx logs
each request's URL, credentials included, at INFO) go through :func:`redact` too: a
filter on their loggers (:data:`HTTP_LOGGERS`) rewrites each record before any handler,
the user's own included, formats it.

The registry is process-wide: an error raised by one model may quote a key that another
part of the program configured.
"""

from __future__ import annotations

import base64
import logging
import re
import threading
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from pydantic import BaseModel, SecretStr

__all__ = [
    "HTTP_LOGGERS",
    "REDACTED",
    "is_credential_name",
    "redact",
    "register_model_secrets",
    "register_secret",
    "register_url_credentials",
    "strip_url_credentials",
    "without_secrets",
]

REDACTED = "<redacted>"

# A secret shorter than this (a key of 1 to 3 characters) is replaced only where it
# stands alone, not inside a longer run of letters and digits: replaced everywhere, it
# would garble every word holding those letters. Longer ones are replaced wherever they
# appear, inside other text too ("\\nswordfish" in a repr).
MIN_SECRET_LENGTH = 4

# The keys local servers and their docs tell users to send when the server wants none:
# not secrets, and words that hiding would garble in every message that says them ("no
# price for local"). Only these exact values; any other key the user configures, however
# short or plain a word, is a secret.
_PLACEHOLDERS = frozenset(
    {
        "not-needed",
        "lm-studio",
        "EMPTY",
        "empty",
        "none",
        "None",
        "null",
        "local",
        "ollama",
        "offline",
        "toy",
        "dummy",
        "sk-no-key-required",
        "no-key",
    }
)


def _is_placeholder(value: str) -> bool:
    return value in _PLACEHOLDERS


_lock = threading.Lock()
_secrets: set[str] = set()
_pattern: re.Pattern[str] | None = None

# ``scheme://user:password@host``: what stands between ``//`` and an ``@`` before the
# path (no ``/``, whitespace or quote in between) is credentials.
_URL_CREDENTIALS = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)[^/\s@'\"<>]+@")

# Words of a name whose value is a credential (see is_credential_name).
_CREDENTIAL_WORDS = frozenset(
    {
        "key",
        "apikey",
        "token",
        "secret",
        "password",
        "passwd",
        "auth",
        "authorization",
        "cookie",
        "signature",
        "sig",
        "credential",
        "credentials",
    }
)
_NAME_WORDS = re.compile(r"[^a-z0-9]+")


# A "key" of one or two characters keeps nothing secret (it is guessed at once), and
# hiding it would garble every message: "a" stands alone in "holds a number".
MIN_REGISTERED_LENGTH = 3


def register_secret(value: str | SecretStr | None) -> None:
    """Remember ``value`` (a key, a token, a URL password) so :func:`redact` hides it,
    and its base64 forms in a Basic ``Authorization`` header (alone, or as the user or
    the password of ``user:password``). A value of one or two characters is no secret
    (:data:`MIN_REGISTERED_LENGTH`) and is not remembered."""
    if isinstance(value, SecretStr):
        value = value.get_secret_value()
    if value and len(value) >= MIN_REGISTERED_LENGTH and not _is_placeholder(value):
        _register_with_encodings(value)


def _register_with_encodings(value: str | None) -> None:
    if not value or len(value) < MIN_REGISTERED_LENGTH:
        return
    _register(value, *(_b64(form) for form in (value, f":{value}", f"{value}:")))


def _b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def _register(*values: str) -> None:
    global _pattern
    with _lock:
        new = {value for value in values if value}
        if new <= _secrets:
            return
        _secrets.update(new)
        # Longest first, so a key that contains another is replaced whole.
        ordered = sorted(_secrets, key=len, reverse=True)
        _pattern = re.compile("|".join(_secret_pattern(secret) for secret in ordered))


def _secret_pattern(secret: str) -> str:
    """A long secret wherever it appears; a short one only where it stands alone."""
    if len(secret) >= MIN_SECRET_LENGTH:
        return re.escape(secret)
    return rf"(?<![^\W_]){re.escape(secret)}(?![^\W_])"


def register_url_credentials(url: str | None) -> None:
    """Register the user and password of ``http://user:password@host/...``, if any, as
    written and percent-decoded, and the Basic ``Authorization`` header made of them."""
    if not url:
        return
    try:
        parts = urlsplit(url)
        username, password = parts.username, parts.password
    except ValueError:
        return
    # Written into a URL, a password is meant as one, however plain a word it is.
    _register_with_encodings(password)
    if password is None:
        register_secret(username)  # ``https://TOKEN@host``: the user part is the token
        return
    _register_with_encodings(unquote(password))
    # What httpx sends for userinfo: Basic base64(user:password), both percent-decoded.
    _register(_b64(f"{unquote(username or '')}:{unquote(password)}"))


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
    # URL credentials first: a password replaced first would leave ``user:<redacted>@``,
    # which the URL pattern no longer matches, and the user would show.
    if "@" in text:
        text = _URL_CREDENTIALS.sub(lambda match: f"{match['scheme']}{REDACTED}@", text)
    pattern = _pattern
    if pattern is not None:
        text = pattern.sub(REDACTED, text)
    return text


def without_secrets(value: Any) -> Any:
    """``value`` (a model's dump: dicts, lists, strings, other objects) with every text
    passed through :func:`redact`; an object whose repr would show a secret becomes
    ``<redacted>``."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: without_secrets(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(without_secrets(item) for item in value)
    if value is None or isinstance(value, (bool, int, float, SecretStr)):
        return value
    shown = repr(value)
    return value if redact(shown) == shown else REDACTED


# The loggers of the HTTP stack under LangChain's OpenAI-compatible models. httpx logs
# every request's URL, credentials included, at INFO ("HTTP Request: POST http://...").
HTTP_LOGGERS = (
    "httpx",
    "httpx2",
    "httpcore",
    "httpcore2",
    "openai",
    "openai._base_client",
    "langchain_openai",
)


class _RedactingFilter(logging.Filter):
    """Rewrites a record's message through :func:`redact` before any handler sees it."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: the logging module reports it itself
            return True
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


_FILTER = _RedactingFilter("answer-metrics redaction")


def install_log_redaction(names: tuple[str, ...] = HTTP_LOGGERS) -> None:
    """Add the redacting filter to the loggers ``names`` (once each). Done when this
    module is imported; a logger's filters survive ``logging.basicConfig`` and
    ``dictConfig`` (which adds its own without removing ours)."""
    for name in names:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)


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


install_log_redaction()
