"""ContextRelevance: the share of the retrieved contexts relevant to the question.

score = contexts relevant to the question / retrieved contexts

No reference is needed: a judge calls each context relevant or not to the question it was
retrieved for (``user_input``), with a reason, in one request for all the contexts of a
sample. Rank plays no part (ContextPrecision is the rank-aware, reference-based measure);
this is the share of what retrieval brought that is on topic, as TruLens's and DeepEval's
context relevance are. None relevant scores 0.0: retrieval brought nothing on topic.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from langchain_core.runnables import RunnableConfig
from pydantic import Field

from langchain_answer_metrics.core.result import DetailsModel
from langchain_answer_metrics.core.sample import Sample, SampleField
from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.panel import ModelOutcome
from langchain_answer_metrics.judging.steps.contexts import (
    CONTEXT_RELEVANCE,
    ContextVerdictDetail,
    judge_context_relevance,
)
from langchain_answer_metrics.metrics.base import JudgedMetric
from langchain_answer_metrics.metrics.context_precision import contexts_summary


class ContextRelevanceModelDetails(DetailsModel):
    """One judge's verdict on each context, in rank order, and how many were relevant."""

    contexts: list[ContextVerdictDetail] = Field(default_factory=list)
    relevant: int = 0
    total: int = 0

    def contexts_judged(self) -> list[ContextVerdictDetail]:
        """Each context's rank, verdict and reason: they go to ``--out`` records and the report."""
        return self.contexts


class ContextRelevanceDetails(DetailsModel):
    """ContextRelevance's details: each judge's verdicts (:class:`ContextRelevanceModelDetails`)."""

    kind: Literal["context_relevance"] = "context_relevance"
    models: dict[str, ContextRelevanceModelDetails] = Field(default_factory=dict)


class ContextRelevance(JudgedMetric):
    """Judge each retrieved context relevant or not to the question; score their share.

    Attributes:
        llm: the judges: a chat model or :class:`Judge`, or a list of them (a panel).
        prompts: ``{step: template or instructions}`` replacing the prompt of its step,
            ``judge_context_relevance`` (variables ``{query}``, ``{source}``, ``{count}``).
        examples: ``{step: [{"input": {...}, "output": {...}}]}``: few-shot examples.

    Other options (``threshold``, ``aggregation`` ...) are every metric's (:class:`AnswerMetric`).

    Raises:
        InvalidSampleError: from ``invoke``: no ``user_input`` or ``retrieved_contexts``.

    Example:
        >>> metric = ContextRelevance(llm=ChatOpenAI(model="gpt-4o-mini"))
        >>> metric.score(user_input="When was the Eiffel Tower built?", retrieved_contexts=[
        ...     "The Eiffel Tower was completed in 1889.", "Lyon has a Roman theatre."])
        0.5
    """

    metric_key: ClassVar[str] = "context_relevance"
    required_fields: ClassVar[tuple[SampleField, ...]] = ("user_input", "retrieved_contexts")
    prompt_steps: ClassVar[tuple[str, ...]] = (CONTEXT_RELEVANCE,)

    async def _score_with(
        self, judge: Judge, sample: Sample, config: RunnableConfig
    ) -> ModelOutcome:
        assert sample.user_input is not None and sample.retrieved_contexts is not None
        judgement = await judge_context_relevance(
            judge,
            sample.retrieved_contexts,
            query=sample.user_input,
            prompt=self._step_prompts()[CONTEXT_RELEVANCE],
            config=config,
        )
        verdicts = judgement.verdicts
        relevant = sum(verdict.verdict == "relevant" for verdict in verdicts)
        score = relevant / len(verdicts) if verdicts else 0.0
        details = ContextRelevanceModelDetails(
            contexts=verdicts, relevant=relevant, total=len(verdicts)
        )
        return ModelOutcome(
            score=score,
            details=dict(details),
            reason=contexts_summary(verdicts, positive="relevant"),
            usage=judgement.usage,
        )

    def _details(self, models: dict[str, dict[str, Any]]) -> ContextRelevanceDetails:
        return ContextRelevanceDetails(models=models)
