"""ContextPrecision: are the contexts useful for the answer ranked first?

A judge gives each retrieved context a verdict, useful or not for answering the question
(given the reference answer), with a reason, in one request for all the contexts of a
sample. The score is the rank-aware average precision RAGAS defines (RAGAS docs,
"Context Precision", https://docs.ragas.io/en/stable/concepts/metrics/available_metrics/context_precision/)::

    Context Precision@K = sum_{k=1..K} (precision@k * v_k) / (useful contexts in the top K)
    precision@k         = useful contexts among the first k / k

where K is the number of retrieved contexts and v_k is 1 if the context at rank k is
useful, else 0. Useful contexts first scores 1.0 whatever follows them ([1, 1, 0] ->
1.0); a useful context after a useless one costs ([0, 1] -> 0.5; [1, 0, 1] ->
(1/1 + 2/3) / 2 = 0.833).

No useful context at all scores 0.0 (the formula's 0/0): the retrieval brought nothing
that helps answer the question, which is the worst retrieval can do, not a case the
metric cannot judge; RAGAS gives 0 too (its denominator carries a tiny epsilon).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from langchain_core.runnables import RunnableConfig
from pydantic import Field

from langchain_answer_metrics.core.result import DetailsModel
from langchain_answer_metrics.core.sample import Sample, SampleField
from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.panel import ModelOutcome
from langchain_answer_metrics.judging.steps.contexts import (
    CONTEXT_USEFULNESS,
    ContextVerdictDetail,
    judge_context_usefulness,
)
from langchain_answer_metrics.metrics.base import JudgedMetric

_MAX_LISTED = 3


def average_precision(useful: Sequence[bool]) -> float:
    """RAGAS's context precision of verdicts in rank order: 0.0 with none useful.

    Example:
        >>> round(average_precision([True, False, True]), 4)
        0.8333
    """
    hits, total = 0, 0.0
    for rank, is_useful in enumerate(useful, 1):
        if is_useful:
            hits += 1
            total += hits / rank
    return total / hits if hits else 0.0


class ContextPrecisionModelDetails(DetailsModel):
    """One judge's verdict on each context, in rank order, and how many were useful."""

    contexts: list[ContextVerdictDetail] = Field(default_factory=list)
    useful: int = 0
    total: int = 0

    def contexts_judged(self) -> list[ContextVerdictDetail]:
        """Each context's rank, verdict and reason: they go to ``--out`` records and the report."""
        return self.contexts


class ContextPrecisionDetails(DetailsModel):
    """ContextPrecision's details: each judge's verdicts (:class:`ContextPrecisionModelDetails`)."""

    kind: Literal["context_precision"] = "context_precision"
    models: dict[str, ContextPrecisionModelDetails] = Field(default_factory=dict)


def _quote(text: str, limit: int = 80) -> str:
    return f"“{text if len(text) <= limit else text[: limit - 1] + '…'}”"


def contexts_summary(
    verdicts: Sequence[ContextVerdictDetail], *, positive: str = "useful", lead: str = ""
) -> str:
    """E.g. 'average precision 0.83: 2 of 3 contexts useful, at ranks 1, 3; not useful:
    #2 “…” (why)' (``lead`` first; ``positive``: the verdict that counts)."""
    good = [verdict.rank for verdict in verdicts if verdict.verdict == positive]
    summary = (
        f"{lead}{len(good)} of {len(verdicts)} context{'' if len(verdicts) == 1 else 's'} "
        f"{positive}"
        + (f", at rank{'' if len(good) == 1 else 's'} {', '.join(map(str, good))}" if good else "")
    )
    others = [verdict for verdict in verdicts if verdict.verdict != positive]
    if others:
        listed = ", ".join(
            f"#{verdict.rank} {_quote(verdict.context)} ({verdict.reason})"
            for verdict in others[:_MAX_LISTED]
        )
        more = len(others) - _MAX_LISTED
        summary += f"; not {positive}: {listed}" + (f" and {more} more" if more > 0 else "")
    return summary


class ContextPrecision(JudgedMetric):
    """Judge each retrieved context useful or not, then score their ranking.

    Attributes:
        llm: the judges: a chat model or :class:`Judge`, or a list of them (a panel).
        prompts: ``{step: template or instructions}`` replacing the prompt of its step,
            ``judge_context_usefulness``.
        examples: ``{step: [{"input": {...}, "output": {...}}]}``: few-shot examples.

    Other options (``threshold``, ``aggregation`` ...) are every metric's (:class:`AnswerMetric`).

    Raises:
        InvalidSampleError: from ``invoke``: no ``user_input``, ``reference`` or
            ``retrieved_contexts``.

    Example:
        >>> metric = ContextPrecision(llm=ChatOpenAI(model="gpt-4o-mini"))
        >>> result = metric.invoke({
        ...     "user_input": "When was the Eiffel Tower built?",
        ...     "reference": "The Eiffel Tower was built in 1889.",
        ...     "retrieved_contexts": ["Paris has many museums.",
        ...                            "The Eiffel Tower was completed in 1889."],
        ... })
        >>> result.score  # the one useful context came second
        0.5
    """

    metric_key: ClassVar[str] = "context_precision"
    required_fields: ClassVar[tuple[SampleField, ...]] = (
        "user_input",
        "retrieved_contexts",
        "reference",
    )
    prompt_steps: ClassVar[tuple[str, ...]] = (CONTEXT_USEFULNESS,)

    async def _score_with(
        self, judge: Judge, sample: Sample, config: RunnableConfig
    ) -> ModelOutcome:
        assert sample.reference is not None and sample.retrieved_contexts is not None
        judgement = await judge_context_usefulness(
            judge,
            sample.retrieved_contexts,
            question=sample.user_input,
            reference=sample.reference,
            prompt=self._step_prompts()[CONTEXT_USEFULNESS],
            config=config,
        )
        verdicts = judgement.verdicts
        score = average_precision([verdict.verdict == "useful" for verdict in verdicts])
        details = ContextPrecisionModelDetails(
            contexts=verdicts,
            useful=sum(verdict.verdict == "useful" for verdict in verdicts),
            total=len(verdicts),
        )
        return ModelOutcome(
            score=score,
            details=dict(details),
            reason=contexts_summary(verdicts, lead=f"average precision {score:.2f}: "),
            usage=judgement.usage,
        )

    def _details(self, models: dict[str, dict[str, Any]]) -> ContextPrecisionDetails:
        return ContextPrecisionDetails(models=models)
