"""Faithfulness: the share of the response's claims that the retrieved contexts support.

score = supported claims / claims. The denominator is the number of claims, not of
verdicts returned: a judge that drops verdicts is re-asked, never credited.

A response with no checkable claims - most often an abstention ("I don't know", "В
контексте нет ответа", "上下文中没有答案") - asserts nothing, so it cannot be unfaithful;
neither is it evidence of faithfulness. ``no_claims`` says what it gets (see
docs/abstentions.md):

- ``"not_applicable"`` (the default): no score. The result's ``score`` and ``band`` are
  None and ``not_applicable == "no_claims"``; summaries leave it out of the mean, the
  pass rate and the interval, and count it apart. The mean stays the faithfulness of the
  answers that said something, and the abstention rate is there to read beside it.
- ``"score_1"``: 1.0, flagged (``details.models[m].no_claims == ["response"]``; see
  ``summary.has_no_claims``); summaries count these too. A model that always abstains then
  scores a perfect mean: choose it only when abstaining is the behaviour you reward.

On a panel, a judge that finds no claims gives no score of its own under the default:
the others' scores make the result, and the reason lists it as ``n/a (no claims)``. Only
when no judge finds a claim is the result not applicable. Never NaN, never a silent 0.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from langchain_core.runnables import RunnableConfig

from langchain_answer_metrics.core.result import FaithfulnessDetails, FaithfulnessModelDetails
from langchain_answer_metrics.core.sample import Sample, SampleField
from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.panel import ModelOutcome
from langchain_answer_metrics.judging.steps import claims_checked, supported_ratio
from langchain_answer_metrics.metrics.base import JudgedMetric
from langchain_answer_metrics.metrics.explain import claims_summary

NoClaims = Literal["not_applicable", "score_1"]


class Faithfulness(JudgedMetric):
    """Check each claim of the response against the retrieved contexts.

    Attributes:
        llm: the judges: a chat model or :class:`Judge`, or a list of them (a panel).
        no_claims: what a response with no claims (an abstention) gets:
            ``"not_applicable"`` (default: no score, counted apart) or ``"score_1"`` (1.0,
            flagged). See the module docs.
        prompts: ``{step: template or instructions}`` replacing the prompt of a step
            (``decompose_claims``, ``verify_claims``).
        examples: ``{step: [{"input": {...}, "output": {...}}]}``: few-shot examples.

    Other options (``threshold``, ``aggregation`` ...) are every metric's (:class:`AnswerMetric`).

    Raises:
        InvalidSampleError: from ``invoke``: no ``response`` or ``retrieved_contexts``.

    Example:
        >>> metric = Faithfulness(llm=ChatOpenAI(model="gpt-4o-mini"))
        >>> result = metric.invoke({
        ...     "user_input": "When was the Eiffel Tower built?",
        ...     "response": "It was built in 1889. It is the tallest tower in the world.",
        ...     "retrieved_contexts": ["The Eiffel Tower was built in 1889 in Paris."],
        ... })
        >>> result.score
        0.5
        >>> abstained = metric.invoke({"response": "I don't know.",
        ...                            "retrieved_contexts": ["The Eiffel Tower ..."]})
        >>> abstained.score, abstained.not_applicable
        (None, 'no_claims')
    """

    metric_key: ClassVar[str] = "faithfulness"
    required_fields: ClassVar[tuple[SampleField, ...]] = ("response", "retrieved_contexts")
    prompt_steps: ClassVar[tuple[str, ...]] = ("decompose_claims", "verify_claims")

    no_claims: NoClaims = "not_applicable"

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
        reason = claims_summary(
            verdicts, claims_of="response", checked_against="the retrieved contexts"
        )
        score: float | None = supported_ratio(verdicts)
        if not verdicts:
            score = None if self.no_claims == "not_applicable" else 1.0
            reason += (
                " (an abstention?): not applicable, left out of the mean"
                if score is None
                else " (an abstention?): scored 1.0 (no_claims='score_1')"
            )
        return ModelOutcome(score=score, details=dict(details), reason=reason, usage=usage)

    def _details(self, models: dict[str, dict[str, Any]]) -> FaithfulnessDetails:
        return FaithfulnessDetails(models=models)
