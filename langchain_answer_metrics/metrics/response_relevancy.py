"""ResponseRelevance: does the response address the question, whether or not it is correct?

``ResponseRelevancy`` (RAGAS's spelling) is the same class under a second name, kept
without a warning (see :data:`ResponseRelevancy`). The result key stays
``response_relevancy``: keys are data (``--out`` records, checkpoints, LangSmith feedback
keys), and renaming one would split a user's history in two.

**The method: one direct, graded judgement per judge.** The judge reads the question and
the response and returns, reason first, a non-committal flag and a verdict on a
three-level rubric (step ``judge_relevance``, :mod:`~.judging.steps.relevance`)::

    vote score   = 0                                   if noncommittal
                 = {full: 1.0, partial: 0.5, none: 0}  otherwise
    judge score  = mean of its ``strictness`` vote scores
    score        = the panel's aggregation of the judge scores (mean by default)

**Why not RAGAS's method.** RAGAS (``ResponseRelevancy``, formerly ``answer_relevancy``)
asks an LLM to write questions the response would answer (three by default), embeds them
and the user's question, and averages the cosines; a "noncommittal" flag sets the score
to 0. We keep that flag, which is what makes an evasive answer score low, and drop the
rest:

- the cosine depends on the embedding model's calibration: unrelated questions rarely
  score near 0 and paraphrases rarely near 1, so "relevant" is a different number per
  embedding model and the score is not in [0, 1] by construction;
- a question in Russian regenerated in English (or the other way round) loses cosine
  though the response answers it: cross-lingual embeddings make a correct answer in any
  of our languages score unevenly;
- it needs an embedding model besides the judge, and several generations per sample.

**Why a graded rubric, not openevals' yes/no.** openevals' RAG helpfulness asks a judge
directly, with a boolean. A response that answers half of a two-part question is then
either fully relevant or not at all; the ``partial`` level gives it 0.5, and each level is
defined in words a judge applies the same way in English, Russian and Chinese (the
default few-shot examples show one of each, and an evasive answer). A direct judgement
also works unchanged with a panel, custom prompts (``prompts={"judge_relevance": ...}``),
the cost estimate and the toy judge: it is one request per judge and sample.

``strictness`` (1 to 5) asks each judge that many independent votes (one request with
``n`` choices where the model supports it) and averages them, as RAGAS averages its
generated questions; use a temperature above 0.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from langchain_core.runnables import RunnableConfig
from pydantic import Field

from langchain_answer_metrics.core.result import DetailsModel, TokenUsage
from langchain_answer_metrics.core.sample import Sample, SampleField
from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.panel import ModelOutcome
from langchain_answer_metrics.judging.steps.relevance import (
    STEP,
    Relevance,
    RelevanceJudgement,
    judge_relevance,
)
from langchain_answer_metrics.metrics.base import JudgedMetric
from langchain_answer_metrics.metrics.votes import warn_if_votes_will_agree

LEVEL_SCORES: dict[str, float] = {"full": 1.0, "partial": 0.5, "none": 0.0}
"""What each verdict of a committal response scores; a non-committal one scores 0."""


def vote_score(vote: RelevanceJudgement) -> float:
    """0 for a non-committal response, else its verdict's :data:`LEVEL_SCORES`."""
    return 0.0 if vote.noncommittal else LEVEL_SCORES[vote.verdict]


class RelevanceVote(DetailsModel):
    """One vote of a judge: its verdict, the non-committal flag and its reason."""

    verdict: Relevance
    noncommittal: bool
    reason: str
    score: float


class ResponseRelevanceModelDetails(DetailsModel):
    """One judge's details: the median vote's verdict, flag and reason, and every vote."""

    verdict: Relevance
    noncommittal: bool
    reason: str
    votes: list[RelevanceVote]


class ResponseRelevanceDetails(DetailsModel):
    """A ResponseRelevance result's details: the votes per judge, and each judge's."""

    kind: Literal["response_relevancy"] = "response_relevancy"
    strictness: int
    models: dict[str, ResponseRelevanceModelDetails]


class ResponseRelevance(JudgedMetric):
    """Score whether the response addresses the question (not whether it is correct).

    An evasive or non-committal response scores 0, a partial one 0.5, a full one 1 (see
    the module's docstring for the method and why).

    Attributes:
        llm: the judges: a chat model or :class:`Judge`, or a list of them (a panel).
        strictness: votes per judge (1 to 5), averaged; use a temperature above 0.
        prompts: ``{"judge_relevance": template or instructions}`` replacing the prompt
            (a template uses ``{question}`` and ``{answer}``).
        examples: ``{"judge_relevance": [{"input": {...}, "output": {...}}]}``.

    Other options (``threshold``, ``aggregation`` ...) are every metric's (:class:`AnswerMetric`).

    Raises:
        InvalidSampleError: from ``invoke``, before any request: no ``user_input`` or no
            ``response``.

    Example:
        >>> metric = ResponseRelevance(llm=ChatOpenAI(model="gpt-4o-mini"))
        >>> metric.invoke({"user_input": "When was the Eiffel Tower built?",
        ...                "response": "I'd rather not say."}).score
        0.0
    """

    metric_key: ClassVar[str] = "response_relevancy"
    required_fields: ClassVar[tuple[SampleField, ...]] = ("user_input", "response")
    prompt_steps: ClassVar[tuple[str, ...]] = (STEP,)

    strictness: int = Field(default=1, ge=1, le=5)

    def model_post_init(self, context: Any) -> None:
        super().model_post_init(context)
        warn_if_votes_will_agree(f"ResponseRelevance {self.key!r}", self.llm, self.strictness)

    def _details(self, models: dict[str, dict[str, Any]]) -> ResponseRelevanceDetails:
        return ResponseRelevanceDetails(strictness=self.strictness, models=models)

    async def _score_with(
        self, judge: Judge, sample: Sample, config: RunnableConfig
    ) -> ModelOutcome:
        assert sample.user_input is not None and sample.response is not None
        votes = await judge_relevance(
            judge,
            question=sample.user_input,
            answer=sample.response,
            votes=self.strictness,
            prompt=self._step_prompts()[STEP],
            config=config,
        )
        scores = [vote_score(vote) for vote in votes]
        usage = TokenUsage()
        for vote in votes:
            usage = usage.add(vote.usage)
        # The median vote speaks for the judge (the lower one of an even count).
        median = sorted(range(len(votes)), key=lambda i: scores[i])[(len(votes) - 1) // 2]
        chosen = votes[median]
        label = "non-committal" if chosen.noncommittal else chosen.verdict
        split = f" ({', '.join(f'{s:g}' for s in scores)})" if len(votes) > 1 else ""
        details = ResponseRelevanceModelDetails(
            verdict=chosen.verdict,
            noncommittal=chosen.noncommittal,
            reason=chosen.reason,
            votes=[
                RelevanceVote(
                    verdict=v.verdict, noncommittal=v.noncommittal, reason=v.reason, score=s
                )
                for v, s in zip(votes, scores)
            ],
        )
        return ModelOutcome(
            score=sum(scores) / len(scores),
            details=details.model_dump(),
            reason=f"{label}{split}: {chosen.reason}",
            usage=usage,
        )


ResponseRelevancy = ResponseRelevance
"""RAGAS's name for :class:`ResponseRelevance`: the same class (``isinstance``, the
registry, keys and records are the same), importable from the package root and
:mod:`langchain_answer_metrics.metrics`. The package's metric names end in
``-Relevance`` (``ContextRelevance``, ``ResponseRelevance``); this alias stays, without a
warning, because it is the name RAGAS users know and look for, and code using it is not
wrong: nothing about it will change or break.

Example:
    >>> from langchain_answer_metrics import ResponseRelevancy, ResponseRelevance
    >>> ResponseRelevancy is ResponseRelevance
    True
"""
