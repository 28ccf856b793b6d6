"""What the conversation metrics share: how they read a thread, what they show the judge,
and how one judge's verdicts per turn (or per intent) become its score and reason.

Each conversation metric asks each judge a fixed number of requests per thread (one),
so the cost estimate is exact; the verdicts go in the details as ``turns`` (or
``intents``), one entry each, in order, with its 1-based number, verdict and reason,
beside ``view``: which turns the judge saw whole, in part, or not at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from langchain_core.runnables import RunnableConfig
from pydantic import Field

from langchain_answer_metrics.conversations.sample import (
    CONVERSATION_FIELDS,
    ConversationSample,
    check_conversation_sample,
)
from langchain_answer_metrics.conversations.text import (
    MAX_CHARS,
    ConversationView,
    RenderedConversation,
    render_conversation,
)
from langchain_answer_metrics.core.result import DetailsModel, MetricResult, TokenUsage
from langchain_answer_metrics.core.sample import Sample, SampleField
from langchain_answer_metrics.judging.panel import ModelOutcome
from langchain_answer_metrics.judging.steps.turns import TurnVerdictDetail
from langchain_answer_metrics.metrics.base import JudgedMetric
from langchain_answer_metrics.metrics.votes import warn_if_votes_will_agree


class ConversationModelDetails(DetailsModel):
    """One judge's verdicts on a thread and what it was shown.

    Attributes:
        turns: one entry per judged turn (or intent, ConversationCompleteness), in order.
        view: which turns the judge saw whole, in part, or not at all.
    """

    turns: list[TurnVerdictDetail] = Field(default_factory=list)
    view: ConversationView | None = None


class ConversationMetric(JudgedMetric):
    """Base of the conversation metrics: a judged metric of a :class:`ConversationSample`.

    Attributes:
        window: judge only the last ``window`` assistant turns (the earlier ones are shown
            in part, as context); None: the whole thread.
        strictness: votes per judge (1-5; use a temperature above 0): each turn's label
            is the majority of its votes, a tie going against the assistant, flagged.
        max_thread_chars: the budget of the thread as shown to the judge; past it the
            oldest turns outside the judged ones are cut, then left out (the details say
            which).
    """

    required_fields: ClassVar[tuple[SampleField, ...]] = ()
    # The faces give it the fields they found as they are (the messages in any form),
    # for its check to read (see check_conversation_sample).
    reads_agent_fields: ClassVar[bool] = True
    agent_fields: ClassVar[tuple[str, ...]] = CONVERSATION_FIELDS
    # The sample fields a metric needs beside the messages (``"role"``, ``"topics"``).
    needs: ClassVar[tuple[str, ...]] = ()

    window: int | None = Field(default=None, ge=1)
    max_thread_chars: int = Field(default=MAX_CHARS, ge=1000)
    strictness: int = Field(
        default=1,
        ge=1,
        le=5,
        description="Votes per judge: each turn's label is the majority of its votes.",
    )

    def model_post_init(self, context: Any) -> None:
        super().model_post_init(context)
        warn_if_votes_will_agree(type(self).__name__, self.llm, self.strictness)

    def check_sample(self, value: Any) -> Sample:
        return check_conversation_sample(
            self.key, value, needs=self._needs(value), max_chars=self.max_input_chars
        )

    def _needs(self, value: Any) -> Sequence[str]:
        return self.needs

    def _thread(self, sample: Sample) -> tuple[ConversationSample, RenderedConversation]:
        """The sample as a conversation, and the thread as shown to the judge."""
        assert isinstance(sample, ConversationSample)  # check_sample made it one
        return sample, render_conversation(
            sample.turns, window=self.window, max_chars=self.max_thread_chars
        )

    async def _evaluate(self, sample: Sample, config: RunnableConfig) -> MetricResult:
        reason = self._not_applicable(sample)
        if reason is None:
            return await super()._evaluate(sample, config)
        return self._result(
            score=None,
            not_applicable="single_turn",
            per_model={},
            details=self._details({}),
            reason=reason,
        )

    def _not_applicable(self, sample: Sample) -> str | None:
        """Why the metric does not apply to this thread (then no request is sent)."""
        return None


def share_outcome(
    verdicts: list[TurnVerdictDetail],
    *,
    positive: str,
    noun: str,
    counted: str,
    at_fault: str,
    view: ConversationView,
    usage: TokenUsage,
) -> ModelOutcome:
    """A judge's score as the share of ``verdicts`` that are ``positive``, with a reason
    that counts them ("6 of 7 turns keep ...") and names each item at fault by its
    number ("lapses: turn 5: ...")."""
    good = sum(verdict.verdict == positive for verdict in verdicts)
    score = good / len(verdicts) if verdicts else 1.0
    faults = [verdict for verdict in verdicts if verdict.verdict != positive]
    reason = f"{good} of {len(verdicts)} {noun}s {counted}"
    if faults:
        named = "; ".join(
            f"{noun} {verdict.index}"
            + (f" ({verdict.text})" if verdict.text else "")
            + f": {verdict.reason}"
            for verdict in faults[:5]
        )
        more = f" (and {len(faults) - 5} more)" if len(faults) > 5 else ""
        reason += f"; {at_fault}: {named}{more}"
    details = ConversationModelDetails(turns=verdicts, view=view)
    return ModelOutcome(score=score, details=dict(details), reason=reason, usage=usage)
