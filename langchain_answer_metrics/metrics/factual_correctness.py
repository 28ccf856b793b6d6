"""FactualCorrectness: claim-level precision, recall or F-beta against a reference.

precision = response claims supported by the reference / response claims
recall    = reference claims supported by the response / reference claims
f1        = F-beta of the two (beta = 1 by default)

Each direction is computed on its own (RAGAS reuses the precision side's TP for recall,
which can score identical texts 0). Response and reference are both decomposed with the
question (``user_input``) when there is one, so a short reference ("Paris" for "What is
the capital of France?") becomes the claim it makes. A side with no claims scores 0.0
for its ratio and is flagged in ``details["models"][model]["no_claims"]``: nothing
checkable was asserted, so nothing can be credited. Scores are never NaN.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from langchain_core.runnables import RunnableConfig
from pydantic import Field

from langchain_answer_metrics.core.result import (
    FactualCorrectnessDetails,
    FactualCorrectnessModelDetails,
    TokenUsage,
)
from langchain_answer_metrics.core.sample import Sample, SampleField
from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.panel import ModelOutcome
from langchain_answer_metrics.judging.steps import ClaimSide, claims_checked, supported_ratio
from langchain_answer_metrics.judging.sync import gather_settled
from langchain_answer_metrics.metrics.base import JudgedMetric
from langchain_answer_metrics.metrics.explain import claims_summary

FactualMode = Literal["f1", "precision", "recall"]


def f_beta(precision: float, recall: float, beta: float = 1.0) -> float:
    denominator = beta**2 * precision + recall
    if denominator == 0:
        return 0.0
    return (1 + beta**2) * precision * recall / denominator


class FactualCorrectness(JudgedMetric):
    """Split response and reference into claims and check each against the other.

    Example:
        >>> metric = FactualCorrectness(llm=ChatOpenAI(model="gpt-4o-mini"), mode="f1")
        >>> result = metric.invoke({"response": "Einstein was born in Spain in 1879.",
        ...                         "reference": "Einstein was born in Germany in 1879."})
        >>> result.score, result.reason
        (0.5, 'precision: 1 of 2 response claims are supported by the reference; ...')

    Precision mode makes only the response-side requests and recall mode only the
    reference-side ones: two requests per model each (decompose, then verify all claims
    at once). F1 runs both directions concurrently.

    Attributes:
        llm: the judges: a chat model or :class:`Judge`, or a list of them (a panel).
        mode: ``"f1"`` (both directions), ``"precision"`` (response claims against the
            reference) or ``"recall"`` (reference claims against the response).
        beta: the F-beta weight under ``mode="f1"``: above 1 favours recall.
        prompts: ``{step: template or instructions}`` replacing the prompt of a step
            (``decompose_claims``, ``verify_claims``).
        examples: ``{step: [{"input": {...}, "output": {...}}]}``: few-shot examples.

    Other options (``threshold``, ``aggregation`` ...) are every metric's (:class:`AnswerMetric`).

    Raises:
        InvalidSampleError: from ``invoke``: no ``response`` or ``reference``.
    """

    metric_key: ClassVar[str] = "factual_correctness"
    required_fields: ClassVar[tuple[SampleField, ...]] = ("response", "reference")

    prompt_steps: ClassVar[tuple[str, ...]] = ("decompose_claims", "verify_claims")

    mode: FactualMode = "f1"
    beta: float = Field(default=1.0, gt=0)

    async def _score_with(
        self, judge: Judge, sample: Sample, config: RunnableConfig
    ) -> ModelOutcome:
        assert sample.response is not None and sample.reference is not None
        directions = {}
        prompts = self._step_prompts()
        # Both sides are decomposed with the question, which completes a short text
        # ("In 1879.", "Paris") into the claim it makes. The same reference with the same
        # question is decomposed once per run (identical calls are shared). Each side is
        # an answer to the question, so verification sees it too: "Paris" as a source.
        if self.mode in ("f1", "precision"):
            directions["precision"] = claims_checked(
                judge,
                sample.response,
                sample.reference,
                question=sample.user_input,
                side="response",
                config=config,
                prompts=prompts,
                source_answers_question=True,
            )
        if self.mode in ("f1", "recall"):
            directions["recall"] = claims_checked(
                judge,
                sample.reference,
                sample.response,
                question=sample.user_input,
                side="reference",
                config=config,
                prompts=prompts,
                source_answers_question=True,
            )
        checked = dict(zip(directions, await gather_settled(*directions.values())))

        details = FactualCorrectnessModelDetails()
        reasons = []
        usage = TokenUsage()
        ratios: dict[str, float] = {}
        claims_of: ClaimSide
        for direction, (verdicts, spent) in checked.items():
            ratios[direction] = supported_ratio(verdicts)
            if direction == "precision":
                claims_of, against = "response", "the reference"
                details.response_claims, details.precision = verdicts, ratios[direction]
            else:
                claims_of, against = "reference", "the response"
                details.reference_claims, details.recall = verdicts, ratios[direction]
            if not verdicts:
                details.no_claims.append(claims_of)
            reasons.append(
                f"{direction}: "
                + claims_summary(verdicts, claims_of=claims_of, checked_against=against)
            )
            usage = usage.add(spent)
        score = (
            f_beta(ratios["precision"], ratios["recall"], self.beta)
            if self.mode == "f1"
            else ratios[self.mode]
        )
        return ModelOutcome(
            score=score, details=dict(details), reason="; ".join(reasons), usage=usage
        )

    def _details(self, models: dict[str, dict[str, Any]]) -> FactualCorrectnessDetails:
        return FactualCorrectnessDetails(mode=self.mode, beta=self.beta, models=models)
