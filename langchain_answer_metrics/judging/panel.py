"""The judge panel: run every model concurrently, leave out the ones that fail, aggregate.

This is the only place that knows there are several models. A metric supplies the
per-model scoring coroutine; the panel returns each model's outcome and the failures.
"""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from langchain_core.runnables import RunnableConfig

from langchain_answer_metrics.judging.errors import StepError
from langchain_answer_metrics.judging.tracing import child_run
from langchain_answer_metrics.redaction import redact
from langchain_answer_metrics.result import ModelFailure, TokenUsage

Aggregation = Literal["mean", "median", "min", "max"]
AGGREGATIONS: dict[str, Callable[[Sequence[float]], float]] = {
    "mean": statistics.fmean,
    "median": statistics.median,
    "min": min,
    "max": max,
}

MemberT = TypeVar("MemberT")


@dataclass
class ModelOutcome:
    """One model's score on one sample, with what it saw and what it spent."""

    score: float
    details: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    usage: TokenUsage = field(default_factory=TokenUsage)


@dataclass
class PanelOutcome:
    outcomes: dict[str, ModelOutcome]
    excluded: list[ModelFailure]

    def aggregate(self, how: Aggregation) -> float:
        return aggregate([outcome.score for outcome in self.outcomes.values()], how)

    def representative(self, score: float) -> str:
        """The model whose own score is closest to the aggregate, to explain it."""
        return min(self.outcomes, key=lambda label: abs(self.outcomes[label].score - score))


class AllModelsFailedError(RuntimeError):
    """Every model on the panel failed; the message lists each failure."""

    def __init__(self, metric: str, failures: list[ModelFailure]) -> None:
        self.metric = metric
        self.failures = failures
        listing = "; ".join(
            f"{failure.model} failed at {failure.step}: {failure.error}" for failure in failures
        )
        super().__init__(f"{metric}: every model failed: {listing}")


def aggregate(scores: Sequence[float], how: Aggregation) -> float:
    try:
        combine = AGGREGATIONS[how]
    except KeyError:
        raise ValueError(
            f"aggregation must be one of {', '.join(AGGREGATIONS)}, got {how!r}"
        ) from None
    return float(combine(scores))


def failure_of(model: str, error: BaseException) -> ModelFailure:
    step = error.step if isinstance(error, StepError) else "score"
    cause = error.error if isinstance(error, StepError) else error
    return ModelFailure(
        # A provider may echo the request's key in its error text: never record it.
        model=model, step=step, error=redact(str(cause)) or type(cause).__name__,
        error_type=type(cause).__name__,
    )


async def run_panel(
    metric: str,
    members: Sequence[MemberT],
    label: Callable[[MemberT], str],
    score_one: Callable[[MemberT, RunnableConfig], Awaitable[ModelOutcome]],
    config: RunnableConfig | None,
) -> PanelOutcome:
    """Score with every member concurrently, each as a child run named after the model.

    Raises :class:`AllModelsFailedError` only when every member fails.
    """

    def traced(member: MemberT) -> Awaitable[ModelOutcome]:
        name = label(member)
        return child_run(name, {"model": name}, lambda child: score_one(member, child), config)

    results = await asyncio.gather(*(traced(member) for member in members), return_exceptions=True)
    outcomes: dict[str, ModelOutcome] = {}
    excluded: list[ModelFailure] = []
    for member, result in zip(members, results):
        if isinstance(result, ModelOutcome):
            outcomes[label(member)] = result
        elif isinstance(result, Exception):
            excluded.append(failure_of(label(member), result))
        else:
            # Cancellation and interrupts are not a model's failure: let them through.
            raise result
    if not outcomes:
        raise AllModelsFailedError(metric, excluded)
    return PanelOutcome(outcomes=outcomes, excluded=excluded)
