"""KnowledgeRetention: does the assistant keep what the user told it earlier in a thread?

score = assistant turns after the first with no lapse / assistant turns after the first

A lapse is a reply that asks again for something the user already said (a fact, a
constraint, a preference), contradicts it, or ignores it. One request per thread and
judge gives a verdict for every turn after the first, each with a reason naming what was
forgotten and when it was said. A thread with one assistant turn has nothing to
remember: not applicable (``not_applicable == "single_turn"``), and no request is sent.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from langchain_core.runnables import RunnableConfig
from pydantic import Field

from langchain_answer_metrics.conversations.sample import ConversationSample
from langchain_answer_metrics.core.result import DetailsModel
from langchain_answer_metrics.core.sample import Sample
from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.panel import ModelOutcome
from langchain_answer_metrics.judging.steps.conversation import (
    KNOWLEDGE_RETENTION,
    RetentionVerdicts,
)
from langchain_answer_metrics.judging.steps.turns import ask_per_item
from langchain_answer_metrics.metrics.conversation_base import (
    ConversationMetric,
    ConversationModelDetails,
    share_outcome,
)


class KnowledgeRetentionDetails(DetailsModel):
    """KnowledgeRetention's details: each judge's verdict per turn and what it saw."""

    kind: Literal["knowledge_retention"] = "knowledge_retention"
    models: dict[str, ConversationModelDetails] = Field(default_factory=dict)


class KnowledgeRetention(ConversationMetric):
    """Judge, turn by turn, whether the assistant keeps what the user said earlier.

    Attributes:
        llm: the judges: a chat model or :class:`Judge`, or a list of them (a panel).
        window: judge only the last ``window`` turns (earlier ones shown in part).
        prompts: ``{"judge_knowledge_retention": template or instructions}`` (variables
            ``{conversation}``, ``{count}``).

    Other options (``threshold``, ``aggregation`` ...) are every metric's.

    Raises:
        InvalidSampleError: from ``invoke``: no ``messages``, or a message that cannot be read.

    Example:
        >>> metric = KnowledgeRetention(llm=ChatOpenAI(model="gpt-4o-mini"))
        >>> metric.score(messages=[
        ...     {"role": "user", "content": "I live in Lyon."},
        ...     {"role": "assistant", "content": "Noted!"},
        ...     {"role": "user", "content": "A restaurant for tonight?"},
        ...     {"role": "assistant", "content": "Which city are you in?"}])
        0.0
    """

    metric_key: ClassVar[str] = "knowledge_retention"
    prompt_steps: ClassVar[tuple[str, ...]] = (KNOWLEDGE_RETENTION,)

    def _not_applicable(self, sample: Sample) -> str | None:
        assert isinstance(sample, ConversationSample)
        if len(sample.turns) < 2:
            return "Not applicable: the thread has one assistant turn, nothing to remember."
        return None

    async def _score_with(
        self, judge: Judge, sample: Sample, config: RunnableConfig
    ) -> ModelOutcome:
        conversation, shown = self._thread(sample)
        first = conversation.turns[0].index
        judged = [number for number in shown.view.judged if number != first]
        judgement = await ask_per_item(
            judge,
            KNOWLEDGE_RETENTION,
            RetentionVerdicts,
            values={"conversation": shown.text},
            numbers=judged,
            noun="turn",
            votes=self.strictness,
            tie_breaks={"verdict": ("lapse",)},
            prompt=self._step_prompts()[KNOWLEDGE_RETENTION],
            config=config,
        )
        return share_outcome(
            judgement.verdicts,
            positive="kept",
            noun="turn",
            counted="keep what the user said earlier",
            at_fault="lapses",
            view=shown.view,
            usage=judgement.usage,
        )

    def _details(self, models: dict[str, dict[str, Any]]) -> KnowledgeRetentionDetails:
        return KnowledgeRetentionDetails(models=models)
