"""Few-shot examples chosen per sample: the ``k`` labelled examples nearest the sample by
embedding similarity go in each step's prompt, as RAGAS's aligned metrics do.

:class:`SimilarExamples` wraps a judged metric and a pool of examples per step. For each
sample it embeds the sample's question and response (one embedding request, its usage in
the result), takes the ``k`` examples of each step whose inputs are nearest (cosine), and
scores the sample with the metric carrying its own examples and those ``k``. The pool is
embedded once per metric object. The number of examples per request is fixed: ``k`` (or
the pool's size, if smaller).

    >>> metric = SimilarExamples(metric=AspectCritic(llm=judge, criterion="..."),
    ...                          pool={"judge_aspect": examples}, embeddings=embedder, k=2)
    >>> metric.invoke({"user_input": "...", "response": "..."}).score
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from langchain_core.runnables import RunnableConfig
from pydantic import Field, PrivateAttr, field_validator, model_validator

from langchain_answer_metrics.core.result import MetricResult, TokenUsage
from langchain_answer_metrics.core.sample import Sample, SampleField
from langchain_answer_metrics.judging.judges import Embedder, as_embedders
from langchain_answer_metrics.judging.prompts import DEFAULT_PROMPTS
from langchain_answer_metrics.judging.steps.embedding import embed
from langchain_answer_metrics.metrics.base import AnswerMetric, JudgedMetric
from langchain_answer_metrics.metrics.custom_judge import ByInstance


def with_examples(
    metric: JudgedMetric,
    *,
    judges: Sequence[Any],
    new_examples: Mapping[str, Sequence[Any]],
    judge_weights: Mapping[str, float] | None,
    threshold: float | None,
) -> JudgedMetric:
    """``metric`` again with these judges, its examples plus ``new_examples`` (after them),
    these weights and this threshold.

    Example:
        >>> with_examples(metric, judges=metric.llm, new_examples={}, judge_weights=None,
        ...               threshold=0.7).threshold
        0.7
    """
    data = {name: getattr(metric, name) for name in type(metric).model_fields}
    custom = {s: t for s, t in metric.prompts.items() if t is not DEFAULT_PROMPTS.get(s)}
    data.update(
        llm=list(judges),
        # A CustomJudge rebuilds its step's template from its own prompt= or criterion.
        prompts={} if getattr(metric, "prompt", None) is not None else custom,
        examples={
            step: [*metric.examples.get(step, ()), *new_examples.get(step, ())]
            for step in metric.prompt_steps
        },
        judge_weights=dict(judge_weights) if judge_weights else None,
        threshold=threshold,
    )
    return type(metric)(**data)


def example_text(example: Any) -> str:
    """What an example is compared by: its input's texts (claims joined), in order."""
    given = example["input"] if isinstance(example, Mapping) else example.input
    parts = []
    for value in given.values():
        parts.extend([value] if isinstance(value, str) else [str(item) for item in value or ()])
    return "\n".join(parts)


class SimilarExamples(AnswerMetric):
    """A judged metric whose prompts carry, per sample, the ``k`` nearest examples.

    Attributes:
        metric: the judged metric (its judges, weights, threshold and own examples).
        pool: per step, the examples to choose from (``{"input": ..., "output": ...}``).
        embeddings: the embedding model (the first of a list is used).
        k: examples per step and request.

    Example:
        >>> SimilarExamples(metric=critic, pool={"judge_aspect": pool}, embeddings=embedder,
        ...                 k=3).key
        'capital'
    """

    metric_key: ClassVar[str] = "similar_examples"
    required_fields = ByInstance[tuple[SampleField, ...]](
        ("response",), lambda wrapper: wrapper.metric.required_fields
    )

    metric: JudgedMetric
    pool: dict[str, list[dict[str, Any]]]
    embeddings: list[Embedder] = Field(min_length=1)
    k: int = Field(default=4, ge=1)
    _vectors: dict[str, Any] = PrivateAttr(default_factory=dict)
    _derived: dict[tuple[tuple[str, tuple[int, ...]], ...], JudgedMetric] = PrivateAttr(
        default_factory=dict
    )

    @field_validator("embeddings", mode="before")
    @classmethod
    def _embedders(cls, value: Any) -> list[Embedder]:
        return as_embedders(value)

    @model_validator(mode="after")
    def _pool_fits(self) -> SimilarExamples:
        unknown = [step for step in self.pool if step not in self.metric.prompt_steps]
        if unknown:
            raise ValueError(
                f"SimilarExamples ({self.metric.key}): no step {unknown[0]!r}; "
                f"its steps are {', '.join(self.metric.prompt_steps)}"
            )
        with_examples(
            self.metric,
            judges=self.metric.llm,
            new_examples=self.pool,
            judge_weights=self.metric.judge_weights,
            threshold=None,
        )  # checks them
        self.threshold = self.metric.threshold
        return self

    @property
    def key(self) -> str:
        return self.name or self.metric.key

    async def _pool_vectors(self, config: RunnableConfig) -> tuple[dict[str, Any], TokenUsage]:
        """Each step's pool as unit vectors, embedded once (its usage the first time)."""
        if self._vectors:
            return self._vectors, TokenUsage()
        steps = [step for step, examples in self.pool.items() if examples]
        texts = [example_text(e) for step in steps for e in self.pool[step]]
        done = await embed(self.embeddings[0], texts, config=config)
        vectors, start = {}, 0
        for step in steps:
            block = np.asarray(done.vectors[start : start + len(self.pool[step])])
            vectors[step] = block / np.linalg.norm(block, axis=1, keepdims=True).clip(1e-12)
            start += len(self.pool[step])
        self._vectors = vectors
        return vectors, TokenUsage(
            requests=done.requests, cached=done.cached, input_tokens=done.input_tokens
        )

    async def _evaluate(self, sample: Sample, config: RunnableConfig) -> MetricResult:
        pool, spent = await self._pool_vectors(config)
        text = "\n".join(part for part in (sample.user_input, sample.response) if part)
        done = await embed(self.embeddings[0], [text], config=config)
        query = np.asarray(done.vectors[0])
        query = query / max(float(np.linalg.norm(query)), 1e-12)
        chosen = tuple(
            (step, tuple(int(i) for i in np.argsort(-(vectors @ query), kind="stable")[: self.k]))
            for step, vectors in pool.items()
        )
        inner = self._derived.get(chosen)
        if inner is None:
            inner = with_examples(
                self.metric,
                judges=self.metric.llm,
                threshold=self.metric.threshold,
                judge_weights=self.metric.judge_weights,
                new_examples={
                    step: [self.pool[step][i] for i in picked] for step, picked in chosen
                },
            )
            self._derived[chosen] = inner
        result = await inner._evaluate(sample, config)
        label = self.embeddings[0].label
        spent = spent.add(
            TokenUsage(requests=done.requests, cached=done.cached, input_tokens=done.input_tokens)
        )
        usage = dict(result.usage)
        usage[label] = usage[label].add(spent) if label in usage else spent
        return result.model_copy(update={"usage": usage, "key": self.key})
