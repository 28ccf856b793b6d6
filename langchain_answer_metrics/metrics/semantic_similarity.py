"""SemanticSimilarity: cosine similarity of response and reference embeddings, no LLM call.

Per embedding model: cosine, clamped to 0..1; optionally rescaled against a baseline
(``max(0, (cos - b) / (1 - b))``, off by default); with ``threshold``, 1.0 or 0.0. The
model scores are then aggregated. Long texts are chunked on sentence boundaries and the
chunk vectors averaged (``long_text="chunk"``, the spec's default).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config, get_config_list
from pydantic import Field

from langchain_answer_metrics.core.result import (
    SemanticSimilarityDetails,
    SemanticSimilarityModelDetails,
    TokenUsage,
)
from langchain_answer_metrics.core.sample import InvalidSampleError, Sample, SampleField
from langchain_answer_metrics.judging.chunking import (
    DEFAULT_CHARS_PER_TOKEN,
    LongTextMode,
    TextTooLongError,
    check_limit,
)
from langchain_answer_metrics.judging.judges import Embedder
from langchain_answer_metrics.judging.panel import ModelOutcome
from langchain_answer_metrics.judging.scope import RunScope, current_scope, run_scope
from langchain_answer_metrics.judging.steps import embed
from langchain_answer_metrics.judging.steps.embedding import counter_for, reserve
from langchain_answer_metrics.judging.tracing import recording
from langchain_answer_metrics.metrics.base import EmbeddingMetric


def cosine(first: np.ndarray, second: np.ndarray) -> float:
    norms = float(np.linalg.norm(first) * np.linalg.norm(second))
    if norms == 0.0:
        raise ValueError("an embedding is the zero vector; cosine similarity is undefined")
    return float(np.dot(first, second) / norms)


def rescale(similarity: float, baseline: float) -> float:
    """Map ``baseline`` (the cosine of unrelated texts) to 0 and 1 to 1."""
    return max(0.0, min(1.0, (similarity - baseline) / (1.0 - baseline)))


# Samples started by abatch in one go before the event loop runs anything else.
START_SLICE = 8


def _traced(configs: list[RunnableConfig]) -> bool:
    """Whether anything would record the runs of a batch with ``configs`` (a handler in
    the first, or tracing on; or callbacks given in any other)."""
    return recording(configs[0]) is not None or any(each.get("callbacks") for each in configs[1:])


class SemanticSimilarity(EmbeddingMetric):
    """Cosine similarity between response and reference, averaged over embedding models.

    Attributes:
        embeddings: a LangChain ``Embeddings`` or :class:`Embedder`, or a list of them.
        threshold: with one, each model scores 1.0 at or above it, else 0.0.
        long_text: a text over ``max_tokens``: ``"chunk"`` (average its sentence-bounded
            pieces), ``"truncate"`` (its first piece) or ``"fail_fast"`` (refuse it).
        max_tokens: the embedding model's input limit, in tokens.
        chars_per_token: characters per token, for models that expose no tokenizer.
        rescale_baseline: the cosine of unrelated texts, mapped to 0 (``None``: off).

    Other options (``aggregation`` ...) are every metric's (:class:`AnswerMetric`).

    Raises:
        InvalidSampleError: from ``invoke``: no ``response`` or ``reference``, or under
            ``"fail_fast"`` a text the model's own tokenizer counts over ``max_tokens``.

    Example:
        >>> metric = SemanticSimilarity(embeddings=OpenAIEmbeddings(), threshold=0.8)
        >>> metric.score(response="Paris is France's capital.",
        ...              reference="The capital of France is Paris.")
        1.0
    """

    metric_key: ClassVar[str] = "semantic_similarity"
    required_fields: ClassVar[tuple[SampleField, ...]] = ("response", "reference")

    long_text: LongTextMode = Field(
        default="chunk",
        description="A text over max_tokens: 'chunk' (embed its sentence-bounded pieces "
        "and average them), 'truncate' (its first piece) or 'fail_fast' (refuse it, "
        "InvalidSampleError, before any request; only when the embedding model's own "
        "tokenizer counts it, as LocalE5Embeddings.count_tokens does: with only the "
        "chars_per_token estimate it is sent as it is, and the details say "
        "limit_checked=False).",
    )
    max_tokens: int = Field(default=512, ge=1)
    chars_per_token: float = Field(
        default=DEFAULT_CHARS_PER_TOKEN,
        gt=0,
        description="Characters per token, for models that expose no tokenizer.",
    )
    rescale_baseline: float | None = Field(default=None, ge=0.0, lt=1.0)

    def check_sample(self, value: Any) -> Sample:
        return self._refuse_long_texts(super().check_sample(value))

    async def abatch(
        self,
        inputs: list[Any],
        config: RunnableConfig | list[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        """Score many samples, their texts embedded in shared batches sent concurrently.

        Every sample is started, so the texts of all of them are batched together (as
        the runner does); ``max_concurrency`` caps the embedding requests in flight (the
        request budget), not the samples. Inside a run's scope, the run's budget applies.

        Unless the runs are recorded (a callback handler, or tracing on), the texts of
        the valid samples are queued before any sample starts, so full batches leave at
        once; the samples then start :data:`START_SLICE` at a time, the event loop let
        through between slices, so those requests go out while the rest start (the
        samples' own work runs while the requests are out).
        """
        if not inputs:
            return []
        configs = get_config_list(config, len(inputs))
        limit = configs[0].get("max_concurrency")
        scope = current_scope() or RunScope(max_concurrency=limit)
        uncapped = [RunnableConfig(**{**each, "max_concurrency": None}) for each in configs]

        async def score(value: Any, each: RunnableConfig) -> Any:
            if not return_exceptions:
                return await self.ainvoke(value, each, **kwargs)
            try:
                return await self.ainvoke(value, each, **kwargs)
            except Exception as error:
                return error

        tasks: list[asyncio.Future[Any]] = []
        with run_scope(scope):
            if _traced(configs):
                # Recorded: as before, each sample queues its own texts, so a shared
                # request's runs (a retry's) hang off the sample that filled its batch.
                return await super().abatch(
                    inputs, uncapped, return_exceptions=return_exceptions, **kwargs
                )
            releases = self._reserve_texts(inputs)
            try:
                for start in range(0, len(inputs), START_SLICE):
                    if start:
                        await asyncio.sleep(0)  # requests already queued go out
                    end = start + START_SLICE
                    tasks.extend(
                        asyncio.ensure_future(score(value, each))
                        for value, each in zip(inputs[start:end], uncapped[start:end])
                    )
                return list(await asyncio.gather(*tasks))
            except BaseException:
                for task in tasks:  # cancelled while starting: stop the started ones
                    task.cancel()
                raise
            finally:
                for release in releases:
                    release()

    def reserve_requests(
        self, samples: Sequence[tuple[float, Any]], config: RunnableConfig | None = None
    ) -> Callable[[], None]:
        """Queue the texts the samples will embed (see :meth:`abatch`), unless the runs
        are recorded: then each sample queues its own, as :meth:`abatch` does."""
        if _traced([ensure_config(config)]):
            return lambda: None
        releases = self._reserve_texts(
            [value for _, value in samples], [position for position, _ in samples]
        )

        def release() -> None:
            for each in releases:
                each()

        return release

    def samples_per_request(self) -> int:
        """Samples one request can serve: a batch holds their response and reference."""
        return max(1, max(embedder.batch_size for embedder in self.embeddings) // 2)

    def _reserve_texts(
        self, inputs: Sequence[Any], positions: Sequence[float] | None = None
    ) -> list[Callable[[], None]]:
        """Queue the texts each valid sample will embed, in order (an invalid sample is
        refused later, by its own call, and embeds nothing); ``positions``: each input's
        position in the run (default: the current one)."""
        calls = []
        at: list[float] = []
        for index, value in enumerate(inputs):
            try:
                sample = self.check_sample(value)
            except Exception:
                continue
            calls.append((sample.response or "", sample.reference or ""))
            if positions is not None:
                at.append(positions[index])
        return [
            reserve(
                embedder,
                calls,
                max_tokens=self.max_tokens,
                long_text=self.long_text,
                chars_per_token=self.chars_per_token,
                positions=at if positions is not None else None,
            )
            for embedder in self.embeddings
        ]

    def _refuse_long_texts(self, sample: Sample) -> Sample:
        """Under ``long_text="fail_fast"``, refuse up front a text an embedding model's
        own tokenizer counts over ``max_tokens`` (an estimate refuses nothing)."""
        if self.long_text == "fail_fast":
            for embedder in self.embeddings:
                counter = counter_for(embedder, self.chars_per_token)
                for field in ("response", "reference"):
                    try:
                        check_limit(
                            getattr(sample, field), max_tokens=self.max_tokens, counter=counter
                        )
                    except TextTooLongError as error:
                        raise InvalidSampleError(self.key, field, str(error)) from None
        return sample

    def _details(self, models: dict[str, dict[str, Any]]) -> SemanticSimilarityDetails:
        return SemanticSimilarityDetails(
            threshold=self.threshold,
            rescale_baseline=self.rescale_baseline,
            long_text=self.long_text,
            models=models,
        )

    async def _score_with(
        self, embedder: Embedder, sample: Sample, config: RunnableConfig
    ) -> ModelOutcome:
        assert sample.response is not None and sample.reference is not None
        embedding = await embed(
            embedder,
            [sample.response, sample.reference],
            max_tokens=self.max_tokens,
            long_text=self.long_text,
            chars_per_token=self.chars_per_token,
            config=config,
        )
        similarity = cosine(*embedding.vectors)
        value = max(0.0, min(1.0, similarity))
        reason = f"cosine similarity {similarity:.3f}"
        if self.rescale_baseline is not None:
            value = rescale(similarity, self.rescale_baseline)
            reason += f", rescaled against baseline {self.rescale_baseline:.2f} to {value:.3f}"
        score = value
        if self.threshold is not None:
            score = 1.0 if value >= self.threshold else 0.0
            relation = ">=" if score else "<"
            reason += f" {relation} threshold {self.threshold:.2f}"
        return ModelOutcome(
            score=score,
            details=dict(
                SemanticSimilarityModelDetails(
                    cosine=similarity,
                    similarity=value,
                    pieces=dict(zip(("response", "reference"), embedding.pieces)),
                    chunked=any(count > 1 for count in embedding.pieces),
                    token_count=embedding.token_count,
                    limit_checked=embedding.limit_checked,
                )
            ),
            reason=reason,
            usage=TokenUsage(
                requests=embedding.requests,
                cached=embedding.cached,
                input_tokens=embedding.input_tokens,
                total_tokens=embedding.input_tokens,
            ),
        )
