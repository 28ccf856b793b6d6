"""The :class:`Panel` a config builds, and how it describes itself without credentials."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, model_serializer, model_validator

from langchain_answer_metrics.config.judges import JudgeDeclaration
from langchain_answer_metrics.core.prices import Price
from langchain_answer_metrics.core.redaction import register_model_secrets
from langchain_answer_metrics.judging.judges import Embedder, Judge
from langchain_answer_metrics.judging.retry import RetryPolicy

__all__ = ["Panel", "display_url"]


class Panel(BaseModel):
    """The models every metric takes: ``Metric(llm=panel.judges, embeddings=panel.embedders)``.

    Dumping a panel (``model_dump``/``model_dump_json``) or its repr gives a description
    of its models (ids, endpoints without credentials, retry settings), never the model
    objects or their keys. The keys of its models are registered for redaction.
    """

    model_config = ConfigDict(frozen=True)

    judges: list[Judge] = Field(default_factory=list)
    embedders: list[Embedder] = Field(default_factory=list)
    prices: dict[str, Price] = Field(
        default_factory=dict,
        description="The config file's ``price:`` of each model, by label: "
        "``prices=`` for ``estimate``, the runner's ``budget=`` and spend.",
    )
    max_consecutive_failures: int | None = Field(
        default=None,
        ge=1,
        description="The config file's ``retry.max_consecutive_failures``: the runner's "
        "``max_consecutive_failures=`` (None: its default, 20).",
    )
    metrics: dict[str, JudgeDeclaration] = Field(
        default_factory=dict,
        description="The judges the config file declares under ``metrics:``, by name "
        "(declarations; the CLI builds them with these judges).",
    )

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


def _shown_url(url: str | None) -> str | None:
    return None if url is None else display_url(url)


def display_url(url: str) -> str:
    """The URL without user:password@ or a query string, which may carry credentials."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"
