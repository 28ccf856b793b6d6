"""The runs of an alignment under one budget: the estimate first, then each run through
the runner with what is left of ``max_cost`` (a
:class:`~langchain_answer_metrics.run.limits.RunLimits` across the runs): the labelled
rows as the metric is ("before"), then each split's held-out rows with the metric fitted
on its training rows ("after"). See :mod:`.alignment` for the procedure.

    >>> budget = AlignmentBudget(max_cost=0.50, prices=prices)
    >>> estimate = cost_estimate(samples, metric, probe, budget)   # refused if past it
    >>> results = budget.score(metric, samples)                    # AlignmentStopped if it stops
    >>> estimate = score_before(metric, rows, fitting, budget)     # the estimate, then before
    >>> held_out = score_held_out(metric, splits, fitting, budget) # a fit per split, then after
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_answer_metrics.analysis.aligned_metric import AlignedMetric, FittedOn
from langchain_answer_metrics.analysis.alignment_examples import (
    AspectCritic,
    CustomJudge,
    LabelledRow,
    _custom_example,
)
from langchain_answer_metrics.analysis.alignment_fit import Fit, Split, fit, rebuilt
from langchain_answer_metrics.analysis.alignment_scores import saved_offsets, scored_since
from langchain_answer_metrics.analysis.calibration import DEFAULT_THRESHOLD, LabelType
from langchain_answer_metrics.core.prices import PriceTable
from langchain_answer_metrics.core.result import MetricResult
from langchain_answer_metrics.core.sample import Sample
from langchain_answer_metrics.judging.limits import DEFAULT_MAX_CONCURRENCY
from langchain_answer_metrics.metrics.base import AnswerMetric, JudgedMetric
from langchain_answer_metrics.metrics.similar_examples import SimilarExamples
from langchain_answer_metrics.run.estimate.estimator import combine, estimate
from langchain_answer_metrics.run.limits import RunLimits
from langchain_answer_metrics.run.runner import evaluate_dataset
from langchain_answer_metrics.run.spend import Pricing

HELD_OUT_ID = "#held-out"
"""Appended to a row's id for its score after alignment in a checkpoint: the row's own id
keeps its score before (the two are of different metrics, under the same key)."""


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
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    on_progress: Callable[[str], None] | None = None
    checkpoint: str | os.PathLike[str] | None = None
    """The runner's ``checkpoint=``: each score kept as it arrives, a rerun resumes."""
    limits: RunLimits = field(default_factory=RunLimits)

    def __post_init__(self) -> None:
        self.limits.max_cost = self.max_cost
        self.limits.prices = dict(self.prices or {})

    def say(self, message: str) -> None:
        if self.on_progress is not None:
            self.on_progress(message)

    def score(
        self, metric: AnswerMetric, samples: Sequence[Sample], ids: Sequence[str] = ()
    ) -> list[MetricResult | None]:
        """Each sample's result (None: the metric failed on it), under what is left; with
        a :attr:`checkpoint`, each kept there under its id in ``ids`` (one per sample)."""
        self.limits.pricing = Pricing.of([metric], prices=self.prices)
        data: list[Any] = list(samples)
        kept: dict[str, Any] = {}
        if self.checkpoint is not None:
            assert len(ids) == len(data), "a checkpointed run names each sample"
            data = [{**s.model_dump(exclude_none=True), "id": i} for s, i in zip(data, ids)]
            kept["checkpoint"] = self.checkpoint
        before = saved_offsets(self.checkpoint)
        rows = evaluate_dataset(
            data, [metric], max_concurrency=self.max_concurrency, **kept, **self.limits.left()
        )
        fresh = scored_since(self.checkpoint, before)
        for row in rows:
            # A score read back from the checkpoint was paid for by an earlier run.
            if row.not_run or fresh is None or ids[row.index] in fresh:
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


@dataclass(frozen=True)
class Fitting:
    """What each fit of an alignment is asked for (see :func:`~.alignment_fit.fit`).

    Example:
        >>> fitting = Fitting(kind="binary", per_step=4, weights=True, threshold=True,
        ...                   min_weight=0.05, seed=0, similar=None)
        >>> fitting.fit(metric, training_rows).threshold
        0.5
    """

    kind: LabelType
    per_step: int
    weights: bool
    threshold: bool
    min_weight: float
    seed: int
    similar: Any

    def fit(self, metric: JudgedMetric, rows: Sequence[LabelledRow]) -> Fit:
        """One fit on ``rows`` (scored by ``metric`` before)."""
        return fit(
            metric,
            rows,
            kind=self.kind,
            examples_per_step=self.per_step,
            weights=self.weights,
            threshold=self.threshold,
            min_weight=self.min_weight,
            seed=self.seed,
            similar=self.similar,
        )


@dataclass
class HeldOut:
    """The held-out rows scored both before and after, paired, and each split's fit.

    Example:
        >>> held_out = score_held_out(metric, splits, fitting, budget)
        >>> measured_gain(held_out.before, held_out.after, held_out.labels, kind="binary")
    """

    before: list[float] = field(default_factory=list)
    after: list[float] = field(default_factory=list)
    labels: list[float | bool] = field(default_factory=list)
    cuts: list[float] = field(default_factory=list)
    fits: list[Fit] = field(default_factory=list)
    splits: Sequence[Split] = ()

    def add(self, row: LabelledRow, result: MetricResult | None, cut: float) -> None:
        """Pair ``row``'s score before with ``result``'s; a row without both is left out."""
        before = row.result.score if row.result is not None else None
        after = result.score if result is not None else None
        if before is None or after is None:
            return
        self.before.append(before)
        self.after.append(after)
        self.labels.append(row.label)
        self.cuts.append(cut)


def score_before(
    metric: JudgedMetric, rows: Sequence[LabelledRow], fitting: Fitting, budget: AlignmentBudget
) -> dict[str, Any]:
    """The cost estimate (refused past the budget), then every row scored as the metric
    is (each row's ``result``). Returns the estimate.

    Example:
        >>> score_before(metric, rows, fitting, budget)
        {'requests': 96, 'cost_low': 0.0021, 'cost_high': 0.0032}
    """
    # What cannot be saved is refused now, not after the runs have spent.
    AlignedMetric.of(metric, fitted_on=FittedOn(rows=len(rows), fingerprint=""))
    stand_ins = probe_examples(metric, rows, fitting.per_step)
    probe: AnswerMetric = rebuilt(
        metric,
        judges=metric.llm,
        threshold=metric.threshold,
        judge_weights=None,
        new_examples=stand_ins,
    )
    if fitting.similar is not None and stand_ins:  # the prompts' size, and the embeddings
        probe = SimilarExamples(
            metric=metric, pool=stand_ins, embeddings=fitting.similar, k=max(1, fitting.per_step)
        )
    estimate = cost_estimate([row.sample for row in rows], metric, probe, budget)
    budget.say(f"scoring {len(rows)} labelled rows as the metric is (before)")
    samples, ids = [row.sample for row in rows], [row.id for row in rows]
    for row, result in zip(rows, budget.score(metric, samples, ids)):
        row.result = result
    return estimate


def score_held_out(
    metric: JudgedMetric, splits: Sequence[Split], fitting: Fitting, budget: AlignmentBudget
) -> HeldOut:
    """Fit on each split's training rows, score its held-out rows with that fit (after).

    Raises:
        ValueError: no held-out row was scored both before and after.

    Example:
        >>> len(score_held_out(metric, splits_of(rows, 4, None, 0), fitting, budget).fits)
        4
    """
    cut = metric.threshold if metric.threshold is not None else DEFAULT_THRESHOLD
    held_out = HeldOut(splits=splits)
    for number, (train, test) in enumerate(splits, 1):
        fitted = fitting.fit(metric, train)
        budget.say(
            f"split {number}/{len(splits)}: fitted on {len(train)} rows, scoring "
            f"{len(test)} held-out rows (after)"
        )
        held_out.fits.append(fitted)
        ids = [f"{row.id}{HELD_OUT_ID}" for row in test]
        results = budget.score(fitted.metric, [row.sample for row in test], ids)
        after_cut = fitted.threshold if fitted.threshold is not None else cut
        for row, result in zip(test, results):
            held_out.add(row, result, after_cut)
    if not held_out.before:
        raise ValueError(
            f"align ({metric.key}): no held-out row was scored both before and "
            "after (every one failed or was not applicable)"
        )
    return held_out


def probe_examples(
    metric: JudgedMetric, rows: Sequence[LabelledRow], per_step: int
) -> dict[str, list[dict[str, Any]]]:
    """Stand-in examples of the rows' size, for the cost estimate of the "after" runs.

    Example:
        >>> list(probe_examples(critic, rows, 2))
        ['judge_aspect']
    """
    picked = rows[:per_step]
    if isinstance(metric, CustomJudge):
        made = [_custom_example(metric, row, DEFAULT_THRESHOLD) for row in picked]
        return {step: [example for _, example in made] for step, _ in made[:1]}
    if isinstance(metric, AspectCritic):
        return {
            "judge_aspect": [
                {
                    "input": {"criterion": metric.criterion, "response": row.sample.response},
                    "output": {"reason": "x" * 40, "verdict": "PASS"},
                }
                for row in picked
            ]
        }
    return {
        "verify_claims": [
            {
                "input": {
                    "claims": [row.sample.response],
                    "source": row.sample.reference or list(row.sample.retrieved_contexts or []),
                },
                "output": {"verdicts": [{"index": 1, "reason": "x" * 40, "verdict": "supported"}]},
            }
            for row in picked
        ]
    }
