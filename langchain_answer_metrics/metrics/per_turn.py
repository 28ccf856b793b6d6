"""per_turn: any single-turn metric applied to every assistant turn of a conversation.

Each assistant turn is scored with its user message as ``user_input``, its reply as
``response`` and its contexts (the sample's ``turn_contexts`` entry, else the tools'
results in that turn) as ``retrieved_contexts``; with ``window=k`` the previous k turns
go into ``user_input`` ahead of the user's message, so a judge that reads the question
sees what the turn answers. The turns are scored concurrently, every one of them (never
only the first), and the result lists every turn's score and reason: a turn the metric
cannot score (no reply, no contexts for a metric that needs them) is listed with why,
never dropped. A turn that fails fails the thread's result, naming the turn: a partial
mean is never reported as the thread's score.

    >>> turn_faithfulness = per_turn(Faithfulness(llm=judge))
    >>> result = turn_faithfulness.invoke({"messages": thread, "turn_contexts": contexts})
    >>> [(turn.index, turn.score) for turn in result.details.turns]
    [(1, 1.0), (2, 0.5), (3, 1.0)]
"""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Literal

from langchain_core.runnables import RunnableConfig
from pydantic import Field, field_validator

from langchain_answer_metrics.conversations.sample import (
    CONVERSATION_FIELDS,
    ConversationSample,
    check_conversation_sample,
)
from langchain_answer_metrics.conversations.turns import Turn
from langchain_answer_metrics.core.result import DetailsModel, MetricResult, TokenUsage
from langchain_answer_metrics.core.sample import InvalidSampleError, Sample, SampleField
from langchain_answer_metrics.judging.judges import Embedder, Judge
from langchain_answer_metrics.metrics.base import AnswerMetric

TurnAggregate = Literal["mean", "min"] | Callable[[list[float]], float]


class TurnFailedError(RuntimeError):
    """A turn of a conversation could not be scored; names the turn and the metric."""


class TurnScore(DetailsModel):
    """One assistant turn's result under the wrapped metric.

    Attributes:
        index: the turn's number, from 1.
        score: its score; None when it was not scored (``skipped`` says why) or the
            metric did not apply.
        reason: the metric's reason for the turn.
        skipped: why the turn was not scored (no reply, no contexts).
    """

    absent_when_none = frozenset({"skipped"})
    index: int
    score: float | None = None
    reason: str = ""
    skipped: str | None = None


class PerTurnDetails(DetailsModel):
    """per_turn's details: the metric applied, the window, every turn's score and reason."""

    kind: Literal["per_turn"] = "per_turn"
    metric: str
    window: int = 0
    aggregate: str = "mean"
    turns: list[TurnScore] = Field(default_factory=list)


class PerTurn(AnswerMetric):
    """A single-turn metric applied to each assistant turn; see :func:`per_turn`."""

    metric_key: ClassVar[str] = "per_turn"
    required_fields: ClassVar[tuple[SampleField, ...]] = ()
    # The faces give it the fields they found as they are (see check_conversation_sample).
    reads_agent_fields: ClassVar[bool] = True
    agent_fields: ClassVar[tuple[str, ...]] = CONVERSATION_FIELDS

    metric: AnswerMetric
    aggregate: TurnAggregate = "mean"
    window: int = Field(default=0, ge=0)

    @field_validator("metric")
    @classmethod
    def _single_turn(cls, metric: AnswerMetric) -> AnswerMetric:
        if isinstance(metric, PerTurn):
            raise ValueError("per_turn: the metric is already applied per turn")
        if "reference" in metric.required_fields:
            raise ValueError(
                f"per_turn({type(metric).__name__}): the metric needs a reference per turn, "
                "which a conversation does not have"
            )
        return metric

    @property
    def key(self) -> str:
        return self.name or f"{self.metric.key}_per_turn"

    def _panel_members(self) -> Sequence[Judge | Embedder]:
        return self.metric._panel_members()

    def samples_per_request(self) -> int:
        return self.metric.samples_per_request()

    def check_sample(self, value: Any) -> Sample:
        sample = check_conversation_sample(self.key, value, max_chars=self.max_input_chars)
        scorable = [turn for turn in sample.turns if self._skipped(sample, turn) is None]
        if not scorable:
            field = "turn_contexts" if self._needs_contexts() else "messages"
            why = self._skipped(sample, sample.turns[0]) or "no turn can be scored"
            raise InvalidSampleError(self.key, field, f"no turn can be scored ({why})")
        for turn in scorable:  # refused before any request, as a single sample would be
            self.metric.check_sample(self._turn_sample(sample, turn))
        return sample

    def _needs_contexts(self) -> bool:
        return "retrieved_contexts" in self.metric.required_fields

    def _skipped(self, sample: ConversationSample, turn: Turn) -> str | None:
        if turn.reply is None:
            return "no reply: the assistant only called tools"
        if self._needs_contexts() and not sample.contexts_of(turn):
            return "no contexts (no turn_contexts entry and no tool results)"
        return None

    def _turn_sample(self, sample: ConversationSample, turn: Turn) -> Sample:
        asked = turn.user
        earlier = sample.turns[max(0, turn.index - 1 - self.window) : turn.index - 1]
        if earlier:
            history = "\n".join(
                f"User: {before.user}\nAssistant: {before.reply or ''}" for before in earlier
            )
            asked = f"The conversation so far:\n{history}\n\nThe user now says:\n{turn.user}"
        contexts = sample.contexts_of(turn)
        return Sample(
            user_input=asked,
            response=turn.reply,
            retrieved_contexts=contexts or None,
        )

    async def _evaluate(self, sample: Sample, config: RunnableConfig) -> MetricResult:
        assert isinstance(sample, ConversationSample)
        turns = list(sample.turns)

        async def score(turn: Turn) -> MetricResult | None:
            if self._skipped(sample, turn) is not None:
                return None
            try:
                return await self.metric._ainvoke_checked(self._turn_sample(sample, turn), config)
            except Exception as error:
                raise TurnFailedError(
                    f"{self.key}: turn {turn.index} of {len(turns)} failed: {error}"
                ) from error

        results = await asyncio.gather(*(score(turn) for turn in turns))
        entries = [
            TurnScore(
                index=turn.index,
                score=None if result is None else result.score,
                reason="" if result is None else result.reason,
                skipped=self._skipped(sample, turn),
            )
            for turn, result in zip(turns, results)
        ]
        scored = [(turn, result) for turn, result in zip(turns, results) if result is not None]
        scores = [result.score for _, result in scored if result.score is not None]
        per_model: dict[str, list[float]] = {}
        usage: dict[str, TokenUsage] = {}
        for _, result in scored:
            for label, model_score in result.per_model.items():
                per_model.setdefault(label, []).append(model_score)
            for label, spent in result.usage.items():
                usage[label] = usage.get(label, TokenUsage()).add(spent)
        total = self._aggregate(scores) if scores else None
        return self._result(
            score=total,
            not_applicable=None if scores else "no_claims",
            per_model={label: self._aggregate(values) for label, values in per_model.items()},
            excluded=[failure for _, result in scored for failure in result.excluded],
            details=PerTurnDetails(
                metric=self.metric.key,
                window=self.window,
                aggregate=self.aggregate if isinstance(self.aggregate, str) else "custom",
                turns=entries,
            ),
            reason=self._reason(entries, total),
            usage=usage,
        )

    def _aggregate(self, scores: list[float]) -> float:
        if self.aggregate == "mean":
            return statistics.fmean(scores)
        if self.aggregate == "min":
            return min(scores)
        assert callable(self.aggregate)
        value = float(self.aggregate(scores))
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"{self.key}: aggregate returned {value}, outside [0, 1]")
        return value

    def _reason(self, entries: list[TurnScore], total: float | None) -> str:
        scored = [entry for entry in entries if entry.score is not None]
        how = self.aggregate if isinstance(self.aggregate, str) else "aggregate"
        if total is None:
            return f"{self.metric.key}: no turn was scored"
        text = f"{how} {self.metric.key} of {len(scored)} of {len(entries)} turns: {total:.2f}"
        lowest = min(scored, key=lambda entry: entry.score or 0.0)
        if len(scored) > 1 and (lowest.score or 0.0) < 1.0:
            text += f"; lowest, turn {lowest.index} ({lowest.score:.2f}): {lowest.reason}"
        skipped = [entry for entry in entries if entry.skipped]
        if skipped:
            text += "; not scored: " + ", ".join(
                f"turn {entry.index} ({entry.skipped})" for entry in skipped
            )
        return text


def per_turn(
    metric: AnswerMetric,
    *,
    aggregate: TurnAggregate = "mean",
    window: int = 0,
    name: str | None = None,
    threshold: float | None = None,
) -> PerTurn:
    """``metric`` applied to every assistant turn of a conversation.

    Args:
        metric: any single-turn metric that needs no reference (Faithfulness,
            ResponseRelevance, AspectCritic, a CustomJudge ...).
        aggregate: how the turns' scores combine: ``"mean"``, ``"min"`` or a callable
            ``list[float] -> float`` in [0, 1].
        window: how many previous turns go into each turn's ``user_input`` (0: the turn
            alone).
        name: the result key; default ``<metric key>_per_turn``.
        threshold: pass mark of the combined score.

    Returns:
        A metric of :class:`~langchain_answer_metrics.ConversationSample` (or dicts of
        its fields) whose details list every turn's score and reason.

    Example:
        >>> turn_faithfulness = per_turn(Faithfulness(llm=judge), aggregate="min")
        >>> turn_faithfulness.score(messages=thread, turn_contexts=contexts)
        0.5
    """
    return PerTurn(
        metric=metric, aggregate=aggregate, window=window, name=name, threshold=threshold
    )
