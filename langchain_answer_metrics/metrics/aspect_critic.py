"""AspectCritic: a PASS/FAIL verdict on a criterion the user writes.

The pass/fail kind of :class:`~.custom_judge.CustomJudge` with its own step and prompt
(``judge_aspect``): its votes are asked and counted as every pass/fail judge's.

Each model votes ``strictness`` times (1..5); its verdict is the majority, a tie is FAIL;
PASS scores 1.0 and FAIL 0.0 for that model. The model scores are then aggregated
(mean by default): 2 PASS + 3 FAIL across five models gives 0.4.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from pydantic import Field, field_validator

from langchain_answer_metrics.core.result import (
    AspectCriticDetails,
    AspectCriticModelDetails,
    TokenUsage,
)
from langchain_answer_metrics.core.sample import Sample, SampleField
from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.panel import ModelOutcome
from langchain_answer_metrics.judging.steps import judge_aspect
from langchain_answer_metrics.metrics.aspects import ASPECTS as ASPECTS
from langchain_answer_metrics.metrics.base import JudgedMetric
from langchain_answer_metrics.metrics.judge_outputs import PassFail
from langchain_answer_metrics.metrics.votes import warn_if_votes_will_agree


def majority(votes: Sequence[str]) -> str:
    """PASS only with a strict majority of PASS votes; a tie is FAIL (the lower score),
    as for every pass/fail judge (:class:`PassFail`)."""
    return str(PassFail().decide(votes)[0])


class AspectCritic(JudgedMetric):
    """Judge whether a response meets ``criterion``; the result key is ``name``.

    Attributes:
        llm: the judges: a chat model or :class:`Judge`, or a list of them (a panel).
        criterion: what the response must meet, in plain words.
        strictness: votes per model (1 to 5); its verdict is the majority, a tie FAIL.
        name: the result key (default ``"aspect_critic"``); :meth:`from_aspect` names it.
        prompts: ``{"judge_aspect": template or instructions}`` replacing the prompt.
        examples: ``{"judge_aspect": [{"input": {...}, "output": {...}}]}``: few-shot examples.

    Other options (``threshold``, ``aggregation`` ...) are every metric's (:class:`AnswerMetric`).

    Raises:
        InvalidSampleError: from ``invoke``: no ``response``.

    Example:
        >>> critic = AspectCritic(
        ...     llm=[ChatOpenAI(model="gpt-4o-mini", temperature=0.7)],
        ...     name="has_date",
        ...     criterion="The response must contain a specific date or year.",
        ...     strictness=3,
        ... )
        >>> critic.invoke({"response": "The Eiffel Tower was built in 1889."}).score
        1.0
        >>> AspectCritic.from_aspect("harmlessness", llm=ChatOpenAI()).key
        'harmlessness'
    """

    metric_key: ClassVar[str] = "aspect_critic"
    required_fields: ClassVar[tuple[SampleField, ...]] = ("response",)
    prompt_steps: ClassVar[tuple[str, ...]] = ("judge_aspect",)

    criterion: str = Field(min_length=1)
    strictness: int = Field(default=1, ge=1, le=5)

    @field_validator("criterion")
    @classmethod
    def _criterion_has_text(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("AspectCritic: criterion is empty or whitespace-only")
        return value

    def model_post_init(self, context: Any) -> None:
        super().model_post_init(context)
        warn_if_votes_will_agree(f"AspectCritic {self.key!r}", self.llm, self.strictness)

    @classmethod
    def from_aspect(
        cls, aspect: str, *, llm: BaseChatModel | Judge | list[Any], **options: Any
    ) -> AspectCritic:
        """One of the spec's common aspects: see :data:`ASPECTS`."""
        try:
            criterion = ASPECTS[aspect]
        except KeyError:
            raise ValueError(
                f"AspectCritic: unknown aspect {aspect!r}; choose from {', '.join(ASPECTS)}"
            ) from None
        return cls(llm=llm, name=options.pop("name", aspect), criterion=criterion, **options)

    def _details(self, models: dict[str, dict[str, Any]]) -> AspectCriticDetails:
        return AspectCriticDetails(
            criterion=self.criterion, strictness=self.strictness, models=models
        )

    async def _score_with(
        self, judge: Judge, sample: Sample, config: RunnableConfig
    ) -> ModelOutcome:
        assert sample.response is not None
        count = self.strictness
        judgements = await judge_aspect(
            judge,
            criterion=self.criterion,
            response=sample.response,
            question=sample.user_input,
            votes=count,
            prompt=self._step_prompts()["judge_aspect"],
            config=config,
        )
        votes = [judgement.verdict for judgement in judgements]
        verdict = majority(votes)
        usage = TokenUsage()
        for judgement in judgements:
            usage = usage.add(judgement.usage)
        # A majority verdict always has at least one vote behind it.
        deciding = next(j.reason for j in judgements if j.verdict == verdict)
        split = f" ({votes.count('PASS')} PASS / {votes.count('FAIL')} FAIL)" if count > 1 else ""
        return ModelOutcome(
            score=1.0 if verdict == "PASS" else 0.0,
            details=dict(
                AspectCriticModelDetails(
                    verdict=verdict,
                    votes=votes,
                    reasons=[judgement.reason for judgement in judgements],
                )
            ),
            reason=f"{verdict}{split}: {deciding}",
            usage=usage,
        )
