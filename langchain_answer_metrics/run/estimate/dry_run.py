"""Offline stand-ins for a run's models: they answer plausibly and record every request.

:func:`dry_run_metrics` copies metrics with each judge's and embedder's model replaced
by a dry-run model that keeps what shapes the real run's requests: the label, the
structured-output method and bindings (the real model builds the request; only the
model at the end of it is swapped), the ability to sample ``n`` choices, the identity
under which identical calls are shared, and the embedder's batching. Replies are
plausible, from what the step asks (:mod:`~langchain_answer_metrics.judging.steps.intent`,
never the prompt read back): a text's claims are its sentences and clauses, every claim
gets a verdict, an aspect passes. A prompt already in the REAL model's LangChain cache (same
prompt, same llm string) is answered from that cache and recorded as a cache hit.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from langchain_core.caches import BaseCache
from langchain_core.embeddings import Embeddings
from langchain_core.globals import get_llm_cache, set_llm_cache
from langchain_core.language_models import BaseChatModel
from langchain_core.load import dumps
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.rate_limiters import BaseRateLimiter
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field

from langchain_answer_metrics.judging.embedding_cache import cache_identity
from langchain_answer_metrics.judging.judges import Embedder, Judge, model_label, wrapped_model
from langchain_answer_metrics.judging.steps.intent import current_intent
from langchain_answer_metrics.judging.structured_chain import swap_model
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.metrics.stand_ins import StandIns
from langchain_answer_metrics.run.estimate.replies import dry_reply, intent_schema
from langchain_answer_metrics.run.estimate.tally import ChatRequest, EmbeddingRequest, Recorder

__all__ = [
    "DryRun",
    "DryRunChatModel",
    "DryRunEmbeddings",
    "Recorder",
    "dry_run_cache",
    "dry_run_metrics",
]

# --------------------------------------------------------------------------- chat


class DryRunChatModel(BaseChatModel):
    """Answers every request offline and records it; ``real`` builds the requests."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    real: Any = None
    label: str
    recorder: Recorder
    real_cache: Any = None  # the real model's cache (BaseCache), or None
    n: int = 1
    cache: Any = Field(default=False)  # never the user's cache: replies are not real

    @property
    def _llm_type(self) -> str:
        return "answer-metrics-dry-run"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"label": self.label}

    def _get_llm_string(self, stop: list[str] | None = None, **kwargs: Any) -> str:
        # Calls are shared in a run by the model's identity: the real model's.
        if isinstance(self.real, BaseChatModel):
            return "dry-run:" + self.real._get_llm_string(stop=stop, **kwargs)
        return f"dry-run:{self.label}"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, Any]:
        if isinstance(self.real, BaseChatModel):
            return swap_model(self.real.bind_tools(tools, **kwargs), self.real, self)
        # A runnable built per call (init_chat_model with configurable fields): tools as
        # OpenAI's format, the request's shape; no cache lookup is possible for it.
        return self.bind(tools=[convert_to_openai_tool(tool) for tool in tools], **kwargs)

    def with_structured_output(self, schema: Any, **kwargs: Any) -> Runnable[Any, Any]:
        """The real model's structured request, sent to this model instead."""
        real = self.real
        if isinstance(real, BaseChatModel):
            return swap_model(real.with_structured_output(schema, **kwargs), real, self)
        kwargs.pop("method", None)
        return super().with_structured_output(schema, **kwargs)

    def _cached(self, messages: list[BaseMessage], stop: Any, options: dict[str, Any]) -> Any:
        if self.real_cache is None or not isinstance(self.real, BaseChatModel):
            return None
        llm_string = self.real._get_llm_string(stop=stop, **options)
        normalised = [
            m.model_copy(update={"id": None}) if getattr(m, "id", None) is not None else m
            for m in messages
        ]
        hit = self.real_cache.lookup(dumps(normalised), llm_string)
        return hit if isinstance(hit, list) else None

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        # The step says what it asks: the prompt is never read back.
        intent = current_intent()
        schema = intent_schema(intent, kwargs)
        choices = max(1, int(kwargs.get("n") or self.n or 1))
        hit = self._cached(messages, stop, kwargs)
        request = ChatRequest(
            label=self.label,
            model_id=model_label(self.real) if self.real else self.label,
            schema=schema,
            messages=messages,
            options=kwargs,
            choices=choices,
            cached=hit is not None,
            intent=intent,
        )
        with self.recorder.lock:
            self.recorder.chat.append(request)
        if hit is not None:
            convert = getattr(self.real, "_convert_cached_generations", None)
            return ChatResult(generations=convert(hit) if convert else hit)
        payload = dry_reply(schema, intent)
        text = json.dumps(payload, ensure_ascii=False)
        generations = []
        for index in range(choices):
            if kwargs.get("tools"):
                message = AIMessage(
                    content="",
                    tool_calls=[{"name": schema, "args": payload, "id": f"dry_{index}"}],
                )
            else:
                message = AIMessage(content=text, additional_kwargs={"parsed": payload})
            generations.append(ChatGeneration(message=message))
        return ChatResult(generations=generations)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._generate(messages, stop, None, **kwargs)


# --------------------------------------------------------------------------- embeddings


class DryRunEmbeddings(Embeddings):
    """Records each embedding request; answers unit vectors. ``identity`` names the real
    model, so its cache identity is unique to it (see :func:`dry_run_cache`)."""

    def __init__(
        self, label: str, model_id: str, identity: str, recorder: Recorder, real: Any = None
    ) -> None:
        self.label = label
        self.model_id = model_id
        self.identity = identity
        self._recorder = recorder
        tokenizer = getattr(real, "count_tokens", None)
        self.tokenizer: Callable[[str], int] | None = tokenizer if callable(tokenizer) else None
        if self.tokenizer is not None:
            # Long texts are then chunked as the real model's tokenizer cuts them.
            self.count_tokens = self.tokenizer

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        with self._recorder.lock:
            self._recorder.embeddings.append(
                EmbeddingRequest(
                    label=self.label,
                    model_id=self.model_id,
                    texts=list(texts),
                    count_tokens=self.tokenizer,
                )
            )
        return [[1.0, float(len(text) % 7), 0.5] for text in texts]

    def cache_hit(self, text: str) -> None:
        with self._recorder.lock:
            self._recorder.embedding_hits.append(
                EmbeddingRequest(label=self.label, model_id=self.model_id, texts=[text])
            )

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_documents(texts)


class _NoWait(BaseRateLimiter):
    """Stands for a real rate limiter: the same sharing of batches, no waiting."""

    def acquire(self, *, blocking: bool = True) -> bool:
        return True

    async def aacquire(self, *, blocking: bool = True) -> bool:
        return True


class _DryRunCache(BaseCache):
    """The user's cache as the dry run sees it: dry-run embedding lookups read the real
    model's entries; what the dry run stores stays here, never in the user's cache.
    Everything else goes through to the user's cache untouched."""

    def __init__(self, real: BaseCache, routes: dict[str, DryRunEmbeddings]) -> None:
        self.real = real
        self.routes = routes
        self.kept: dict[tuple[str, str], Any] = {}

    def lookup(self, prompt: str, llm_string: str) -> Any:
        dry = self.routes.get(llm_string)
        if dry is None:
            return self.real.lookup(prompt, llm_string)
        kept = self.kept.get((prompt, llm_string))
        if kept is not None:
            return kept
        hit = self.real.lookup(prompt, dry.identity)
        if hit:
            dry.cache_hit(prompt)
        return hit

    def update(self, prompt: str, llm_string: str, return_val: Any) -> None:
        if llm_string in self.routes:
            self.kept[(prompt, llm_string)] = return_val
        else:
            self.real.update(prompt, llm_string, return_val)

    def clear(self, **kwargs: Any) -> None:
        self.real.clear(**kwargs)


@contextmanager
def dry_run_cache(routes: dict[str, DryRunEmbeddings]) -> Iterator[None]:
    """While the dry run lasts, the global LLM cache (if any) is seen through
    :class:`_DryRunCache`. The global cache is process-wide: other threads see the
    overlay too, which passes their lookups and updates through unchanged."""
    real = get_llm_cache()
    if real is None or not routes:
        yield
        return
    set_llm_cache(_DryRunCache(real, routes))
    try:
        yield
    finally:
        set_llm_cache(real)


# --------------------------------------------------------------------------- metrics


class DryRun(StandIns):
    """Dry-run copies of metrics; one stand-in per real model, so sharing is kept."""

    strict = True  # a model the copy kept would send the dry run's requests
    who = "estimate"

    def __init__(self, recorder: Recorder) -> None:
        super().__init__()
        self.recorder = recorder
        self._limiters: dict[int, _NoWait] = {}
        self.cache_routes: dict[str, DryRunEmbeddings] = {}

    def chat_stand_in(self, model: Any, judge: Judge) -> DryRunChatModel:
        real = model if isinstance(model, BaseChatModel) else None
        cache = None
        if real is not None and real.cache is not False:
            cache = real.cache if isinstance(real.cache, BaseCache) else get_llm_cache()
        return DryRunChatModel(
            real=real, label=judge.label, recorder=self.recorder, real_cache=cache
        )

    def embeddings_stand_in(self, model: Any, embedder: Embedder) -> DryRunEmbeddings:
        dry = DryRunEmbeddings(
            embedder.label,
            model_label(wrapped_model(model)),
            cache_identity(model),
            self.recorder,
            real=wrapped_model(model),
        )
        self.cache_routes[cache_identity(dry)] = dry
        return dry

    def judge_copy(self, judge: Judge) -> Judge:
        return Judge(
            model=self.swap_chat(judge.model, judge),
            label=judge.label,
            method=judge.structured_method,
            retry=judge.retry,
            max_reasks=judge.max_reasks,
            supports_n=judge.can_sample_n,
        )

    def embedder_copy(self, embedder: Embedder) -> Embedder:
        return Embedder(
            model=self.swap_embeddings(embedder),
            label=embedder.label,
            retry=embedder.retry,
            rate_limiter=self._limiter(embedder.rate_limiter),
            batch_size=embedder.batch_size,
            chars_per_token=embedder.chars_per_token,
        )

    def _limiter(self, limiter: BaseRateLimiter | None) -> _NoWait | None:
        # Embedders share a batch only with the same limiter: keep which share one.
        if limiter is None:
            return None
        self._keep.append(limiter)
        return self._limiters.setdefault(id(limiter), _NoWait())


def dry_run_metrics(
    metrics: Sequence[AnswerMetric], recorder: Recorder
) -> tuple[list[AnswerMetric], DryRun]:
    dry = DryRun(recorder)
    return dry.metrics(metrics), dry
