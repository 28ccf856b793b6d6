"""The relevance step: question + answer -> a reason, a non-committal flag and a graded
verdict (``full``, ``partial``, ``none``), ``votes`` independent times.

Registered with :func:`~langchain_answer_metrics.judging.prompt_set.register_step` as
``judge_relevance``: custom prompts (``prompts={"judge_relevance": ...}``, using
``{question}`` and ``{answer}``) and examples are checked against it, and the cost
estimate's dry run answers it. It judges whether the answer addresses the question, never
whether it is correct. A step knows nothing of the metrics that use it.

    >>> RelevanceVerdict.model_validate(
    ...     {"reason": "r", "noncommittal": " True. ", "verdict": "Partial."}).verdict
    'partial'
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, Field, field_validator

from langchain_answer_metrics.core.result import TokenUsage
from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.prompt_set import (
    DEFAULT_STEP_PROMPTS,
    StepPrompt,
    register_step,
)
from langchain_answer_metrics.judging.prompts import DATA_RULE, StepVariables
from langchain_answer_metrics.judging.step_specs import StepSpec
from langchain_answer_metrics.judging.steps.intent import StepIntent
from langchain_answer_metrics.judging.steps.voting import ask_votes

STEP = "judge_relevance"

Relevance = Literal["full", "partial", "none"]


def _plain(value: Any) -> Any:
    """A label as written by a careful model: case, padding and one final "." aside."""
    if not isinstance(value, str):
        return value
    label = value.strip()
    return (label[:-1].rstrip() if label.endswith(".") else label).lower()


class RelevanceVerdict(BaseModel):
    """How far the answer addresses the question (reason first: models write in order)."""

    reason: str = Field(
        description="One or two sentences, in the answer's language: what the question "
        "asks and what the answer gives."
    )
    noncommittal: bool = Field(
        description="true if the answer commits to no answer: it declines, deflects, "
        "stays vague or only restates the question."
    )
    verdict: Relevance = Field(
        description="full: answers every part of the question; partial: only some parts; "
        "none: answers no part of it."
    )

    @field_validator("verdict", "noncommittal", mode="before")
    @classmethod
    def _tolerant_label(cls, value: Any) -> Any:
        # "Partial", " FULL. ", "True", "yes": pydantic reads the booleans' words itself.
        return _plain(value)


RELEVANCE_SYSTEM = f"""You judge whether an answer addresses the question it was given.

<rules>
- Judge relevance only, never correctness: an answer that answers what was asked is
  relevant even if its facts are wrong. Do not use your own knowledge of the facts.
- noncommittal is true when the answer commits to no answer: it declines ("I don't
  know"), deflects, stays vague ("it depends", "there are many factors") or only restates
  the question. A hedged answer that still gives an answer is not noncommittal.
- verdict "full": the answer directly answers every part of the question.
- verdict "partial": it answers only some parts, or its answer is buried in mostly
  unrelated text.
- verdict "none": it answers no part of the question (off-topic or noncommittal).
- The answer may be in another language than the question; judge what it says.
- First the reason (one or two sentences, in the answer's language), then noncommittal,
  then the verdict.
- {DATA_RULE}
</rules>"""

RELEVANCE_USER = """Does the answer address the question?

{question}{answer}"""

RELEVANCE_EXAMPLES: tuple[dict[str, Any], ...] = (
    {
        "input": {
            "question": "When was the Eiffel Tower built?",
            "answer": "It was built in 1925 for a world's fair.",
        },
        "output": {
            "reason": "It gives a year, which is what was asked; correctness is not judged here.",
            "noncommittal": False,
            "verdict": "full",
        },
    },
    {
        "input": {
            "question": "Какая столица Австралии?",
            "answer": "Это непростой вопрос, всё зависит от точки зрения.",
        },
        "output": {
            "reason": "Ответ уклоняется и не называет ни одного города.",
            "noncommittal": True,
            "verdict": "none",
        },
    },
    {
        "input": {"question": "爱因斯坦何时何地出生？", "answer": "爱因斯坦出生于1879年。"},
        "output": {
            "reason": "回答了时间，但没有回答地点。",
            "noncommittal": False,
            "verdict": "partial",
        },
    },
    {
        "input": {
            "question": "How do I reset my password?",
            "answer": "Our company was founded in 2004 and has offices in Berlin.",
        },
        "output": {
            "reason": "It talks about the company, not about resetting a password.",
            "noncommittal": False,
            "verdict": "none",
        },
    },
)
"""The default few-shot examples: correctness ignored (EN), an evasive answer (RU), a
partial answer (ZH), an off-topic one (EN)."""

RELEVANCE_STEP = register_step(
    StepSpec(
        name=STEP,
        schema=RelevanceVerdict,
        system=RELEVANCE_SYSTEM,
        user=RELEVANCE_USER,
        # question: the user's question; answer: the response judged against it.
        variables=StepVariables(required=("question", "answer")),
        examples=RELEVANCE_EXAMPLES,
        version=1,
        dry_reply=lambda intent: {"reason": "dry run", "noncommittal": False, "verdict": "full"},
    )
)


class RelevanceJudgement(BaseModel):
    """One vote: the verdict, whether the answer was non-committal, why, and its cost."""

    verdict: Relevance
    noncommittal: bool
    reason: str
    usage: TokenUsage


def _judgement(verdict: RelevanceVerdict, usage: TokenUsage) -> RelevanceJudgement:
    return RelevanceJudgement(
        verdict=verdict.verdict,
        noncommittal=verdict.noncommittal,
        reason=verdict.reason,
        usage=usage,
    )


async def judge_relevance(
    judge: Judge,
    *,
    question: str,
    answer: str,
    votes: int = 1,
    prompt: StepPrompt | None = None,
    config: RunnableConfig | None = None,
) -> list[RelevanceJudgement]:
    """Judge how far ``answer`` addresses ``question``, ``votes`` independent times.

    Votes are asked as every voting step asks them (:func:`~.voting.ask_votes`).

    Example:
        >>> [vote.verdict for vote in await judge_relevance(
        ...     judge, question="When was the Eiffel Tower built?", answer="In 1889.")]
        ['full']
    """
    values = {"question": question, "answer": answer}
    replies = await ask_votes(
        judge,
        step=STEP,
        schema=RelevanceVerdict,
        values=values,
        votes=votes,
        prompt=prompt or DEFAULT_STEP_PROMPTS[STEP],
        intent=StepIntent(step=STEP, text=question, response=answer),
        trace_input=values,
        config=config,
    )
    return [_judgement(reply.parsed, reply.usage) for reply in replies]
