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
:mod:`langchain_answer_metrics.core.redaction`, so a provider's error that quotes it is redacted
wherever the package records or prints it.

One job per module:

- :mod:`.schema`: the YAML schema (sections; duration, URL and env-name parsing);
- :mod:`.errors`: :class:`ConfigError`, key paths and "did you mean" suggestions;
- :mod:`.panel`: the :class:`Panel` and its credential-free description;
- :mod:`.openai_models`: ChatOpenAI / OpenAIEmbeddings, rate limiters, the retry layer;
- :mod:`.build`: :func:`load_config` and the other ways to build a panel;
- :mod:`.judges`: the ``metrics:`` section, judges of your own (:class:`JudgeDeclaration`);
- :mod:`.declared`: :func:`declared_metrics` and :func:`given_settings`, that section read
  without building a model.
"""

from langchain_answer_metrics.config.build import (
    DEFAULT_EMBEDDING_MODEL,
    DEFAULT_JUDGE_MODEL,
    load_config,
    panel_from_base_url,
    panel_from_mapping,
)
from langchain_answer_metrics.config.declared import declared_metrics, given_settings
from langchain_answer_metrics.config.errors import ConfigError
from langchain_answer_metrics.config.judges import JudgeDeclaration, JudgeOutput
from langchain_answer_metrics.config.openai_models import exceptions_for_http_codes
from langchain_answer_metrics.config.panel import Panel
from langchain_answer_metrics.config.schema import (
    RETRYABLE_HTTP_CODES,
    ChatModelEntry,
    ChatOptions,
    EmbeddingModelEntry,
    EmbeddingOptions,
    ModelsConfig,
    ProviderConfig,
    RetryConfig,
)

__all__ = [
    "DEFAULT_EMBEDDING_MODEL",
    "DEFAULT_JUDGE_MODEL",
    "RETRYABLE_HTTP_CODES",
    "ChatModelEntry",
    "ChatOptions",
    "ConfigError",
    "EmbeddingModelEntry",
    "EmbeddingOptions",
    "JudgeDeclaration",
    "JudgeOutput",
    "ModelsConfig",
    "Panel",
    "ProviderConfig",
    "RetryConfig",
    "declared_metrics",
    "exceptions_for_http_codes",
    "given_settings",
    "load_config",
    "panel_from_base_url",
    "panel_from_mapping",
]
