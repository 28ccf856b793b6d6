"""Build a :class:`Panel` from a YAML file, a parsed mapping, one base URL, or the environment.

Here the schema meets the world: provider references are resolved, keys read from the
environment variables the config names (and registered for redaction), one rate limiter
made per provider, one retry layer chosen, and the models constructed.
"""

from __future__ import annotations

import logging
import os
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import SecretStr, ValidationError

import langchain_answer_metrics.config.schema as schema
from langchain_answer_metrics.config.declared import read_config_text
from langchain_answer_metrics.config.errors import (
    ConfigError,
    config_error,
    located,
    validation_problems,
)
from langchain_answer_metrics.config.openai_models import (
    chat_openai,
    openai_embeddings,
    provider_rate_limiter,
    retry_layer,
)
from langchain_answer_metrics.config.panel import Panel, display_url
from langchain_answer_metrics.config.providers import (
    LOCAL_PLACEHOLDER_KEY,
    OPENAI_BASE_URL,
    Endpoint,
    checked_entries,
    is_loopback,
)
from langchain_answer_metrics.config.yaml_file import key_lines, parse_yaml
from langchain_answer_metrics.core.prices import Price
from langchain_answer_metrics.core.redaction import register_secret, register_url_credentials
from langchain_answer_metrics.judging.judges import Embedder, Judge
from langchain_answer_metrics.judging.request import DEFAULT_REQUEST_TIMEOUT

__all__ = [
    "DEFAULT_EMBEDDING_MODEL",
    "DEFAULT_JUDGE_MODEL",
    "load_config",
    "panel_from_base_url",
    "panel_from_mapping",
]

# Named after the package, as when all of config was one module.
logger = logging.getLogger("langchain_answer_metrics.config")

DEFAULT_JUDGE_MODEL = "gpt-4o-mini"
"""Judge used when no config file is given (override: ``ANSWER_METRICS_JUDGE_MODEL``)."""

DEFAULT_EMBEDDING_MODEL = "text-embedding-3-small"
"""Embedding model used when no config file is given
(override: ``ANSWER_METRICS_EMBEDDING_MODEL``)."""

JUDGE_MODEL_ENV = "ANSWER_METRICS_JUDGE_MODEL"
EMBEDDING_MODEL_ENV = "ANSWER_METRICS_EMBEDDING_MODEL"
TIMEOUT_ENV = "ANSWER_METRICS_TIMEOUT"
"""Request deadline of a panel built without a file (``--base-url``, the environment)."""

# Texts per embeddings request when the config does not say (Embedder's default).
DEFAULT_BATCH_SIZE = int(Embedder.model_fields["batch_size"].default)


def load_config(path: str | Path | None = None, *, env: Mapping[str, str] | None = None) -> Panel:
    """Build the panel from a YAML file, or from the environment when ``path`` is None.

    ``env`` replaces ``os.environ`` for reading keys and defaults (handy in tests)::

        panel = load_config("models.yaml", env={"OPENROUTER_API_KEY": "..."})

    Raises :class:`ConfigError` naming the key path of every problem found.
    """
    environ: Mapping[str, str] = os.environ if env is None else env
    if path is None:
        return _panel_from_env(environ)
    file = Path(path).expanduser()
    text = read_config_text(file)
    data = parse_yaml(text, source=str(file))
    try:
        return panel_from_mapping(data, env=environ, source=str(file))
    except ConfigError as error:  # a problem in ``metrics:`` is shown at its line
        raise (
            config_error(str(file), located(error.problems, key_lines(text)))
            if (error.problems)
            else error
        ) from None


def panel_from_mapping(
    data: Mapping[str, Any], *, env: Mapping[str, str] | None = None, source: str = "config"
) -> Panel:
    """Build the panel from an already parsed config (the YAML file's content as a dict)."""
    environ: Mapping[str, str] = os.environ if env is None else env
    if not isinstance(data, Mapping):
        raise ConfigError(
            f"{source}: the top level must be a mapping (providers:, chat_models:...)"
        )
    try:
        config = schema.ModelsConfig.model_validate(dict(data))
    except ValidationError as error:
        raise config_error(source, validation_problems(error)) from None
    return _build_panel(config, environ, source)


def panel_from_base_url(
    base_url: str,
    *,
    model: str,
    embedding_model: str | None,
    api_key_env: str = "OPENAI_API_KEY",
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> Panel:
    """One judge (and optionally one embedding model) on any OpenAI-compatible endpoint.

    For a CLI ``--base-url``: ``panel_from_base_url("http://localhost:11434/v1",
    model="qwen2.5:7b", embedding_model="nomic-embed-text")``. A server on localhost
    needs no key; any other URL needs the ``api_key_env`` variable to be set.
    ``timeout`` is each request's deadline in seconds (None: ``ANSWER_METRICS_TIMEOUT``
    if set, else 120).
    """
    environ: Mapping[str, str] = os.environ if env is None else env
    try:
        url = schema.check_url(base_url)
    except ValueError as error:
        raise ConfigError(f"base_url: {error}") from None
    return _single_endpoint_panel(
        url,
        model=model,
        embedding_model=embedding_model,
        api_key_env=api_key_env,
        env=environ,
        missing_key=f"environment variable {api_key_env} is not set "
        f"(needed for {display_url(url)})",
        timeout=timeout,
    )


def _panel_from_env(env: Mapping[str, str]) -> Panel:
    base_url = env.get("OPENAI_BASE_URL") or None
    if base_url is not None:
        try:
            base_url = schema.check_url(base_url)
        except ValueError as error:
            raise ConfigError(f"OPENAI_BASE_URL: {error}") from None
    return _single_endpoint_panel(
        base_url or OPENAI_BASE_URL,
        model=env.get(JUDGE_MODEL_ENV) or DEFAULT_JUDGE_MODEL,
        embedding_model=env.get(EMBEDDING_MODEL_ENV) or DEFAULT_EMBEDDING_MODEL,
        api_key_env="OPENAI_API_KEY",
        env=env,
        missing_key="OPENAI_API_KEY is not set: set it to use the default models "
        f"({DEFAULT_JUDGE_MODEL}, {DEFAULT_EMBEDDING_MODEL}), or pass a model config "
        "file (load_config('models.yaml'); see examples/models.yaml)",
    )


def _single_endpoint_panel(
    base_url: str,
    *,
    model: str,
    embedding_model: str | None,
    api_key_env: str,
    env: Mapping[str, str],
    missing_key: str,
    timeout: float | None = None,
) -> Panel:
    deadline = timeout or _timeout_from_env(env)
    key = env.get(api_key_env) or None
    if key is None:
        if not is_loopback(base_url):
            raise ConfigError(missing_key)
        key = LOCAL_PLACEHOLDER_KEY
    else:
        register_secret(key)
    register_url_credentials(base_url)
    api_key = SecretStr(key)
    judges = [
        Judge(
            model=chat_openai(
                model,
                base_url=base_url,
                api_key=api_key,
                options=schema.ChatOptions(temperature=0.0),
                timeout=deadline,
                rate_limiter=None,
                max_retries=None,
            ),
            timeout=deadline,
        )
    ]
    embedders = []
    if embedding_model:
        embedders.append(
            Embedder(
                model=openai_embeddings(
                    embedding_model,
                    base_url=base_url,
                    api_key=api_key,
                    dimensions=None,
                    timeout=deadline,
                    max_retries=None,
                ),
                timeout=deadline,
            )
        )
    panel = Panel(judges=judges, embedders=embedders)
    _log_panel(panel, display_url(base_url))
    return panel


def _timeout_from_env(env: Mapping[str, str]) -> float:
    text = env.get(TIMEOUT_ENV) or None
    if text is None:
        return DEFAULT_REQUEST_TIMEOUT
    try:
        return float(schema.ProviderConfig(timeout=text).timeout or DEFAULT_REQUEST_TIMEOUT)
    except ValidationError as error:
        problem = validation_problems(error)[0][1]
        raise ConfigError(f"{TIMEOUT_ENV}: {problem}") from None


def _judge(entry: schema.ChatModelEntry, endpoint: Endpoint, defaults: schema.ChatOptions) -> Judge:
    chat = chat_openai(
        entry.id,
        base_url=endpoint.base_url,
        api_key=endpoint.api_key,
        options=_merge(defaults, entry.options),
        timeout=endpoint.provider.timeout,
        rate_limiter=endpoint.rate_limiter,
        max_retries=endpoint.max_retries,
    )
    return Judge(
        model=chat,
        name=entry.name,
        method=entry.structured_output or endpoint.provider.structured_output,
        retry=endpoint.policy,
        timeout=endpoint.timeout,
    )


def _embedder(
    entry: schema.EmbeddingModelEntry, endpoint: Endpoint, defaults: schema.EmbeddingOptions
) -> Embedder:
    embeddings = openai_embeddings(
        entry.id,
        base_url=endpoint.base_url,
        api_key=endpoint.api_key,
        dimensions=_merge(defaults, entry.options).dimensions,
        timeout=endpoint.provider.timeout,
        max_retries=endpoint.max_retries,
        batch_size=entry.batch_size or DEFAULT_BATCH_SIZE,
    )
    batching: dict[str, float] = (
        {} if entry.batch_size is None else {"batch_size": entry.batch_size}
    )
    if entry.chars_per_token is not None:
        batching["chars_per_token"] = entry.chars_per_token
    return Embedder(
        model=embeddings,
        name=entry.name,
        retry=endpoint.policy,
        rate_limiter=endpoint.rate_limiter,
        timeout=endpoint.timeout,
        **batching,
    )


def _build_panel(config: schema.ModelsConfig, env: Mapping[str, str], source: str) -> Panel:
    entries, keys = checked_entries(config, env, source)
    policy, max_retries = retry_layer(config.retry)
    limiters = {
        name: provider_rate_limiter(provider.rate_limit)
        for name, provider in config.providers.items()
        if provider.rate_limit is not None
    }
    judges: list[Judge] = []
    embedders: list[Embedder] = []
    prices: dict[str, Price] = {}
    for entry, name in entries:
        endpoint = Endpoint(
            config.providers[name], keys[name], limiters.get(name), policy, max_retries
        )
        model: Judge | Embedder
        if isinstance(entry, schema.ChatModelEntry):
            model = _judge(entry, endpoint, config.chat_models.default_options)
            judges.append(model)
        else:
            model = _embedder(entry, endpoint, config.embedding_models.default_options)
            embedders.append(model)
        if entry.price is not None:
            prices[model.label] = Price(**entry.price.model_dump())
    breaker = config.retry.max_consecutive_failures if config.retry is not None else None
    panel = Panel(
        judges=judges,
        embedders=embedders,
        prices=prices,
        max_consecutive_failures=breaker,
        metrics=dict(config.metrics),
    )
    _log_panel(panel, source)
    return panel


OptionsT = typing.TypeVar("OptionsT", schema.ChatOptions, schema.EmbeddingOptions)


def _merge(defaults: OptionsT, override: OptionsT) -> OptionsT:
    """Per-model options win over ``default_options``, key by key."""
    return defaults.model_copy(update=override.model_dump(exclude_unset=True))


def _log_panel(panel: Panel, source: str) -> None:
    logger.debug(
        "model panel from %s: judges=%s embedders=%s",
        source,
        [judge.label for judge in panel.judges],
        [embedder.label for embedder in panel.embedders],
    )
