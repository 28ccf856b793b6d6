"""The YAML schema of a model config: its sections, and how durations, URLs and names parse.

Pure validation: nothing here reads the environment or builds a model. Unknown keys are
errors (a typo like ``temprature`` must not be silently ignored); turning pydantic's
errors into key paths and suggestions is :mod:`.errors`' job.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    model_validator,
)

import langchain_answer_metrics.judging.limits as limits
from langchain_answer_metrics.config.judges import (
    MAX_DECLARED_METRICS,
    JudgeDeclaration,
    check_metric_name,
    declares_judge,
)
from langchain_answer_metrics.judging.endpoints import MAX_CONSECUTIVE_FAILURES_SETTING
from langchain_answer_metrics.judging.judges import StructuredMethod

__all__ = [
    "RETRYABLE_HTTP_CODES",
    "ChatModelEntry",
    "ChatModelsSection",
    "ChatOptions",
    "ChatPrice",
    "EmbeddingModelEntry",
    "EmbeddingModelsSection",
    "EmbeddingOptions",
    "EmbeddingPrice",
    "ModelsConfig",
    "ProviderConfig",
    "RetryConfig",
    "check_http_code",
    "check_url",
]

MAX_DURATION_SECONDS = 3600.0
"""The longest duration (timeout, retry interval, jitter) a config may set."""

MIN_RATE_LIMIT = 0.01
"""The lowest ``rate_limit`` a config may set, in requests per second (one request every
100 s): below it a run would stall for hours on its first requests."""

MAX_MODELS = 1000
"""The most entries a config's ``providers:`` or a models ``list:`` may hold. Every judge
is asked about every sample, and each model built takes a few milliseconds: a list
longer than this is a generated file gone wrong, refused at once."""

RETRYABLE_HTTP_CODES: tuple[int, ...] = (408, 409, 429, 500, 502, 503, 504)
"""HTTP codes ``retry.on_http_codes`` accepts: the transient ones the openai client retries."""


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
    # .inf or a day would stall a run for ever on the first 429 or hung request.
    if not math.isfinite(seconds) or seconds > MAX_DURATION_SECONDS:
        raise ValueError(f"must be at most {MAX_DURATION_SECONDS:g} seconds")
    return seconds


def _check_rate_limit(value: float) -> float:
    if value < MIN_RATE_LIMIT:
        raise ValueError(
            f"must be at least {MIN_RATE_LIMIT:g} requests per second (one request every "
            f"{1 / MIN_RATE_LIMIT:g} s); a lower rate would stall the run"
        )
    return value


def _at_most_max_models(value: Any) -> Any:
    # Before the entries are validated: 10,000 of them would all be checked first.
    if isinstance(value, (list, dict)) and len(value) > MAX_MODELS:
        raise ValueError(
            f"has {len(value):,} entries; at most {MAX_MODELS:,} are allowed (a generated "
            "file gone wrong?)"
        )
    return value


def check_http_code(code: int) -> int:
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


def check_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError("must be an http:// or https:// URL")
    return url.rstrip("/")


Duration = Annotated[float, BeforeValidator(_parse_duration)]
PositiveDuration = Annotated[float, BeforeValidator(_parse_duration), Field(gt=0)]
HttpCode = Annotated[int, AfterValidator(check_http_code)]
EnvName = Annotated[str, AfterValidator(_check_env_name)]
Url = Annotated[str, AfterValidator(check_url)]
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
    rate_limit: Annotated[float, AfterValidator(_check_rate_limit)] | None = Field(
        default=None,
        le=100_000,
        description="Requests per second across all models of the provider (at least 0.01).",
    )
    timeout: PositiveDuration | None = Field(
        default=None,
        description="Deadline of each request as a whole, first byte sent to last byte "
        "received (default 120 s).",
    )
    structured_output: StructuredMethod | None = Field(
        default=None, description="Default structured-output method for its chat models."
    )


class RetryConfig(_Section):
    """Backoff retries done by the metrics (the openai client's own retries are then off)."""

    on_http_codes: list[HttpCode] = Field(default_factory=lambda: list(RETRYABLE_HTTP_CODES))
    initial_interval: Duration = limits.DEFAULT_INITIAL_DELAY
    max_interval: Duration = limits.DEFAULT_MAX_DELAY
    multiplier: float = Field(default=limits.DEFAULT_BACKOFF_MULTIPLIER, ge=1, le=10)
    max_attempts: int = Field(default=limits.DEFAULT_MAX_ATTEMPTS, ge=1, le=20)
    jitter: Duration = 0.0
    max_consecutive_failures: int | None = Field(
        default=None,
        ge=1,
        le=MAX_CONSECUTIVE_FAILURES_SETTING,
        description="Requests in a row to one endpoint failing (connection errors, timeouts, "
        "5xx; after retries) that stop a run: the circuit breaker "
        f"(None: {limits.DEFAULT_MAX_CONSECUTIVE_FAILURES}).",
    )

    @model_validator(mode="after")
    def _intervals_ordered(self) -> RetryConfig:
        if self.max_interval < self.initial_interval:
            raise ValueError("max_interval must not be shorter than initial_interval")
        return self


class ChatOptions(_Section):
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1, le=10_000_000)
    top_p: float | None = Field(default=None, gt=0, le=1)
    seed: int | None = None


MAX_PRICE_PER_MILLION = 10_000.0
"""The highest price (USD per million tokens) a config may set: a typo guard."""


def _usd_per_million(value: Any) -> Any:
    # ``input_per_million: yes`` is a mistake, not $1.
    if isinstance(value, bool):
        raise ValueError("must be a number of USD per million tokens, such as 0.15")
    return value


UsdPerMillion = Annotated[
    float,
    BeforeValidator(_usd_per_million),
    Field(ge=0, le=MAX_PRICE_PER_MILLION, allow_inf_nan=False),
]


class ChatPrice(_Section):
    """``price: {input_per_million: X, output_per_million: Y}``: USD per million tokens;
    ``cached_input_per_million: Z`` prices input read from the provider's prompt cache;
    ``batch_input_per_million`` / ``batch_output_per_million`` the Batch API and flex
    tier (default: half)."""

    input_per_million: UsdPerMillion
    output_per_million: UsdPerMillion
    cached_input_per_million: UsdPerMillion | None = None
    batch_input_per_million: UsdPerMillion | None = None
    batch_output_per_million: UsdPerMillion | None = None


class EmbeddingPrice(_Section):
    """``price: {input_per_million: X}``: embedding models are billed for input only."""

    input_per_million: UsdPerMillion

    @model_validator(mode="before")
    @classmethod
    def _input_only(cls, data: Any) -> Any:
        if isinstance(data, dict) and "output_per_million" in data:
            raise ValueError(
                "output_per_million: embedding models are billed for input only; "
                "give input_per_million alone"
            )
        return data


class ChatModelEntry(_Section):
    id: ModelId
    provider: str | None = Field(default=None, description="May be omitted with one provider.")
    name: str | None = Field(default=None, description="Display name; defaults to the id.")
    options: ChatOptions = ChatOptions()
    structured_output: StructuredMethod | None = None
    price: ChatPrice | None = Field(default=None, description="Overrides the built-in price.")


class ChatModelsSection(_Section):
    default_options: ChatOptions = ChatOptions()
    # ``list`` is the YAML key (as in the spec); the attribute avoids shadowing the builtin.
    models: Annotated[list[ChatModelEntry], BeforeValidator(_at_most_max_models)] = Field(
        default_factory=list, alias="list"
    )


class EmbeddingOptions(_Section):
    dimensions: int | None = Field(default=None, ge=1, le=100_000)


class EmbeddingModelEntry(_Section):
    id: ModelId
    provider: str | None = None
    name: str | None = None
    options: EmbeddingOptions = EmbeddingOptions()
    batch_size: int | None = Field(default=None, ge=1, le=100_000, description="Texts per request.")
    chars_per_token: float | None = Field(
        default=None,
        gt=0,
        le=100,
        description="Characters per token when counting tokens for chunking (default 3.0).",
    )
    price: EmbeddingPrice | None = Field(default=None, description="Overrides the built-in price.")


class EmbeddingModelsSection(_Section):
    default_options: EmbeddingOptions = EmbeddingOptions()
    models: Annotated[list[EmbeddingModelEntry], BeforeValidator(_at_most_max_models)] = Field(
        default_factory=list, alias="list"
    )


def _few_metrics(value: Any) -> Any:
    if isinstance(value, dict) and len(value) > MAX_DECLARED_METRICS:
        raise ValueError(
            f"declares {len(value):,} metrics; at most {MAX_DECLARED_METRICS} are allowed"
        )
    return value


MetricName = Annotated[str, AfterValidator(check_metric_name)]


SETTINGS_FIELD = "metric_settings"
"""Where :class:`ModelsConfig` keeps the ``metrics:`` entries that give a built-in metric's
settings (the file has no key of that name: they are written under ``metrics:``)."""


class ModelsConfig(_Section):
    """The whole YAML file (see ``examples/models.yaml``); ``metrics:`` declares judges of
    your own (:class:`~.judges.JudgeDeclaration`) and gives the built-in metrics' settings
    (kept apart, in :attr:`metric_settings`: see :func:`~.judges.declares_judge`)."""

    providers: Annotated[dict[str, ProviderConfig], BeforeValidator(_at_most_max_models)] = Field(
        default_factory=dict
    )
    retry: RetryConfig | None = None
    chat_models: ChatModelsSection = ChatModelsSection()
    embedding_models: EmbeddingModelsSection = EmbeddingModelsSection()
    metrics: Annotated[dict[MetricName, JudgeDeclaration], BeforeValidator(_few_metrics)] = Field(
        default_factory=dict
    )
    metric_settings: dict[MetricName, dict[str, Any]] = Field(
        default_factory=dict,
        description="The ``metrics:`` entries that give a built-in metric's settings, by the "
        "metric's name, as written (the face that builds the metrics checks them against "
        "the registry).",
    )

    @model_validator(mode="before")
    @classmethod
    def _settings_apart(cls, data: Any) -> Any:
        """The ``metrics:`` entries that declare no judge go to ``metric_settings``."""
        if not isinstance(data, dict):
            return data
        if SETTINGS_FIELD in data:
            raise ValueError(
                f"{SETTINGS_FIELD}: unknown key (give a built-in metric's settings under "
                "metrics:, e.g. metrics: {trajectory_match: {mode: unordered}})"
            )
        entries = data.get("metrics")
        if not isinstance(entries, dict):
            return data
        settings = {name: entry for name, entry in entries.items() if not declares_judge(entry)}
        if not settings:
            return data
        declared = {name: entry for name, entry in entries.items() if name not in settings}
        return {**data, "metrics": declared, SETTINGS_FIELD: settings}
