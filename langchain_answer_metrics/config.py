"""Build the judge panel (chat models + embedding models) from a YAML file or the environment.

Usage::

    from langchain_answer_metrics.config import load_config

    panel = load_config("models.yaml")  # see examples/models.yaml
    metric = FactualCorrectness(llm=panel.judges, embeddings=panel.embedders)

    panel = load_config()  # no file: OPENAI_API_KEY (+ optional OPENAI_BASE_URL)

Without a file the panel is one judge, ``ANSWER_METRICS_JUDGE_MODEL`` (default
:data:`DEFAULT_JUDGE_MODEL`), and one embedding model, ``ANSWER_METRICS_EMBEDDING_MODEL``
(default :data:`DEFAULT_EMBEDDING_MODEL`), called through the OpenAI API.

API keys are only ever read from environment variables named in the config; they are
never written to a repr, an error message, a log line or a dump of the panel. Each key
read (and the credentials of a ``user:key@`` base URL) is registered with
:mod:`langchain_answer_metrics.redaction`, so a provider's error that quotes it is redacted
wherever the package records or prints it.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import re
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import urlsplit

import yaml
from langchain_core.rate_limiters import InMemoryRateLimiter
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    model_serializer,
    model_validator,
)

from langchain_answer_metrics.judging.judges import Embedder, Judge, RetryPolicy, StructuredMethod
from langchain_answer_metrics.redaction import (
    register_model_secrets,
    register_secret,
    register_url_credentials,
)
from langchain_answer_metrics.strict_options import closest_name

if TYPE_CHECKING:
    from langchain_openai import ChatOpenAI, OpenAIEmbeddings

__all__ = [
    "DEFAULT_EMBEDDING_MODEL",
    "DEFAULT_JUDGE_MODEL",
    "RETRYABLE_HTTP_CODES",
    "ChatModelEntry",
    "ChatOptions",
    "ConfigError",
    "EmbeddingModelEntry",
    "EmbeddingOptions",
    "ModelsConfig",
    "Panel",
    "ProviderConfig",
    "RetryConfig",
    "exceptions_for_http_codes",
    "load_config",
    "panel_from_base_url",
    "panel_from_mapping",
]

logger = logging.getLogger(__name__)

DEFAULT_JUDGE_MODEL = "gpt-4o-mini"
"""Judge used when no config file is given (override: ``ANSWER_METRICS_JUDGE_MODEL``)."""

DEFAULT_EMBEDDING_MODEL = "text-embedding-3-small"
"""Embedding model used when no config file is given
(override: ``ANSWER_METRICS_EMBEDDING_MODEL``)."""

JUDGE_MODEL_ENV = "ANSWER_METRICS_JUDGE_MODEL"
EMBEDDING_MODEL_ENV = "ANSWER_METRICS_EMBEDDING_MODEL"

# Passed explicitly instead of None so that an ``env=`` mapping is the whole truth:
# with None, the openai client would fall back to os.environ["OPENAI_BASE_URL"].
OPENAI_BASE_URL = "https://api.openai.com/v1"

# Servers on this machine (Ollama, vLLM, llama.cpp) accept any key, but the openai
# client refuses to start without one.
LOCAL_PLACEHOLDER_KEY = "not-needed"

RETRYABLE_HTTP_CODES: tuple[int, ...] = (408, 409, 429, 500, 502, 503, 504)
"""HTTP codes ``retry.on_http_codes`` accepts: the transient ones the openai client retries."""


class ConfigError(ValueError):
    """The model config is unusable; the message names each offending key path.

    ``problems`` holds ``(key_path, message)`` pairs for programmatic use.
    """

    def __init__(self, message: str, problems: Sequence[tuple[str, str]] = ()) -> None:
        super().__init__(message)
        self.problems = list(problems)


# --------------------------------------------------------------------------- schema


def _parse_duration(value: Any) -> Any:
    """``2``, ``2.5``, ``"2s"``, ``"2000ms"``, ``"1m"`` -> seconds as float."""
    # bool is an int subclass; ``timeout: yes`` is a mistake, not one second.
    if isinstance(value, bool):
        raise ValueError("must be a duration such as 2000ms, 2s or 2 (seconds)")
    if isinstance(value, (int, float)):
        seconds = float(value)
    elif isinstance(value, str):
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min)?\s*", value)
        if match is None:
            raise ValueError(
                f"{value!r} is not a duration (use e.g. 2000ms, 2s, 1m or a number of seconds)"
            )
        number, unit = float(match.group(1)), match.group(2) or "s"
        seconds = number * {"ms": 0.001, "s": 1.0, "m": 60.0, "min": 60.0}[unit]
    else:
        raise ValueError("must be a duration such as 2000ms, 2s or 2 (seconds)")
    if seconds < 0:
        raise ValueError("must not be negative")
    return seconds


def _check_http_code(code: int) -> int:
    if code not in RETRYABLE_HTTP_CODES:
        allowed = ", ".join(str(c) for c in RETRYABLE_HTTP_CODES)
        raise ValueError(f"{code} is not a retryable HTTP code (allowed: {allowed})")
    return code


def _check_env_name(name: str) -> str:
    # Upper-case only: a pasted key (mixed case, dashes) fails here, and the message
    # deliberately does not echo the value back.
    if not re.fullmatch(r"[A-Z_][A-Z0-9_]*", name):
        raise ValueError(
            "must be the NAME of an environment variable such as OPENROUTER_API_KEY "
            "(upper-case letters, digits, _), not the key itself"
        )
    return name


def _check_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("must be an http:// or https:// URL")
    return url.rstrip("/")


Duration = Annotated[float, BeforeValidator(_parse_duration)]
PositiveDuration = Annotated[float, BeforeValidator(_parse_duration), Field(gt=0)]
HttpCode = Annotated[int, AfterValidator(_check_http_code)]
EnvName = Annotated[str, AfterValidator(_check_env_name)]
Url = Annotated[str, AfterValidator(_check_url)]
ModelId = Annotated[str, Field(min_length=1)]


class _Section(BaseModel):
    # Unknown keys are errors: a typo like ``temprature`` must not be silently ignored.
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class ProviderConfig(_Section):
    """An OpenAI-compatible endpoint; its models share one rate limiter."""

    base_url: Url | None = Field(default=None, description="None: the OpenAI API.")
    api_key_env: EnvName | None = Field(
        default=None,
        description="Name of the environment variable holding the key "
        "(may be omitted for a server on localhost).",
    )
    rate_limit: float | None = Field(
        default=None, gt=0, description="Requests per second across all models of the provider."
    )
    timeout: PositiveDuration | None = Field(default=None, description="Request timeout.")
    structured_output: StructuredMethod | None = Field(
        default=None, description="Default structured-output method for its chat models."
    )


class RetryConfig(_Section):
    """Backoff retries done by the metrics (the openai client's own retries are then off)."""

    on_http_codes: list[HttpCode] = Field(default_factory=lambda: list(RETRYABLE_HTTP_CODES))
    initial_interval: Duration = 2.0
    max_interval: Duration = 30.0
    multiplier: float = Field(default=2.0, ge=1)
    max_attempts: int = Field(default=4, ge=1)
    jitter: Duration = 0.0

    @model_validator(mode="after")
    def _intervals_ordered(self) -> RetryConfig:
        if self.max_interval < self.initial_interval:
            raise ValueError("max_interval must not be shorter than initial_interval")
        return self


class ChatOptions(_Section):
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1)
    top_p: float | None = Field(default=None, gt=0, le=1)
    seed: int | None = None


class ChatModelEntry(_Section):
    id: ModelId
    provider: str | None = Field(default=None, description="May be omitted with one provider.")
    name: str | None = Field(default=None, description="Display name; defaults to the id.")
    options: ChatOptions = ChatOptions()
    structured_output: StructuredMethod | None = None


class ChatModelsSection(_Section):
    default_options: ChatOptions = ChatOptions()
    # ``list`` is the YAML key (as in the spec); the attribute avoids shadowing the builtin.
    models: list[ChatModelEntry] = Field(default_factory=list, alias="list")


class EmbeddingOptions(_Section):
    dimensions: int | None = Field(default=None, ge=1)


class EmbeddingModelEntry(_Section):
    id: ModelId
    provider: str | None = None
    name: str | None = None
    options: EmbeddingOptions = EmbeddingOptions()
    batch_size: int | None = Field(default=None, ge=1, description="Texts per request.")


class EmbeddingModelsSection(_Section):
    default_options: EmbeddingOptions = EmbeddingOptions()
    models: list[EmbeddingModelEntry] = Field(default_factory=list, alias="list")


class ModelsConfig(_Section):
    """The whole YAML file (see ``examples/models.yaml``)."""

    providers: dict[str, ProviderConfig] = Field(default_factory=dict)
    retry: RetryConfig | None = None
    chat_models: ChatModelsSection = ChatModelsSection()
    embedding_models: EmbeddingModelsSection = EmbeddingModelsSection()


# --------------------------------------------------------------------------- panel


class Panel(BaseModel):
    """The models every metric takes: ``Metric(llm=panel.judges, embeddings=panel.embedders)``.

    Dumping a panel (``model_dump``/``model_dump_json``) or its repr gives a description
    of its models (ids, endpoints without credentials, retry settings), never the model
    objects or their keys. The keys of its models are registered for redaction.
    """

    model_config = ConfigDict(frozen=True)

    judges: list[Judge] = Field(default_factory=list)
    embedders: list[Embedder] = Field(default_factory=list)

    @model_validator(mode="after")
    def _register_secrets(self) -> Panel:
        members: list[Judge | Embedder] = [*self.judges, *self.embedders]
        for member in members:
            register_model_secrets(member.model)
        return self

    def __repr__(self) -> str:
        return f"Panel({self._describe()!r})"

    __str__ = __repr__

    @property
    def llm(self) -> list[Judge]:
        """Alias of ``judges``, named like the metrics' ``llm=`` argument."""
        return self.judges

    @property
    def embeddings(self) -> list[Embedder]:
        """Alias of ``embedders``, named like the metrics' ``embeddings=`` argument."""
        return self.embedders

    @model_serializer
    def _describe(self) -> dict[str, Any]:
        return {
            "judges": [_describe_judge(judge) for judge in self.judges],
            "embedders": [_describe_embedder(embedder) for embedder in self.embedders],
        }


def _describe_retry(policy: RetryPolicy | None) -> dict[str, Any] | None:
    if policy is None:
        return None
    return {
        "retry_on": [cls.__name__ for cls in policy.retry_on],
        "max_attempts": policy.max_attempts,
        "initial_delay": policy.initial_delay,
        "max_delay": policy.max_delay,
        "multiplier": policy.multiplier,
    }


def _describe_judge(judge: Judge) -> dict[str, Any]:
    model = judge.model
    return {
        "name": judge.label,
        "model": getattr(model, "model_name", None),
        "base_url": _shown_url(getattr(model, "openai_api_base", None)),
        "method": judge.structured_method,
        "temperature": getattr(model, "temperature", None),
        "max_tokens": getattr(model, "max_tokens", None),
        "top_p": getattr(model, "top_p", None),
        "retry": _describe_retry(judge.retry),
    }


def _describe_embedder(embedder: Embedder) -> dict[str, Any]:
    model = embedder.model
    return {
        "name": embedder.label,
        "model": getattr(model, "model", None),
        "base_url": _shown_url(getattr(model, "openai_api_base", None)),
        "dimensions": getattr(model, "dimensions", None),
        "retry": _describe_retry(embedder.retry),
    }


# --------------------------------------------------------------------------- public API


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
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read config file {file}: {error}") from None
    data = _parse_yaml(text, source=str(file))
    return panel_from_mapping(data, env=environ, source=str(file))


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
        config = ModelsConfig.model_validate(dict(data))
    except ValidationError as error:
        raise _config_error(source, _validation_problems(error)) from None
    return _build_panel(config, environ, source)


def panel_from_base_url(
    base_url: str,
    *,
    model: str,
    embedding_model: str | None,
    api_key_env: str = "OPENAI_API_KEY",
    env: Mapping[str, str] | None = None,
) -> Panel:
    """One judge (and optionally one embedding model) on any OpenAI-compatible endpoint.

    For a CLI ``--base-url``: ``panel_from_base_url("http://localhost:11434/v1",
    model="qwen2.5:7b", embedding_model="nomic-embed-text")``. A server on localhost
    needs no key; any other URL needs the ``api_key_env`` variable to be set.
    """
    environ: Mapping[str, str] = os.environ if env is None else env
    try:
        url = _check_url(base_url)
    except ValueError as error:
        raise ConfigError(f"base_url: {error}") from None
    return _single_endpoint_panel(
        url,
        model=model,
        embedding_model=embedding_model,
        api_key_env=api_key_env,
        env=environ,
        missing_key=f"environment variable {api_key_env} is not set "
        f"(needed for {_display_url(url)})",
    )


# --------------------------------------------------------------------------- building


def _panel_from_env(env: Mapping[str, str]) -> Panel:
    base_url = env.get("OPENAI_BASE_URL") or None
    if base_url is not None:
        try:
            base_url = _check_url(base_url)
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
) -> Panel:
    key = env.get(api_key_env) or None
    if key is None:
        if not _is_loopback(base_url):
            raise ConfigError(missing_key)
        key = LOCAL_PLACEHOLDER_KEY
    else:
        register_secret(key)
    register_url_credentials(base_url)
    api_key = SecretStr(key)
    judges = [
        Judge(
            model=_chat_model(
                model,
                base_url=base_url,
                api_key=api_key,
                options=ChatOptions(temperature=0.0),
                timeout=None,
                rate_limiter=None,
                max_retries=None,
            )
        )
    ]
    embedders = []
    if embedding_model:
        embedders.append(
            Embedder(
                model=_embedding_model(
                    embedding_model,
                    base_url=base_url,
                    api_key=api_key,
                    dimensions=None,
                    timeout=None,
                    max_retries=None,
                )
            )
        )
    panel = Panel(judges=judges, embedders=embedders)
    _log_panel(panel, _display_url(base_url))
    return panel


def _build_panel(config: ModelsConfig, env: Mapping[str, str], source: str) -> Panel:
    problems: list[tuple[str, str]] = []
    entries: list[tuple[str, ChatModelEntry | EmbeddingModelEntry]] = [
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
        raise _config_error(source, problems)

    policy, max_retries = _retry_layer(config.retry)
    # One limiter per provider, shared by all its models: the provider's limit is global.
    limiters = {
        name: _rate_limiter(provider.rate_limit)
        for name, provider in config.providers.items()
        if provider.rate_limit is not None
    }

    judges: list[Judge] = []
    embedders: list[Embedder] = []
    for (_, entry), provider_name in zip(entries, resolved, strict=True):
        assert provider_name is not None  # problems above would have raised
        provider = config.providers[provider_name]
        base_url = provider.base_url or OPENAI_BASE_URL
        if isinstance(entry, ChatModelEntry):
            options = _merge(config.chat_models.default_options, entry.options)
            chat = _chat_model(
                entry.id,
                base_url=base_url,
                api_key=keys[provider_name],
                options=options,
                timeout=provider.timeout,
                rate_limiter=limiters.get(provider_name),
                max_retries=max_retries,
            )
            judges.append(
                Judge(
                    model=chat,
                    name=entry.name,
                    method=entry.structured_output or provider.structured_output,
                    retry=policy,
                )
            )
        else:
            embedding_options = _merge(config.embedding_models.default_options, entry.options)
            embeddings = _embedding_model(
                entry.id,
                base_url=base_url,
                api_key=keys[provider_name],
                dimensions=embedding_options.dimensions,
                timeout=provider.timeout,
                max_retries=max_retries,
            )
            batching = {} if entry.batch_size is None else {"batch_size": entry.batch_size}
            embedders.append(
                Embedder(
                    model=embeddings,
                    name=entry.name,
                    retry=policy,
                    rate_limiter=limiters.get(provider_name),
                    **batching,
                )
            )
    panel = Panel(judges=judges, embedders=embedders)
    _log_panel(panel, source)
    return panel


def _resolve_provider(
    requested: str | None, providers: Mapping[str, ProviderConfig]
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
    name: str, provider: ProviderConfig, env: Mapping[str, str]
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
    if _is_loopback(base_url):
        return SecretStr(LOCAL_PLACEHOLDER_KEY), None
    return None, (
        f"required for {_display_url(base_url)}: the name of the environment variable "
        "that holds the API key"
    )


OptionsT = typing.TypeVar("OptionsT", ChatOptions, EmbeddingOptions)


def _merge(defaults: OptionsT, override: OptionsT) -> OptionsT:
    """Per-model options win over ``default_options``, key by key."""
    return defaults.model_copy(update=override.model_dump(exclude_unset=True))


def _retry_layer(retry: RetryConfig | None) -> tuple[RetryPolicy | None, int | None]:
    """(policy for the metrics, max_retries for the openai client): never both layers.

    No ``retry:`` section keeps the client's own retries (None = its default, 2).
    """
    if retry is None:
        return None, None
    if not retry.on_http_codes:
        return None, 0  # ``on_http_codes: []`` switches retries off entirely
    policy = RetryPolicy(
        retry_on=exceptions_for_http_codes(retry.on_http_codes),
        max_attempts=retry.max_attempts,
        initial_delay=retry.initial_interval,
        max_delay=retry.max_interval,
        multiplier=retry.multiplier,
        jitter=retry.jitter,
    )
    return policy, 0


def exceptions_for_http_codes(codes: Sequence[int]) -> tuple[type[BaseException], ...]:
    """The openai exception classes raised for these HTTP codes (for ``RetryPolicy.retry_on``).

    The plain openai classes are used, not langchain-core's ``ModelError`` ones:
    ChatOpenAI raises subclasses of both, but OpenAIEmbeddings raises the openai classes
    unwrapped. The openai client raises ``InternalServerError`` for every status >= 500,
    so listing any 5xx code retries them all. An HTTP 408 *response* surfaces as a bare
    ``APIStatusError`` that no class singles out, so 408 maps to client-side timeouts.
    """
    import openai

    by_code: dict[int, tuple[type[BaseException], ...]] = {
        408: (openai.APITimeoutError, openai.APIConnectionError),
        409: (openai.ConflictError,),
        429: (openai.RateLimitError,),
    }
    server_errors = (openai.InternalServerError, openai.APIConnectionError)
    found: dict[type[BaseException], None] = {}
    for code in codes:
        _check_http_code(code)
        for cls in by_code.get(code, server_errors):
            found[cls] = None
    return tuple(found)


def _rate_limiter(requests_per_second: float) -> InMemoryRateLimiter:
    # Poll at least twice per token interval, or a fast limit (e.g. 50/s) would be capped
    # by the default 0.1 s polling.
    return InMemoryRateLimiter(
        requests_per_second=requests_per_second,
        check_every_n_seconds=min(0.1, 0.5 / requests_per_second),
        max_bucket_size=1,
    )


def _chat_model(
    model_id: str,
    *,
    base_url: str,
    api_key: SecretStr,
    options: ChatOptions,
    timeout: float | None,
    rate_limiter: InMemoryRateLimiter | None,
    max_retries: int | None,
) -> ChatOpenAI:
    from langchain_openai import ChatOpenAI

    kwargs: dict[str, Any] = options.model_dump(exclude_none=True)
    if timeout is not None:
        kwargs["timeout"] = timeout
    if max_retries is not None:
        kwargs["max_retries"] = max_retries
    # Gateways and local servers implement Chat Completions, not the Responses API.
    return ChatOpenAI(
        model=model_id,
        base_url=base_url,
        api_key=api_key,
        rate_limiter=rate_limiter,
        use_responses_api=False,
        **kwargs,
    )


def _embedding_model(
    model_id: str,
    *,
    base_url: str,
    api_key: SecretStr,
    dimensions: int | None,
    timeout: float | None,
    max_retries: int | None,
) -> OpenAIEmbeddings:
    from langchain_openai import OpenAIEmbeddings

    kwargs: dict[str, Any] = {}
    if dimensions is not None:
        kwargs["dimensions"] = dimensions
    if timeout is not None:
        kwargs["timeout"] = timeout
    if max_retries is not None:
        kwargs["max_retries"] = max_retries
    # The context-length check downloads tiktoken files and only knows OpenAI's models.
    return OpenAIEmbeddings(
        model=model_id,
        openai_api_base=base_url,
        openai_api_key=api_key,
        check_embedding_ctx_length=False,
        **kwargs,
    )


def _log_panel(panel: Panel, source: str) -> None:
    logger.debug(
        "model panel from %s: judges=%s embedders=%s",
        source,
        [judge.label for judge in panel.judges],
        [embedder.label for embedder in panel.embedders],
    )


# --------------------------------------------------------------------------- helpers


def _is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _shown_url(url: str | None) -> str | None:
    return None if url is None else _display_url(url)


def _display_url(url: str) -> str:
    """The URL without user:password@ or a query string, which may carry credentials."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def _parse_yaml(text: str, *, source: str) -> Any:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        # Built from the problem and position only: the default str() quotes the
        # offending line, which could hold a pasted key.
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or "invalid YAML"
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise ConfigError(f"{source}: invalid YAML at {where}{problem}") from None
    if data is None:
        raise ConfigError(f"{source}: the file is empty")
    return data


def _config_error(source: str, problems: Sequence[tuple[str, str]]) -> ConfigError:
    lines = [f"{path}: {message}" if path else message for path, message in problems]
    if len(lines) == 1:
        return ConfigError(f"{source}: {lines[0]}", problems)
    listing = "\n".join(f"  {line}" for line in lines)
    return ConfigError(f"{source}: {len(lines)} problems:\n{listing}", problems)


def _validation_problems(error: ValidationError) -> list[tuple[str, str]]:
    problems = []
    # include_input=False: inputs are never shown, whatever field a key was pasted into.
    for item in error.errors(include_input=False, include_url=False):
        loc = item["loc"]
        problems.append((_dotted(loc), _message(item, loc)))
    return problems


def _dotted(loc: tuple[int | str, ...]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path


def _message(item: Any, loc: tuple[int | str, ...]) -> str:
    kind = item["type"]
    if kind == "extra_forbidden":
        return "unknown key" + _suggestion(str(loc[-1]), _known_keys(loc[:-1]))
    if kind == "missing":
        return "required key is missing"
    if kind == "literal_error":
        expected = item.get("ctx", {}).get("expected", "")
        return f"must be one of {expected}".replace("'", "")
    if kind in ("model_type", "dict_type"):
        return "must be a mapping (key: value)"
    if kind == "list_type":
        return "must be a list"
    message = str(item["msg"])
    if message.startswith("Value error, "):
        return message.removeprefix("Value error, ")
    return message.replace("Input should be", "must be")


def _suggestion(key: str, known: list[str]) -> str:
    if key == "api_key":
        return " (put the key in an environment variable and name it in api_key_env)"
    meant = closest_name(key, known)
    return f" (did you mean {meant}?)" if meant else ""


def _known_keys(loc: tuple[int | str, ...]) -> list[str]:
    """The keys allowed at ``loc``, found by walking the schema's annotations."""
    annotation: Any = ModelsConfig
    for part in loc:
        annotation = _unwrap(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            field = _field_by_key(annotation, str(part))
            if field is None:
                return []
            annotation = field
        elif typing.get_origin(annotation) in (list, dict):
            annotation = typing.get_args(annotation)[-1]
        else:
            return []
    annotation = _unwrap(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [info.alias or name for name, info in annotation.model_fields.items()]
    return []


def _field_by_key(model: type[BaseModel], key: str) -> Any:
    for name, info in model.model_fields.items():
        if key in (name, info.alias):
            return info.annotation
    return None


def _unwrap(annotation: Any) -> Any:
    """Strip ``Optional``/``Annotated`` down to the type that holds the fields."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            args = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
            if len(args) != 1:
                return annotation
            annotation = args[0]
        else:
            return annotation
