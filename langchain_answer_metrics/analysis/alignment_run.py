"""The runs of an alignment under one budget: the estimate first, then each run through
the runner with what is left of ``max_cost`` (a
:class:`~langchain_answer_metrics.run.limits.RunLimits` across the runs).

    >>> budget = AlignmentBudget(max_cost=0.50, prices=prices)
    >>> estimate = cost_estimate(samples, metric, probe, budget)   # refused if past it
    >>> results = budget.score(metric, samples)                    # AlignmentStopped if it stops
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_answer_metrics.core.prices import PriceTable
from langchain_answer_metrics.core.result import MetricResult
from langchain_answer_metrics.core.sample import Sample
from langchain_answer_metrics.costs.estimator import combine, estimate
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.run.limits import RunLimits
from langchain_answer_metrics.run.runner import evaluate_dataset
from langchain_answer_metrics.run.spend import Pricing


class AlignmentStopped(RuntimeError):
    """The budget (``max_cost``) stopped the alignment: before any request when the
    estimate is past it, else before a sample that would have taken the spend past it.

    Attributes:
        spent: USD spent before it stopped (0.0 when refused up front).
        requests: model requests made.

    Example:
        >>> try:
        ...     align(metric, rows, max_cost=0.10)
        ... except AlignmentStopped as stop:
        ...     print(stop, stop.spent)
    """

    def __init__(self, message: str, *, spent: float, requests: int) -> None:
        super().__init__(message)
        self.spent = spent
        self.requests = requests


@dataclass
class AlignmentBudget:
    """``max_cost`` (USD) across the alignment's runs, and what they spent.

    Example:
        >>> budget = AlignmentBudget(max_cost=1.0, prices=prices)
        >>> results = budget.score(metric, samples); budget.spent()
        {'cost': 0.0123, 'requests': 48}
    """

    max_cost: float | None = None
    prices: PriceTable | None = None
    max_concurrency: int = 16
    on_progress: Callable[[str], None] | None = None
    limits: RunLimits = field(default_factory=RunLimits)

    def __post_init__(self) -> None:
        self.limits.max_cost = self.max_cost
        self.limits.prices = dict(self.prices or {})

    def say(self, message: str) -> None:
        if self.on_progress is not None:
            self.on_progress(message)

    def score(self, metric: AnswerMetric, samples: Sequence[Sample]) -> list[MetricResult | None]:
        """Each sample's result (None: the metric failed on it), under what is left."""
        self.limits.pricing = Pricing.of([metric], prices=self.prices)
        rows = evaluate_dataset(
            list(samples), [metric], max_concurrency=self.max_concurrency, **self.limits.left()
        )
        for row in rows:
            self.limits.count(row)
        if self.limits.stop is not None:
            raise AlignmentStopped(
                f"align stopped: {self.limits.stop.message}",
                spent=self.limits.spent,
                requests=self.limits.requests,
            )
        return [
            outcome if isinstance(outcome := row.results.get(metric.key), MetricResult) else None
            for row in rows
        ]

    def spent(self) -> dict[str, Any]:
        priced = self.limits.pricing is not None and not self.limits.pricing.unpriced()
        return {"cost": self.limits.spent if priced else None, "requests": self.limits.requests}


def cost_estimate(
    samples: Sequence[Sample], before: AnswerMetric, after: AnswerMetric, budget: AlignmentBudget
) -> dict[str, Any]:
    """What the alignment is expected to cost (the "before" run and, with examples of the
    rows' size, the held-out runs: every row once each), before any request; past
    ``max_cost`` at its low end, :class:`AlignmentStopped`.

    Example:
        >>> cost_estimate(samples, metric, probe, AlignmentBudget())
        {'requests': 96, 'cost_low': 0.0021, 'cost_high': 0.0032}
    """
    parts = [
        estimate(
            list(samples), [metric], prices=budget.prices, max_concurrency=budget.max_concurrency
        )
        for metric in (before, after)
    ]
    total = combine(parts).total
    found = {"requests": total.requests, "cost_low": total.cost_low, "cost_high": total.cost_high}
    shown = (
        "no price"
        if total.cost_low is None
        else (f"${total.cost_low:.4f}-${total.cost_high or 0:.4f}")
    )
    budget.say(f"estimate: {total.requests} requests, {shown}")
    if (
        budget.max_cost is not None
        and total.cost_low is not None
        and total.cost_low > budget.max_cost
    ):
        raise AlignmentStopped(
            f"align refused: the estimate (${total.cost_low:.4f} at least) is past --max-cost "
            f"${budget.max_cost:.4f}; no request was made",
            spent=0.0,
            requests=0,
        )
    return found
