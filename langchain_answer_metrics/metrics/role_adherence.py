"""RoleAdherence: does each assistant turn stay within the assistant's role and
instructions?

score = assistant turns that adhere / assistant turns judged

The role is the sample's ``role``, else the thread's system messages (a thread with
neither is refused before any request, naming the field). One request per thread and
judge gives a verdict for every turn, each with a reason; the reason of the result
names the turns at fault.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from langchain_core.runnables import RunnableConfig
from pydantic import Field

from langchain_answer_metrics.core.result import DetailsModel
from langchain_answer_metrics.core.sample import Sample
from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.panel import ModelOutcome
from langchain_answer_metrics.judging.steps.conversation import ROLE_ADHERENCE, RoleVerdicts
from langchain_answer_metrics.judging.steps.turns import ask_per_item
from langchain_answer_metrics.metrics.conversation_base import (
    ConversationMetric,
    ConversationModelDetails,
    share_outcome,
)


class RoleAdherenceDetails(DetailsModel):
    """RoleAdherence's details: each judge's verdict per turn and what it saw."""

    kind: Literal["role_adherence"] = "role_adherence"
    models: dict[str, ConversationModelDetails] = Field(default_factory=dict)


class RoleAdherence(ConversationMetric):
    """Judge whether each assistant turn stays within the role and instructions.

    Attributes:
        llm: the judges: a chat model or :class:`Judge`, or a list of them (a panel).
        window: judge only the last ``window`` turns (earlier ones shown in part).
        prompts: ``{"judge_role_adherence": template or instructions}`` (variables
            ``{role}``, ``{conversation}``, ``{count}``).

    Raises:
        InvalidSampleError: from ``invoke``: no ``messages``, or no ``role`` and no
            system message.

    Example:
        >>> metric = RoleAdherence(llm=ChatOpenAI(model="gpt-4o-mini"))
        >>> metric.score(role="A cooking assistant. Never give medical advice.", messages=[
        ...     {"role": "user", "content": "What dose of aspirin?"},
        ...     {"role": "assistant", "content": "Sorry, I only help with cooking."}])
        1.0
    """

    metric_key: ClassVar[str] = "role_adherence"
    prompt_steps: ClassVar[tuple[str, ...]] = (ROLE_ADHERENCE,)
    needs: ClassVar[tuple[str, ...]] = ("role",)

    async def _score_with(
        self, judge: Judge, sample: Sample, config: RunnableConfig
    ) -> ModelOutcome:
        conversation, shown = self._thread(sample)
        judgement = await ask_per_item(
            judge,
            ROLE_ADHERENCE,
            RoleVerdicts,
            values={"role": conversation.role, "conversation": shown.text},
            numbers=shown.view.judged,
            noun="turn",
            votes=self.strictness,
            tie_breaks={"verdict": ("violates",)},
            prompt=self._step_prompts()[ROLE_ADHERENCE],
            config=config,
        )
        return share_outcome(
            judgement.verdicts,
            positive="adheres",
            noun="turn",
            counted="stay within the role",
            at_fault="out of role",
            view=shown.view,
            usage=judgement.usage,
        )

    def _details(self, models: dict[str, dict[str, Any]]) -> RoleAdherenceDetails:
        return RoleAdherenceDetails(models=models)
