"""The embedding step: texts -> one vector each (long texts chunked on sentence boundaries).

Within a run scope, texts go through the run's shared :class:`EmbeddingBatcher`;
otherwise in ``batch_size`` requests. Either way, vectors in LangChain's LLM cache are
not asked for again.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, ConfigDict, Field

from langchain_answer_metrics.core.result import TokenUsage
from langchain_answer_metrics.judging.batching import EmbeddingBatcher
from langchain_answer_metrics.judging.chunking import (
    DEFAULT_CHARS_PER_TOKEN,
    LongTextMode,
    TokenCounter,
    fit_to_limit,
    limit_checked,
    token_counter,
)
from langchain_answer_metrics.judging.embedding_cache import embed_with_cache
from langchain_answer_metrics.judging.judges import Embedder
from langchain_answer_metrics.judging.ledger import record
from langchain_answer_metrics.judging.scope import current_scope
from langchain_answer_metrics.judging.tracing import step_run


class Embedding(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    vectors: list[Any] = Field(description="One numpy vector per input text.")
    requests: int
    cached: int = Field(default=0, description="Texts served from LangChain's cache.")
    input_tokens: int = Field(
        default=0,
        description="Tokens of the texts this call sent (or, in a run, was first to ask "
        "for), counted as ``token_count`` says: embedding replies carry no usage.",
    )
    pieces: list[int] = Field(default_factory=list, description="Pieces embedded per text.")
    token_count: str = Field(
        default="chars_per_token",
        description="How tokens were counted: the model's 'tokenizer' or 'chars_per_token'.",
    )
    limit_checked: bool | None = Field(
        default=None,
        description="Under long_text='fail_fast': whether the texts were checked against "
        "max_tokens (True, by the model's tokenizer) or sent unchecked (False: only an "
        "estimate). None under 'chunk' and 'truncate'.",
    )


async def _embed_once(
    embedder: Embedder, texts: list[str], sent: list[str] | None = None
) -> tuple[list[list[float]], int]:
    """Vectors for ``texts`` (at most one request), and how many came from the cache;
    the texts actually sent are added to ``sent``."""

    async def send(missing: list[str]) -> list[list[float]]:
        if sent is not None:
            sent.extend(missing)
        return await _embed_request(embedder, missing)

    return await embed_with_cache(embedder.model, texts, send)


async def _embed_batch(embedder: Embedder, texts: list[str]) -> list[list[float]]:
    vectors, _ = await _embed_once(embedder, texts)
    return vectors


async def _embed_request(embedder: Embedder, texts: list[str]) -> list[list[float]]:
    vectors = await embedder.request().ainvoke(texts)
    # The one place replies come back from the model, so the one place they are checked.
    if len(vectors) != len(texts):
        raise ValueError(f"{embedder.label} returned {len(vectors)} vectors for {len(texts)} texts")
    return vectors


def counter_for(embedder: Embedder, chars_per_token: float) -> TokenCounter:
    """The model's own tokenizer if it has one, else its own or the metric's estimate."""
    return token_counter(embedder.model, embedder.chars_per_token or chars_per_token)


def _batcher(embedder: Embedder) -> EmbeddingBatcher | None:
    scope = current_scope()
    if scope is None:
        return None
    # Keyed by the model and how it is called, not by the Embedder wrapper: each metric
    # wraps a plain Embeddings model in its own Embedder, and SemanticSimilarity and
    # AnswerCorrectness on the same model must share one batcher (and its de-duplication).
    key = (id(embedder.model), embedder.batch_size, id(embedder.retry), id(embedder.rate_limiter))
    batcher: EmbeddingBatcher | None = scope.batchers.get(key)
    if batcher is None:
        batcher = EmbeddingBatcher(
            functools.partial(_embed_batch, embedder), batch_size=embedder.batch_size
        )
        scope.batchers[key] = batcher
    return batcher


def reserve(
    embedder: Embedder,
    calls: Sequence[Sequence[str]],
    *,
    max_tokens: int = 512,
    long_text: LongTextMode = "chunk",
    chars_per_token: float = DEFAULT_CHARS_PER_TOKEN,
    positions: Sequence[float] | None = None,
) -> Callable[[], None]:
    """Queue now, in the run's batcher, what the later ``embed(embedder, texts, ...)``
    of each ``texts`` in ``calls`` (same options) will ask for, so its requests leave
    before those calls are made (see :meth:`EmbeddingBatcher.reserve`); ``positions``:
    the position of each call's sample (default: the current one). Returns what to
    call once they are done. Outside a run scope, nothing is reserved."""
    batcher = _batcher(embedder)
    if batcher is None:
        return lambda: None
    counter = counter_for(embedder, chars_per_token)
    reserved: list[str] = []
    at: list[float] = []
    for call, texts in enumerate(calls):
        pieces = (
            fit_to_limit(text, max_tokens=max_tokens, mode=long_text, counter=counter)
            for text in texts
        )
        unique = dict.fromkeys(chunk for chunks in pieces for chunk in chunks)
        reserved.extend(unique)
        if positions is not None:
            at.extend([positions[call]] * len(unique))
    batcher.reserve(reserved, at if positions is not None else None)
    return lambda: batcher.release(reserved)


async def embed(
    embedder: Embedder,
    texts: Sequence[str],
    *,
    max_tokens: int = 512,
    long_text: LongTextMode = "chunk",
    chars_per_token: float = DEFAULT_CHARS_PER_TOKEN,
    config: RunnableConfig | None = None,
) -> Embedding:
    """One vector per text; long texts are chunked and their chunk vectors averaged.

    Within a run scope, requests are shared with concurrent samples: each is counted in
    ``requests`` of the call that was first to ask for the first text it carried, so
    the calls of a run add up to its requests. Otherwise the texts not in LangChain's
    cache go out in ``batch_size`` requests, and ``cached`` counts the texts that were.
    """
    counter = counter_for(embedder, chars_per_token)
    pieces = [
        fit_to_limit(text, max_tokens=max_tokens, mode=long_text, counter=counter) for text in texts
    ]

    async def work(_: RunnableConfig) -> Embedding:
        unique = list(dict.fromkeys(chunk for chunks in pieces for chunk in chunks))
        batcher = _batcher(embedder)
        requests = cached = 0
        raw: Sequence[Any]  # per text: a vector (list of floats or array)
        sent: list[str] = []
        if batcher is not None:
            # Checked and queued in one step (no await between): of concurrent samples
            # asking for one text, exactly one is the first, and its usage carries it.
            sent = [text for text in unique if not batcher.remembers(text)]
            raw = await batcher.embed(unique)
            requests = batcher.claim_requests(sent)
        else:
            fetched: list[list[float]] = []
            for start in range(0, len(unique), embedder.batch_size):
                batch = unique[start : start + embedder.batch_size]
                vectors, hits = await _embed_once(embedder, batch, sent)
                fetched.extend(vectors)
                cached += hits
                requests += hits < len(batch)
            raw = fetched
        vectors_by_text = {
            text: np.asarray(vector, dtype=np.float64) for text, vector in zip(unique, raw)
        }
        vectors = [
            np.mean([vectors_by_text[chunk] for chunk in chunks], axis=0) for chunks in pieces
        ]
        input_tokens = sum(counter.count(text) for text in sent)
        record(TokenUsage(requests=requests, cached=cached, input_tokens=input_tokens))
        return Embedding(
            vectors=vectors,
            requests=requests,
            cached=cached,
            input_tokens=input_tokens,
            pieces=[len(chunks) for chunks in pieces],
            token_count=counter.method,
            limit_checked=limit_checked(long_text, counter),
        )

    return await step_run("embed", {"texts": list(texts)}, work, config)
