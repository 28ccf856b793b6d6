"""Faithfulness: the share of the response's claims that the retrieved contexts support.

score = supported claims / claims. The denominator is the number of claims, not of
verdicts returned: a judge that drops verdicts is re-asked, never credited. A response
with no checkable claims scores 0.0 and is flagged (``no_claims``); never NaN.
"""

from __future__ import annotations

from typing import Any, ClassVar

from langchain_core.runnables import RunnableConfig

from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.panel import ModelOutcome
from langchain_answer_metrics.judging.steps import claims_checked, supported_ratio
from langchain_answer_metrics.metrics.base import JudgedMetric
from langchain_answer_metrics.metrics.explain import claims_summary
from langchain_answer_metrics.result import FaithfulnessDetails, FaithfulnessModelDetails
from langchain_answer_metrics.sample import Sample, SampleField


class Faithfulness(JudgedMetric):
    """Check each claim of the response against the retrieved contexts.

    Example:
        >>> metric = Faithfulness(llm=ChatOpenAI(model="gpt-4o-mini"))
        >>> result = metric.invoke({
        ...     "user_input": "When was the Eiffel Tower built?",
        ...     "response": "It was built in 1889. It is the tallest tower in the world.",
        ...     "retrieved_contexts": ["The Eiffel Tower was built in 1889 in Paris."],
        ... })
        >>> result.score
        0.5
    """

    metric_key: ClassVar[str] = "faithfulness"
    required_fields: ClassVar[tuple[SampleField, ...]] = ("response", "retrieved_contexts")
    prompt_steps: ClassVar[tuple[str, ...]] = ("decompose_claims", "verify_claims")

    async def _score_with(
        self, judge: Judge, sample: Sample, config: RunnableConfig
    ) -> ModelOutcome:
        assert sample.response is not None and sample.retrieved_contexts is not None
        verdicts, usage = await claims_checked(
            judge,
            sample.response,
            sample.retrieved_contexts,
            question=sample.user_input,
            side="response",
            config=config,
            prompts=self._step_prompts(),
        )
        details = FaithfulnessModelDetails(
            response_claims=verdicts,
            supported=sum(verdict.verdict == "supported" for verdict in verdicts),
            total=len(verdicts),
            no_claims=[] if verdicts else ["response"],
        )
        return ModelOutcome(
            score=supported_ratio(verdicts),
            details=dict(details),
            reason=claims_summary(
                verdicts, claims_of="response", checked_against="the retrieved contexts"
            ),
            usage=usage,
        )

    def _details(self, models: dict[str, dict[str, Any]]) -> FaithfulnessDetails:
        return FaithfulnessDetails(models=models)
