"""What a dry run records, and what its requests add up to per model.

The dry run's stand-in models (:mod:`.dry_run`) append each request to a
:class:`Recorder`; :class:`Tally` counts them per model label (requests, prompt tokens,
those a provider's prompt cache is expected to serve, completion tokens as a low/high
range) as they are drained, in the order they were made, so a long dry run keeps none of
its samples' requests; :func:`price_models` prices the sums.

    >>> tally = Tally(default_token_count, count_schema=True, prices=None, builtin_prices=True)
    >>> tally.add(recorder.drain())
    >>> tally.priced()["gpt-4o-mini"].requests
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.messages import BaseMessage
from pydantic import BaseModel, Field

from langchain_answer_metrics.core.prices import Price, PriceTable, price_for
from langchain_answer_metrics.judging.steps.intent import StepIntent
from langchain_answer_metrics.run.estimate.tokens import (
    MESSAGE_OVERHEAD,
    TokenCounter,
    completion_range,
    message_text,
    request_schema,
)


@dataclass
class ChatRequest:
    """One request a dry-run chat model received (or found in the real model's cache)."""

    label: str
    model_id: str
    schema: str
    messages: list[BaseMessage]
    options: dict[str, Any]
    choices: int
    cached: bool
    # What the step asked (None for a request made outside the package's steps).
    intent: StepIntent | None = None


@dataclass
class EmbeddingRequest:
    label: str
    model_id: str
    texts: list[str]
    # The real model's own tokenizer (``count_tokens``), when it has one.
    count_tokens: Callable[[str], int] | None = None


class Recorder:
    """The requests of a dry run not yet tallied, and the embedding texts found in the
    real cache, in the order they were made."""

    def __init__(self) -> None:
        self.chat: list[ChatRequest] = []
        self.embeddings: list[EmbeddingRequest] = []
        self.embedding_hits: list[EmbeddingRequest] = []  # one text each
        self.lock = threading.Lock()

    def drain(self) -> Recorder:
        """What was recorded since the last drain, in order, handed over and forgotten
        here: a long dry run keeps only the requests of the samples in flight."""
        taken = Recorder()
        with self.lock:
            taken.chat, self.chat = self.chat, []
            taken.embeddings, self.embeddings = self.embeddings, []
            taken.embedding_hits, self.embedding_hits = self.embedding_hits, []
        return taken


class EstimateTotal(BaseModel):
    """The whole run: sums over the models."""

    requests: int = 0
    cached: int = Field(
        default=0,
        description="Requests (chat) or texts (embeddings) served from LangChain's cache: free.",
    )
    prompt_tokens: int = 0
    cached_input_tokens: int = Field(
        default=0,
        description="Of prompt_tokens, those a provider's prompt cache is "
        "expected to serve (a repeated static prefix of 1,024+ tokens); in cost_low only.",
    )
    completion_tokens_low: int = 0
    completion_tokens_high: int = 0
    cost_low: float | None = Field(
        default=None, description="USD; None unless every model that makes requests has a price."
    )
    cost_high: float | None = None


class ModelEstimate(EstimateTotal):
    """One model of the run, by its label."""

    label: str
    model_id: str
    kind: Literal["chat", "embedding"]
    price: Price | None = None


# OpenAI's automatic prompt caching: a prefix of 1,024 tokens or more, served in steps
# of 128 tokens, once the same prefix has been sent.
PROMPT_CACHE_MIN_TOKENS = 1024
PROMPT_CACHE_STEP_TOKENS = 128


def _chat_tokens(
    request: ChatRequest, count: TokenCounter, count_schema: bool
) -> tuple[int, int, tuple[str, ...]]:
    """The request's prompt tokens, those of its static prefix, and that prefix's text
    (the schema and every message before the judged data, the last one)."""
    schema = request_schema(request.options) if count_schema else None
    schema_tokens = count(schema) if schema else 0
    texts = [message_text(m) for m in request.messages]
    sizes = [count(text) + MESSAGE_OVERHEAD for text in texts]
    prefix = (schema or "", *(f"{m.type}:{text}" for m, text in zip(request.messages[:-1], texts)))
    return schema_tokens + sum(sizes), schema_tokens + sum(sizes[:-1]), prefix


def cache_served_tokens(prefix_tokens: int) -> int:
    """The tokens of a repeated static prefix a provider's prompt cache serves."""
    if prefix_tokens < PROMPT_CACHE_MIN_TOKENS:
        return 0
    steps = (prefix_tokens - PROMPT_CACHE_MIN_TOKENS) // PROMPT_CACHE_STEP_TOKENS
    return PROMPT_CACHE_MIN_TOKENS + steps * PROMPT_CACHE_STEP_TOKENS


def price_models(models: Iterable[ModelEstimate]) -> None:
    """Set each priced model's ``cost_low`` and ``cost_high`` from its sums."""
    for model in models:
        if model.price is not None:
            model.cost_low = model.price.cost(
                model.prompt_tokens,
                model.completion_tokens_low,
                cached_input_tokens=model.cached_input_tokens,
            )
            model.cost_high = model.price.cost(model.prompt_tokens, model.completion_tokens_high)


class Tally:
    """Per model label, the requests, tokens and costs of a dry run, added up as its
    requests are recorded (:meth:`add`, in the order they were made), so that a dry run
    over many samples keeps none of their requests."""

    def __init__(
        self,
        count: TokenCounter,
        count_schema: bool,
        prices: PriceTable | None,
        builtin_prices: bool,
        model_tokenizers: bool = True,
        local: Iterable[str] = (),
    ) -> None:
        self.count = count
        self.count_schema = count_schema
        self.prices = prices
        self.builtin_prices = builtin_prices
        self.local = frozenset(local)  # served on this machine: no built-in list price
        self.model_tokenizers = model_tokenizers
        self.models: dict[str, ModelEstimate] = {}
        # The static prefixes sent so far, by digest: the provider's prompt cache serves
        # a prefix sent before. A few per step and model, whatever the samples.
        self.prefixes_sent: set[bytes] = set()

    def entry(self, label: str, model_id: str, kind: Literal["chat", "embedding"]) -> ModelEstimate:
        if label not in self.models:
            self.models[label] = ModelEstimate(
                label=label,
                model_id=model_id,
                kind=kind,
                price=price_for(
                    label,
                    model_id,
                    prices=self.prices,
                    builtin=self.builtin_prices and label not in self.local,
                ),
            )
        return self.models[label]

    def add(self, recorder: Recorder) -> None:
        """Count the requests ``recorder`` holds (a :meth:`Recorder.drain`)."""
        count = self.count
        for request in recorder.chat:
            model = self.entry(request.label, request.model_id, "chat")
            if request.cached:
                model.cached += 1
                continue
            model.requests += 1
            tokens, prefix_tokens, prefix = _chat_tokens(request, count, self.count_schema)
            model.prompt_tokens += tokens
            digest = _digest((request.label, *prefix))
            if digest in self.prefixes_sent:
                model.cached_input_tokens += cache_served_tokens(prefix_tokens)
            self.prefixes_sent.add(digest)
            low, high = completion_range(request.schema, count, request.intent, request.choices)
            model.completion_tokens_low += low
            model.completion_tokens_high += high
        for batch in recorder.embeddings:
            model = self.entry(batch.label, batch.model_id, "embedding")
            model.requests += 1
            # An embedding model's own tokenizer (the bundled local model has one) counts
            # its texts, unless the caller chose a counter.
            counter = batch.count_tokens if self.model_tokenizers and batch.count_tokens else count
            model.prompt_tokens += sum(counter(text) for text in batch.texts)
        for hit in recorder.embedding_hits:
            self.entry(hit.label, hit.model_id, "embedding").cached += 1

    def priced(self) -> dict[str, ModelEstimate]:
        price_models(self.models.values())
        return self.models


def _digest(parts: tuple[str, ...]) -> bytes:
    hashed = hashlib.sha256()
    for part in parts:
        encoded = part.encode("utf-8", "surrogatepass")
        hashed.update(len(encoded).to_bytes(8, "big"))  # no two tuples share a digest input
        hashed.update(encoded)
    return hashed.digest()


def total_of(models: dict[str, ModelEstimate]) -> EstimateTotal:
    """The sums over ``models``; the costs only when every model that makes requests
    has a price."""
    total = EstimateTotal()
    for model in models.values():
        total.requests += model.requests
        total.cached += model.cached
        total.prompt_tokens += model.prompt_tokens
        total.cached_input_tokens += model.cached_input_tokens
        total.completion_tokens_low += model.completion_tokens_low
        total.completion_tokens_high += model.completion_tokens_high
    spending = [model for model in models.values() if model.requests]
    if all(model.price is not None for model in spending):
        total.cost_low = sum(model.cost_low or 0.0 for model in spending)
        total.cost_high = sum(model.cost_high or 0.0 for model in spending)
    return total
