"""The judge panel: run every model concurrently, leave out the ones that fail, aggregate.

This is the only place that knows there are several models. A metric supplies the
per-model scoring coroutine; the panel returns each model's outcome and the failures.
"""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from langchain_core.runnables import RunnableConfig

from langchain_answer_metrics.core.redaction import redact
from langchain_answer_metrics.core.result import ModelFailure, TokenUsage
from langchain_answer_metrics.judging import judge_health
from langchain_answer_metrics.judging.endpoints import error_text, is_endpoint_failure
from langchain_answer_metrics.judging.errors import StepError
from langchain_answer_metrics.judging.ledger import Ledger, member_ledger
from langchain_answer_metrics.judging.model_facts import optional_attribute
from langchain_answer_metrics.judging.tracing import child_run

AggregationName = Literal["mean", "median", "min", "max", "consensus"]
# A custom aggregation: the models' scores in, one score in [0, 1] out.
Aggregator = Callable[[list[float]], float]
Aggregation = AggregationName | Aggregator
AGGREGATIONS: dict[str, Callable[[Sequence[float]], float]] = {
    "mean": statistics.fmean,
    "median": statistics.median,
    "min": min,
    "max": max,
    "consensus": statistics.fmean,  # once the spread is within the tolerance
}
DEFAULT_TOLERANCE = 0.1

MemberT = TypeVar("MemberT")


@dataclass
class ModelOutcome:
    """One model's score on one sample, with what it saw and what it spent."""

    score: float | None  # None: nothing to score (no claims); the panel goes by the others
    details: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    usage: TokenUsage = field(default_factory=TokenUsage)


@dataclass
class PanelOutcome:
    outcomes: dict[str, ModelOutcome]
    excluded: list[ModelFailure]

    @property
    def scores(self) -> dict[str, float]:
        """The models that scored (not those that found nothing to score)."""
        scores = {label: outcome.score for label, outcome in self.outcomes.items()}
        return {label: score for label, score in scores.items() if score is not None}

    @property
    def spread(self) -> float:
        """How far the models disagree: max - min of their scores (0.0 for one model)."""
        return spread(list(self.scores.values()))

    def aggregate(
        self,
        how: Aggregation,
        *,
        tolerance: float = DEFAULT_TOLERANCE,
        metric: str = "",
        weights: Mapping[str, float] | None = None,
    ) -> float:
        return aggregate(self.scores, how, tolerance=tolerance, metric=metric, weights=weights)

    def representative(self, score: float | None) -> str:
        """The model whose own score is closest to the aggregate, to explain it (without
        a score, the first model)."""
        scores = self.scores
        if score is None or not scores:
            return next(iter(self.outcomes))
        return min(scores, key=lambda label: abs(scores[label] - score))


class AllModelsFailedError(RuntimeError):
    """Every model on the panel failed; the message lists each failure.

    Args:
        metric: the metric's name (kept as ``.metric``).
        failures: one :class:`ModelFailure` per model, with the step and error (``.failures``).

    Example:
        >>> try:
        ...     FactualCorrectness(llm=[judge_a, judge_b]).invoke(sample)
        ... except AllModelsFailedError as error:
        ...     print([(failure.model, failure.step) for failure in error.failures])
        [('gpt-4o-mini', 'decompose_claims'), ('claude-3-5-haiku', 'verify_claims')]
    """

    def __init__(self, metric: str, failures: list[ModelFailure]) -> None:
        self.metric = metric
        self.failures = failures
        listing = "; ".join(
            f"{failure.model} failed at {failure.step}: {failure.error}" for failure in failures
        )
        super().__init__(f"{metric}: every model failed: {listing}")


class AllJudgesExcludedError(AllModelsFailedError):
    """Every judge on the panel was excluded from the run earlier, so nothing was sent
    for this sample: the runner reports it as not run (see :mod:`.judge_health`)."""


class JudgesDisagreeError(ValueError):
    """Under ``aggregation="consensus"``, the models' scores are further apart than the
    tolerance: the sample has no score (never a silent mean); the message names them.

    Args:
        metric: the metric's name (kept as ``.metric``).
        scores: each model's score by label (``.scores``); their range is ``.spread``.
        tolerance: the largest spread accepted (``.tolerance``).

    Example:
        >>> metric = Faithfulness(llm=[judge_a, judge_b], aggregation="consensus", tolerance=0.1)
        >>> metric.invoke(sample)
        JudgesDisagreeError: faithfulness: the judges disagree: gpt-4o 0.90, claude 0.40 (...)
    """

    def __init__(self, metric: str, scores: dict[str, float], tolerance: float) -> None:
        self.metric = metric
        self.scores = dict(scores)
        self.tolerance = tolerance
        self.spread = spread(list(scores.values()))
        listing = ", ".join(f"{label} {score:.2f}" for label, score in scores.items())
        super().__init__(
            f"{metric + ': ' if metric else ''}the judges disagree: {listing} "
            f"(spread {self.spread:.2f} > tolerance {tolerance:.2f})"
        )


def spread(scores: Sequence[float]) -> float:
    return float(max(scores) - min(scores)) if scores else 0.0


def check_aggregation(how: Any) -> Aggregation:
    """A known aggregation's name, or a callable; anything else is refused."""
    if callable(how):
        aggregate([0.25, 0.75], how)  # refused now if it cannot give a score in [0, 1]
        return how
    if how in AGGREGATIONS:
        return how
    raise ValueError(
        f"aggregation must be one of {', '.join(AGGREGATIONS)} or a callable "
        f"(scores: list[float]) -> float, got {how!r}"
    )


def check_weights(
    weights: Mapping[str, float] | None, labels: Sequence[str], how: Any, *, owner: str = ""
) -> dict[str, float] | None:
    """Per-judge weights for ``labels`` (the panel's models), checked: one finite weight
    > 0 per label, under ``aggregation="mean"`` only (a weighted median or minimum is not
    what users expect from a "weight"); None stays None. Drop a judge you would weigh 0."""
    if weights is None:
        return None
    prefix = f"{owner}: " if owner else ""
    if how != "mean":
        raise ValueError(f"{prefix}judge_weights need aggregation='mean', got {how!r}")
    unknown = sorted(set(weights) - set(labels))
    missing = [label for label in labels if label not in weights]
    if unknown or missing:
        raise ValueError(
            f"{prefix}judge_weights must give one weight per judge ({', '.join(labels)}): "
            + "; ".join(
                part
                for part in (
                    f"unknown {', '.join(unknown)}" if unknown else "",
                    f"missing {', '.join(missing)}" if missing else "",
                )
                if part
            )
        )
    for label, weight in weights.items():
        if (
            isinstance(weight, bool)
            or not isinstance(weight, (int, float))
            or not (0.0 < weight < float("inf"))
        ):
            raise ValueError(
                f"{prefix}judge_weights[{label!r}] must be a number > 0, got {weight!r} "
                "(leave a judge out of the panel rather than weigh it 0)"
            )
    return {label: float(weights[label]) for label in labels}


def aggregate(
    scores: dict[str, float] | Sequence[float],
    how: Aggregation,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    metric: str = "",
    weights: Mapping[str, float] | None = None,
) -> float:
    """The panel's score: a named aggregation, ``"consensus"`` (the mean when the spread is
    within ``tolerance``, else :class:`JudgesDisagreeError`), or a callable's result,
    which must be a number in [0, 1]. With ``weights`` (by model label, see
    :func:`check_weights`), ``"mean"`` is the weighted mean of the models that scored."""
    by_label = (
        dict(scores)
        if isinstance(scores, dict)
        else {f"model {i}": score for i, score in enumerate(scores, 1)}
    )
    values = list(by_label.values())
    if weights is not None and how == "mean" and by_label:
        try:
            shares = [weights[label] for label in by_label]
        except KeyError as error:
            raise ValueError(f"{metric + ': ' if metric else ''}no weight for {error}") from None
        return sum(w * s for w, s in zip(shares, values)) / sum(shares)
    if callable(how):
        name = getattr(how, "__name__", type(how).__name__)
        result = how(list(values))
        if isinstance(result, bool) or not isinstance(result, (int, float)):
            raise TypeError(
                f"{metric + ': ' if metric else ''}aggregation {name} returned "
                f"{type(result).__name__} {result!r}, not a number"
            )
        if not 0.0 <= result <= 1.0:  # NaN fails this too
            raise ValueError(
                f"{metric + ': ' if metric else ''}aggregation {name} returned {result!r} "
                f"for scores {values}, outside [0, 1]"
            )
        return float(result)
    combine = AGGREGATIONS[check_aggregation(how)]  # type: ignore[index]
    if how == "consensus" and spread(values) > tolerance + 1e-12:
        raise JudgesDisagreeError(metric, by_label, tolerance)
    return float(combine(values))


def failure_of(model: str, error: BaseException, usage: TokenUsage | None = None) -> ModelFailure:
    """``model``'s failure, with what it spent on the sample before failing (if any)."""
    step = error.step if isinstance(error, StepError) else "score"
    cause = error.error if isinstance(error, StepError) else error
    spent = usage if usage is not None and (usage.requests or usage.cached) else None
    return ModelFailure(
        # A provider may echo the request's key in its error text: never record it.
        # A connection error, a timeout or a 5xx names its endpoint (see endpoints.py).
        model=model,
        step=step,
        error=redact(error_text(cause)) or type(cause).__name__,
        error_type=type(cause).__name__,
        usage=spent,
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

    ledgers: dict[int, Ledger] = {}
    judges = {id(member): _judge_label(member) for member in members}
    for name in judges.values():
        if name is not None:
            judge_health.uses(name)

    async def scored(member: MemberT, child: RunnableConfig) -> ModelOutcome:
        name = judges[id(member)]
        if name is not None:
            judge_health.check_included(name)  # an excluded judge is sent nothing
        # Each member runs in a task of its own (gather), so its ledger is its own.
        with member_ledger(label(member)) as ledger:
            ledgers[id(member)] = ledger
            outcome = await score_one(member, child)
        if ledger.failed_requests:
            # Attempts that got no reply (then retried) are requests the steps do not see.
            outcome.usage = outcome.usage.add(TokenUsage(requests=ledger.failed_requests))
        return outcome

    def traced(member: MemberT) -> Awaitable[ModelOutcome]:
        name = label(member)
        return child_run(name, {"model": name}, lambda child: scored(member, child), config)

    results = await asyncio.gather(*(traced(member) for member in members), return_exceptions=True)
    outcomes: dict[str, ModelOutcome] = {}
    excluded: list[ModelFailure] = []
    for member, result in zip(members, results):
        name = judges[id(member)]
        if isinstance(result, ModelOutcome):
            outcomes[label(member)] = result
            if name is not None:
                judge_health.answered(name)
        elif isinstance(result, Exception):
            spent = ledgers.get(id(member))
            failure = failure_of(label(member), result, spent.usage if spent is not None else None)
            excluded.append(failure)
            if name is not None and not _excluded_before(result) and not _transient(result):
                judge_health.sample_failed(name, f"{failure.error_type}: {failure.error}")
        else:
            # Cancellation and interrupts are not a model's failure: let them through.
            raise result
    if not outcomes:
        nothing_sent = all(failure.usage is None for failure in excluded)
        if nothing_sent and all(_excluded_before(result) for result in results):
            raise AllJudgesExcludedError(metric, excluded)
        raise AllModelsFailedError(metric, excluded)
    return PanelOutcome(outcomes=outcomes, excluded=excluded)


def _judge_label(member: Any) -> str | None:
    """A judge's label (a chat model asked for verdicts), None for any other member."""
    return member.label if optional_attribute(member, "structured_request") else None


def _excluded_before(error: BaseException | ModelOutcome) -> bool:
    cause = error.error if isinstance(error, StepError) else error
    return isinstance(cause, judge_health.JudgeExcludedError)


def _transient(error: BaseException) -> bool:
    """A failure the circuit breaker and the retry policy deal with (a connection error,
    a timeout, a 5xx, a 429), not one a judge's first samples may show it is broken by."""
    cause = error.error if isinstance(error, StepError) else error
    status = getattr(cause, "status_code", None)
    return is_endpoint_failure(cause) or status == 429
