"""ConversationCompleteness: did the assistant satisfy everything the user asked for?

score = the user's intents satisfied / the user's intents

One request per thread and judge lists the user's intents across the thread (each with
the turn it was asked in; the sample's ``goal``, if given, among them) and judges each
satisfied or not by the end of the conversation, reason first. The details list the
intents (``turns``: each intent's number, its words, the verdict, the reason naming the
turn it rests on). A thread in which the judge finds no request at all scores 1.0:
nothing was left unsatisfied.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from langchain_core.runnables import RunnableConfig
from pydantic import Field

from langchain_answer_metrics.conversations.text import ConversationView
from langchain_answer_metrics.core.result import DetailsModel, TokenUsage
from langchain_answer_metrics.core.sample import Sample
from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.panel import ModelOutcome
from langchain_answer_metrics.judging.prompt_set import DEFAULT_STEP_PROMPTS
from langchain_answer_metrics.judging.prompts import unescape_data
from langchain_answer_metrics.judging.steps.conversation import COMPLETENESS, IntentVerdicts
from langchain_answer_metrics.judging.steps.intent import StepIntent
from langchain_answer_metrics.judging.steps.turns import TurnVerdictDetail
from langchain_answer_metrics.judging.steps.voting import ask_votes
from langchain_answer_metrics.metrics.conversation_base import (
    ConversationMetric,
    ConversationModelDetails,
    share_outcome,
)


class ConversationCompletenessDetails(DetailsModel):
    """ConversationCompleteness's details: each judge's intents, judged, and what it saw."""

    kind: Literal["conversation_completeness"] = "conversation_completeness"
    models: dict[str, ConversationModelDetails] = Field(default_factory=dict)


class ConversationCompleteness(ConversationMetric):
    """Extract the user's intents across a thread and judge each satisfied or not.

    Attributes:
        llm: the judges: a chat model or :class:`Judge`, or a list of them (a panel).
        window: show only the last ``window`` turns whole (earlier ones in part).
        prompts: ``{"judge_conversation_completeness": template or instructions}``
            (variables ``{goal}``, ``{conversation}``).

    Example:
        >>> metric = ConversationCompleteness(llm=ChatOpenAI(model="gpt-4o-mini"))
        >>> metric.score(messages=[
        ...     {"role": "user", "content": "A dinner recipe, please."},
        ...     {"role": "assistant", "content": "Mushroom risotto: rice, mushrooms, stock."},
        ...     {"role": "user", "content": "And a restaurant in Lyon?"},
        ...     {"role": "assistant", "content": "Sorry, I can't help with that."}])
        0.5
    """

    metric_key: ClassVar[str] = "conversation_completeness"
    prompt_steps: ClassVar[tuple[str, ...]] = (COMPLETENESS,)

    async def _score_with(
        self, judge: Judge, sample: Sample, config: RunnableConfig
    ) -> ModelOutcome:
        conversation, shown = self._thread(sample)
        prompt = self._step_prompts().get(COMPLETENESS, DEFAULT_STEP_PROMPTS[COMPLETENESS])
        values = {"goal": conversation.goal or "", "conversation": shown.text}
        ballots = await ask_votes(
            judge,
            step=COMPLETENESS,
            schema=IntentVerdicts,
            prompt=prompt,
            values=values,
            votes=self.strictness,
            intent=StepIntent(step=COMPLETENESS, items=tuple(map(str, shown.view.judged))),
            trace_input=values,
            config=config,
        )
        usage = TokenUsage()
        outcomes = []
        for ballot in ballots:
            usage = usage.add(ballot.usage)
            outcomes.append(self._outcome(ballot.parsed, shown.view))
        # Each vote lists its own intents, so they cannot be matched one by one: the
        # judge's outcome is its median vote (the lower of the middle two).
        ranked = sorted(outcomes, key=lambda outcome: outcome.score or 0.0)
        chosen = ranked[(len(ranked) - 1) // 2]
        if len(ranked) > 1:
            scores = ", ".join(f"{outcome.score:.2f}" for outcome in outcomes)
            chosen.reason = f"median of {len(ranked)} votes ({scores}): {chosen.reason}"
        chosen.usage = usage
        return chosen

    @staticmethod
    def _outcome(reply: IntentVerdicts, view: ConversationView) -> ModelOutcome:
        verdicts = [
            TurnVerdictDetail(
                index=number,
                verdict=intent.verdict,
                reason=unescape_data(intent.reason),
                text=f"turn {intent.turn}: {unescape_data(intent.intent)}",
            )
            for number, intent in enumerate(reply.intents, start=1)
        ]
        return share_outcome(
            verdicts,
            positive="satisfied",
            noun="intent",
            counted="satisfied",
            at_fault="unsatisfied",
            view=view,
            usage=TokenUsage(),
        )

    def _details(self, models: dict[str, dict[str, Any]]) -> ConversationCompletenessDetails:
        return ConversationCompletenessDetails(models=models)
