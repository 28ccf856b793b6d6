"""The metrics of a batch run: copies whose OpenAI judges and embedders are batch stand-ins
(made as the cost estimate's dry run makes its copies: :class:`~..metrics.stand_ins.StandIns`).

Which models can go through batches is read from the model object (an OpenAI-style chat
model: it builds chat-completions payloads and has an openai client; an OpenAI-style
embeddings model: its client creates embeddings and has the Batch API), then asked of its
endpoint (:meth:`~..judging.batch.provider.BatchProvider.probe`), never looked up in a
list of providers. A model that cannot stays live when another model of the run can (a
mixed panel); when none can, batch mode is refused before any judge request. Embeddings
go through batches too unless ``embeddings=False`` (``batch_embeddings=False``) keeps them
live; an endpoint that refuses an embeddings batch sends them live from then on.

    >>> panel = BatchPanel(BatchLines())
    >>> copies = panel.metrics(metrics)
    >>> await panel.probe()
"""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

from langchain_answer_metrics.judging.batch.lines import BatchLines, Group
from langchain_answer_metrics.judging.batch.provider import BatchProvider, BatchUnavailableError
from langchain_answer_metrics.judging.batch.standin import (
    BatchChatModel,
    BatchEmbedder,
    BatchJudge,
    LineEmbeddingsClient,
    is_openai_chat_model,
    is_openai_embeddings,
)
from langchain_answer_metrics.judging.judges import Embedder, Judge, wrapped_model
from langchain_answer_metrics.judging.limits import DEFAULT_CLIENT_RETRIES
from langchain_answer_metrics.metrics.stand_ins import StandIns

__all__ = ["BatchPanel", "is_openai_chat_model", "is_openai_embeddings"]


def _attempts(member: Judge | Embedder, real: Any) -> int:
    """A line's attempts: the member's retry policy, else its client's retries plus one."""
    if member.retry is not None:
        return member.retry.max_attempts
    retries = getattr(real, "max_retries", None)
    return (retries if isinstance(retries, int) else DEFAULT_CLIENT_RETRIES) + 1


class BatchPanel(StandIns):
    """Batch copies of metrics, one stand-in per real model and label, so requests shared
    in a live run stay shared; the providers to probe, one per endpoint and model.

    Attributes:
        batched: ``{label: group}`` of the judges and embedders sent through batches.
        live: labels of the judges and embedders that stay live, and why.
    """

    def __init__(self, lines: BatchLines, *, embeddings: bool = True) -> None:
        super().__init__()
        self.lines = lines
        self.embeddings = embeddings
        self.batched: dict[str, Group] = {}
        self.live: dict[str, str] = {}

    def _group(self, label: str, model: str, client: Any, kind: str, deployment: Any) -> Group:
        provider = BatchProvider(client, label)
        group = Group(
            label=label,
            model=str(deployment or model) if provider.azure else model,
            base_url=str(client.base_url),
            endpoint=provider.endpoint(kind),
            deployment=str(deployment) if provider.azure and deployment else None,
            provider=provider,
        )
        self.batched.setdefault(label, group)
        return group

    def chat_stand_in(self, model: Any, judge: Judge) -> Any:
        if not is_openai_chat_model(model):
            return model
        group = self._group(
            judge.label,
            str(getattr(model, "model_name", "") or ""),
            model.root_client,
            "chat/completions",
            getattr(model, "deployment_name", None),
        )
        return BatchChatModel(
            real=model,
            group=group,
            lines=self.lines,
            max_attempts=_attempts(judge, model),
            cache=model.cache,
        )

    def judge_copy(self, judge: Judge) -> Judge:
        if not is_openai_chat_model(wrapped_model(judge.model)):
            self.live.setdefault(judge.label, "judge")
            return judge
        return BatchJudge(
            model=self.swap_chat(judge.model, judge),
            label=judge.label,
            method=judge.structured_method,
            max_reasks=judge.max_reasks,
            supports_n=judge.can_sample_n,
            timeout=None,
        )

    def embeddings_stand_in(self, model: Any, embedder: Embedder) -> Any:
        if not (self.embeddings and is_openai_embeddings(model)):
            return model
        group = self._group(
            embedder.label,
            str(getattr(model, "model", "") or ""),
            model.client._client,
            "embeddings",
            getattr(model, "deployment", None),
        )
        client = LineEmbeddingsClient(model, group, self.lines, _attempts(embedder, model))
        return model.model_copy(update={"async_client": client})

    def embedder_copy(self, embedder: Embedder) -> Embedder:
        model = self.swap_embeddings(embedder)
        if model is embedder.model:
            self.live.setdefault(embedder.label, "embedder" if self.embeddings else "asked")
            return embedder
        return BatchEmbedder(
            model=model,
            label=embedder.label,
            batch_size=embedder.batch_size,
            chars_per_token=embedder.chars_per_token,
            timeout=None,
        )

    def check(self) -> None:
        """Refuse batch mode when no model can use it; say which models stay live.

        Raises:
            BatchUnavailableError: naming the models, suggesting the live mode.
        """
        judges = [label for label, why in self.live.items() if why == "judge"]
        embedders = [label for label, why in self.live.items() if why == "embedder"]
        if not self.batched and self.live:
            named = "; ".join(
                [f"judge {label} is not one" for label in judges]
                + [f"embedder {label} is not an OpenAI embeddings model" for label in embedders]
                + [f"embedder {e} is sent live (batch_embeddings=False)" for e in self.asked]
            )
            raise BatchUnavailableError(
                f"batch mode needs an OpenAI chat model (ChatOpenAI or an OpenAI-compatible "
                f"endpoint); {named}: run it live (without --batch / batch=True)"
            )
        if judges:
            warnings.warn(
                f"batch mode: judge {', '.join(judges)} is not an OpenAI chat model and "
                "runs live; the others go through the Batch API",
                stacklevel=3,
            )
        if embedders:
            warnings.warn(
                f"batch mode: embedder {', '.join(embedders)} is not an OpenAI embeddings "
                "model and runs live",
                stacklevel=3,
            )

    @property
    def asked(self) -> list[str]:
        """Embedders kept live because the user asked (``batch_embeddings=False``)."""
        return [label for label, why in self.live.items() if why == "asked"]

    async def probe(self) -> None:
        """Ask each endpoint whether it has the Files and Batches API (before any judge
        request).

        Raises:
            BatchUnavailableError: an endpoint answered 404, naming its judge.
        """
        self.check()
        providers = {group.base_url: group.provider for group in self.batched.values()}
        await asyncio.gather(*(provider.probe() for provider in providers.values()))
