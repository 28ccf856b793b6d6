"""ContextRecall: the share of the reference's claims that the retrieved contexts support.

score = reference claims supported by the retrieved contexts / reference claims

The reference is decomposed exactly as FactualCorrectness's recall side and
AnswerCorrectness decompose it (the same ``decompose_claims`` step, the same messages:
the reference with the question, ``user_input``, when there is one, so a short reference
such as "Paris" becomes the claim it makes). Identical calls are sent once per run
(:class:`~langchain_answer_metrics.judging.scope.RunScope`), so with FactualCorrectness
in the same run the decomposition costs nothing more: ContextRecall adds one request, the
verification of those claims against the contexts. Alone it makes two per judge.

A reference with no checkable claims (a refusal, "Не знаю") leaves nothing to recall:
the result is not applicable (``score`` None, ``not_applicable == "no_claims"``),
counted apart from the mean as Faithfulness's abstentions are, never a silent 0 or 1.
On a panel, a judge that finds no claims gives no score of its own; the others decide.

This is RAGAS's LLM-based context recall (reference claims attributed to the
contexts); here the claims are those every reference-side metric shares.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from langchain_core.runnables import RunnableConfig
from pydantic import Field

from langchain_answer_metrics.core.result import ClaimSide, ClaimVerdictDetail, DetailsModel
from langchain_answer_metrics.core.sample import Sample, SampleField
from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.panel import ModelOutcome
from langchain_answer_metrics.judging.steps import claims_checked, supported_ratio
from langchain_answer_metrics.metrics.base import JudgedMetric
from langchain_answer_metrics.metrics.explain import claims_summary


class ContextRecallModelDetails(DetailsModel):
    """One judge's reference claims, each checked against the retrieved contexts."""

    reference_claims: list[ClaimVerdictDetail] = Field(default_factory=list)
    supported: int = 0
    total: int = 0
    no_claims: list[Literal["reference"]] = Field(default_factory=list)

    def claims_by_side(self) -> dict[ClaimSide, list[ClaimVerdictDetail]]:
        """Said by side, the claims go to ``--out`` records and the report."""
        return {"reference": self.reference_claims}


class ContextRecallDetails(DetailsModel):
    """ContextRecall's details: each judge's claims (see :class:`ContextRecallModelDetails`)."""

    kind: Literal["context_recall"] = "context_recall"
    models: dict[str, ContextRecallModelDetails] = Field(default_factory=dict)


class ContextRecall(JudgedMetric):
    """Check each claim of the reference against the retrieved contexts.

    Attributes:
        llm: the judges: a chat model or :class:`Judge`, or a list of them (a panel).
        prompts: ``{step: template or instructions}`` replacing the prompt of a step
            (``decompose_claims``, ``verify_claims``). A custom ``decompose_claims``
            prompt is no longer the one FactualCorrectness sends, so it is not shared.
        examples: ``{step: [{"input": {...}, "output": {...}}]}``: few-shot examples.

    Other options (``threshold``, ``aggregation`` ...) are every metric's (:class:`AnswerMetric`).

    Raises:
        InvalidSampleError: from ``invoke``: no ``reference`` or ``retrieved_contexts``.

    Example:
        >>> metric = ContextRecall(llm=ChatOpenAI(model="gpt-4o-mini"))
        >>> result = metric.invoke({
        ...     "user_input": "When and where was the Eiffel Tower built?",
        ...     "reference": "The Eiffel Tower was built in 1889. It stands in Paris.",
        ...     "retrieved_contexts": ["The Eiffel Tower was completed in 1889."],
        ... })
        >>> result.score
        0.5
    """

    metric_key: ClassVar[str] = "context_recall"
    required_fields: ClassVar[tuple[SampleField, ...]] = ("reference", "retrieved_contexts")
    prompt_steps: ClassVar[tuple[str, ...]] = ("decompose_claims", "verify_claims")

    async def _score_with(
        self, judge: Judge, sample: Sample, config: RunnableConfig
    ) -> ModelOutcome:
        assert sample.reference is not None and sample.retrieved_contexts is not None
        # The reference side's call exactly as FactualCorrectness makes it (same text,
        # question and prompt), so a run shares it; contexts answer no question.
        verdicts, usage = await claims_checked(
            judge,
            sample.reference,
            list(sample.retrieved_contexts),
            question=sample.user_input,
            side="reference",
            config=config,
            prompts=self._step_prompts(),
        )
        details = ContextRecallModelDetails(
            reference_claims=verdicts,
            supported=sum(verdict.verdict == "supported" for verdict in verdicts),
            total=len(verdicts),
            no_claims=[] if verdicts else ["reference"],
        )
        reason = claims_summary(
            verdicts, claims_of="reference", checked_against="the retrieved contexts"
        )
        score: float | None = supported_ratio(verdicts)
        if not verdicts:
            score = None
            reason += ": nothing to recall, not applicable (left out of the mean)"
        return ModelOutcome(score=score, details=dict(details), reason=reason, usage=usage)

    def _details(self, models: dict[str, dict[str, Any]]) -> ContextRecallDetails:
        return ContextRecallDetails(models=models)
