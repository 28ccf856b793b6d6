"""TopicAdherence: does the assistant answer the requests on its topics and decline the
others?

Each judged turn gets two labels from the judge, in one request per thread: the user's
request was ``on_topic`` or ``off_topic`` for the topics, and the assistant
``answered`` or ``declined`` it. Then, as RAGAS defines its TopicAdherenceScore
(https://docs.ragas.io/en/stable/concepts/metrics/available_metrics/agents/#topic-adherence):

- true positive: an on-topic request answered;
- false positive: an off-topic request answered;
- false negative: an on-topic request declined (it should have been answered);
- precision = TP / (TP + FP), recall = TP / (TP + FN), F1 their harmonic mean.

Where RAGAS leaves a ratio undefined, here it is 1.0: with nothing answered, nothing
off topic was answered (precision 1.0); with no on-topic request, none was wrongly
declined (recall 1.0). So a thread of off-topic requests all declined scores 1.0, and
all answered scores 0.0. The score is F1 unless ``mode="precision"`` or ``"recall"``;
the details carry all three per judge.

The topics are the sample's own ``topics`` if given, else the metric's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from langchain_core.runnables import RunnableConfig
from pydantic import Field

from langchain_answer_metrics.conversations.sample import ConversationSample
from langchain_answer_metrics.core.result import DetailsModel
from langchain_answer_metrics.core.sample import InvalidSampleError, Sample
from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.panel import ModelOutcome
from langchain_answer_metrics.judging.steps.conversation import TOPIC_ADHERENCE, TopicVerdicts
from langchain_answer_metrics.judging.steps.turns import TurnVerdictDetail, ask_per_item
from langchain_answer_metrics.metrics.conversation_base import (
    ConversationMetric,
    ConversationModelDetails,
)


class TopicAdherenceModelDetails(ConversationModelDetails):
    """One judge's labels per turn, and the precision, recall and F1 they give."""

    precision: float = 1.0
    recall: float = 1.0
    f1: float = 1.0
    topics: list[str] = Field(default_factory=list)


class TopicAdherenceDetails(DetailsModel):
    """TopicAdherence's details: each judge's labels, its precision, recall and F1."""

    kind: Literal["topic_adherence"] = "topic_adherence"
    mode: Literal["f1", "precision", "recall"] = "f1"
    models: dict[str, TopicAdherenceModelDetails] = Field(default_factory=dict)


def adherence(verdicts: Sequence[TurnVerdictDetail]) -> tuple[float, float, float]:
    """Precision, recall and F1 of on-topic answering and off-topic declining."""
    answered = [verdict for verdict in verdicts if verdict.handling == "answered"]
    true_positive = sum(verdict.verdict == "on_topic" for verdict in answered)
    false_positive = len(answered) - true_positive
    false_negative = sum(
        verdict.verdict == "on_topic" and verdict.handling == "declined" for verdict in verdicts
    )
    precision = true_positive / (true_positive + false_positive) if answered else 1.0
    on_topic = true_positive + false_negative
    recall = true_positive / on_topic if on_topic else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


class TopicAdherence(ConversationMetric):
    """Judge whether the assistant answers on-topic requests and declines off-topic ones.

    Attributes:
        llm: the judges: a chat model or :class:`Judge`, or a list of them (a panel).
        topics: the topics the assistant should keep to; a sample's own ``topics`` win.
        mode: ``"f1"`` (the default), ``"precision"`` or ``"recall"``: which is the score.
        window: judge only the last ``window`` turns (earlier ones shown in part).
        prompts: ``{"judge_topic_adherence": template or instructions}`` (variables
            ``{topics}``, ``{conversation}``, ``{count}``).

    Raises:
        InvalidSampleError: from ``invoke``: no ``messages``, or no topics (neither the
            sample's nor the metric's).

    Example:
        >>> metric = TopicAdherence(llm=ChatOpenAI(model="gpt-4o-mini"), topics=["cooking"])
        >>> metric.score(messages=[
        ...     {"role": "user", "content": "Which cooking time for pasta?"},
        ...     {"role": "assistant", "content": "About 10 minutes."},
        ...     {"role": "user", "content": "Who won the match yesterday?"},
        ...     {"role": "assistant", "content": "Sorry, I only help with cooking."}])
        1.0
    """

    metric_key: ClassVar[str] = "topic_adherence"
    prompt_steps: ClassVar[tuple[str, ...]] = (TOPIC_ADHERENCE,)

    topics: list[str] | None = None
    mode: Literal["f1", "precision", "recall"] = "f1"

    def check_sample(self, value: Any) -> Sample:
        sample = super().check_sample(value)
        if not self._topics(sample):
            raise InvalidSampleError(
                self.key, "topics", "is required but missing (give topics= or the sample's topics)"
            )
        return sample

    def _topics(self, sample: Sample) -> list[str]:
        assert isinstance(sample, ConversationSample)
        return list(sample.topics or self.topics or ())

    async def _score_with(
        self, judge: Judge, sample: Sample, config: RunnableConfig
    ) -> ModelOutcome:
        _, shown = self._thread(sample)
        topics = self._topics(sample)
        listed = "\n".join(f"{number}. {topic}" for number, topic in enumerate(topics, 1))
        judgement = await ask_per_item(
            judge,
            TOPIC_ADHERENCE,
            TopicVerdicts,
            values={"topics": listed, "conversation": shown.text},
            numbers=shown.view.judged,
            noun="turn",
            votes=self.strictness,
            prompt=self._step_prompts()[TOPIC_ADHERENCE],
            config=config,
        )
        verdicts = judgement.verdicts
        precision, recall, f1 = adherence(verdicts)
        score = {"f1": f1, "precision": precision, "recall": recall}[self.mode]
        faults = [
            verdict
            for verdict in verdicts
            if (verdict.verdict == "off_topic") == (verdict.handling == "answered")
        ]
        reason = (
            f"precision {precision:.2f}, recall {recall:.2f}, F1 {f1:.2f} over "
            f"{len(verdicts)} turns"
        )
        if faults:
            named = "; ".join(
                f"turn {verdict.index} ({verdict.verdict.replace('_', '-')}, "
                f"{verdict.handling}): {verdict.reason}"
                for verdict in faults[:5]
            )
            reason += f"; at fault: {named}"
        details = TopicAdherenceModelDetails(
            turns=verdicts,
            view=shown.view,
            precision=precision,
            recall=recall,
            f1=f1,
            topics=topics,
        )
        return ModelOutcome(
            score=score, details=dict(details), reason=reason, usage=judgement.usage
        )

    def _details(self, models: dict[str, dict[str, Any]]) -> TopicAdherenceDetails:
        return TopicAdherenceDetails(mode=self.mode, models=models)
