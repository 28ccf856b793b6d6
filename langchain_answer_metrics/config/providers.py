"""Each model entry's provider, resolved, and the provider's key: every bad reference and
missing key of a config reported at once, before any model is built; and what every
model of one provider is built with (:class:`Endpoint`).

    >>> entries, keys = checked_entries(config, os.environ, "models.yaml")
    >>> [(entry.id, provider) for entry, provider in entries]
    [('gpt-4o-mini', 'openai')]
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from pydantic import SecretStr

import langchain_answer_metrics.config.schema as schema
from langchain_answer_metrics.config.errors import config_error
from langchain_answer_metrics.config.panel import display_url
from langchain_answer_metrics.core.redaction import register_secret, register_url_credentials
from langchain_answer_metrics.judging.request import DEFAULT_REQUEST_TIMEOUT
from langchain_answer_metrics.judging.retry import RetryPolicy

# Passed explicitly instead of None so that an ``env=`` mapping is the whole truth:
# with None, the openai client would fall back to os.environ["OPENAI_BASE_URL"].
OPENAI_BASE_URL = "https://api.openai.com/v1"

# Servers on this machine (Ollama, vLLM, llama.cpp) accept any key, but the openai
# client refuses to start without one.
LOCAL_PLACEHOLDER_KEY = "not-needed"


ModelEntry = schema.ChatModelEntry | schema.EmbeddingModelEntry


@dataclass(frozen=True)
class Endpoint:
    """What every model of one provider is built with: where it is, its key, its limiter
    (one per provider, shared: the provider's limit is global) and the retry layer.

    Example:
        >>> endpoint = Endpoint(provider, SecretStr("sk-..."), None, None, 2)
        >>> endpoint.base_url, endpoint.timeout
        ('https://api.openai.com/v1', 60.0)
    """

    provider: schema.ProviderConfig
    api_key: SecretStr
    rate_limiter: Any
    policy: RetryPolicy | None
    max_retries: int | None

    @property
    def base_url(self) -> str:
        return self.provider.base_url or OPENAI_BASE_URL

    @property
    def timeout(self) -> float:
        """The package's deadline per request (the client's own is ``provider.timeout``)."""
        return self.provider.timeout or DEFAULT_REQUEST_TIMEOUT


def checked_entries(
    config: schema.ModelsConfig, env: Mapping[str, str], source: str
) -> tuple[list[tuple[ModelEntry, str]], dict[str, SecretStr]]:
    """Each model entry with its provider's name, and each provider's key; every bad
    reference and missing key reported at once.

    Raises:
        ConfigError: naming each bad place (``chat_models.list[0].provider`` ...).
    """
    problems: list[tuple[str, str]] = []
    entries: list[tuple[str, ModelEntry]] = [
        (f"chat_models.list[{i}]", entry) for i, entry in enumerate(config.chat_models.models)
    ] + [
        (f"embedding_models.list[{i}]", entry)
        for i, entry in enumerate(config.embedding_models.models)
    ]
    if not entries:
        problems.append(("chat_models.list", "no chat or embedding models are configured"))

    if entries and not config.providers:
        problems.append(("providers", "at least one provider is required"))

    # Resolve each entry's provider first so that every bad reference is reported at once.
    resolved: list[str | None] = []
    for where, entry in entries:
        name, problem = _resolve_provider(entry.provider, config.providers)
        if problem:
            problems.append((f"{where}.provider", problem))
        resolved.append(name)

    keys: dict[str, SecretStr] = {}
    for name in dict.fromkeys(n for n in resolved if n is not None):
        key, problem = _provider_key(name, config.providers[name], env)
        if problem:
            problems.append((f"providers.{name}.api_key_env", problem))
        elif key is not None:
            keys[name] = key
    if problems:
        raise config_error(source, problems)
    # No problem: every entry's provider was resolved.
    return [(entry, name) for (_, entry), name in zip(entries, resolved) if name], keys


def _resolve_provider(
    requested: str | None, providers: Mapping[str, schema.ProviderConfig]
) -> tuple[str | None, str | None]:
    """(provider name, problem); no problem is reported when there are no providers at all."""
    configured = ", ".join(providers)
    if not providers:
        return None, None
    if requested is not None:
        if requested in providers:
            return requested, None
        return None, f"unknown provider {requested!r} (configured: {configured})"
    if len(providers) == 1:
        return next(iter(providers)), None
    return None, f"required when several providers are configured ({configured})"


def _provider_key(
    name: str, provider: schema.ProviderConfig, env: Mapping[str, str]
) -> tuple[SecretStr | None, str | None]:
    """(key, problem); the key is wrapped at once so it cannot leak through a repr."""
    if provider.api_key_env is not None:
        value = env.get(provider.api_key_env) or None
        if value is None:
            return None, f"environment variable {provider.api_key_env} is not set"
        register_secret(value)
        register_url_credentials(provider.base_url)
        return SecretStr(value), None
    base_url = provider.base_url or OPENAI_BASE_URL
    register_url_credentials(base_url)
    if is_loopback(base_url):
        return SecretStr(LOCAL_PLACEHOLDER_KEY), None
    return None, (
        f"required for {display_url(base_url)}: the name of the environment variable "
        "that holds the API key"
    )


def is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
