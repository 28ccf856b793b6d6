"""One fit of an alignment on its training rows: judges' weights, the pass threshold,
the examples; and the metric rebuilt with them (see :mod:`.alignment` for the procedure).

    >>> fitted = fit(metric, training_rows, kind="binary", examples_per_step=4)
    >>> fitted.judges["judge-b"].weight, fitted.threshold
    (0.0, 0.5)
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

import langchain_answer_metrics.analysis.stats as stats
from langchain_answer_metrics.analysis.alignment_examples import (
    ChosenExamples,
    LabelledRow,
    choose_examples,
)
from langchain_answer_metrics.analysis.calibration import DEFAULT_THRESHOLD, LabelType
from langchain_answer_metrics.metrics.base import JudgedMetric
from langchain_answer_metrics.metrics.similar_examples import SimilarExamples, with_examples

Split = tuple[list[LabelledRow], list[LabelledRow]]
"""A split's training rows and its held-out rows."""

rebuilt = with_examples  # the metric rebuilt with a fit's judges, examples, weights, threshold

DEFAULT_MIN_WEIGHT = 0.05
POOL_SIZE = 64  # examples per step kept for select="similar" to choose from


class JudgeFit(BaseModel):
    """One judge's agreement with the labels on the training rows, and its weight.

    Example:
        >>> JudgeFit(agreement=-0.5, weight=0.0)  # worse than chance: dropped
    """

    agreement: float | None = Field(
        description="Cohen's kappa (pass/fail labels) or Spearman (scores); None when undefined."
    )
    weight: float = Field(description="0.0: dropped.")


class Fit(BaseModel):
    """What one fit chose on its training rows.

    Example:
        >>> fitted = fit(metric, rows, kind="binary")
        >>> fitted.threshold, fitted.example_rows["judge_aspect"], fitted.metric.judge_weights
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    metric: Any = Field(description="The aligned metric (a JudgedMetric).")
    judges: dict[str, JudgeFit] = Field(default_factory=dict)
    threshold: float | None = None
    examples: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    example_rows: dict[str, list[str]] = Field(default_factory=dict)
    training_rows: int = 0


def _panel_score(row: LabelledRow, weights: Mapping[str, float]) -> float | None:
    """The row's score from the kept judges' own scores, weighted."""
    if row.result is None:
        return None
    scores = {label: s for label, s in row.result.per_model.items() if weights.get(label)}
    if not scores:
        return None
    return sum(weights[label] * s for label, s in scores.items()) / sum(
        weights[label] for label in scores
    )


def _agreement(scores: list[float], labels: list[float], kind: LabelType, cut: float) -> float:
    x, y = stats.np.asarray(scores, dtype=float), stats.np.asarray(labels, dtype=float)
    if kind == "binary":
        return stats.cohen_kappa(*stats.confusion(x, y, cut))
    return stats.spearman(x, y)


def _best_threshold(scores: list[float], labels: list[float], current: float) -> float:
    """The cut between two distinct scores with the best Youden's J (nearest the current
    threshold among equals); the current one when the rows cannot tell."""
    distinct = sorted(set(scores))
    if len(distinct) < 2 or len(set(labels)) < 2:
        return current
    x, y = stats.np.asarray(scores, dtype=float), stats.np.asarray(labels, dtype=float)
    cuts = [(a + b) / 2 for a, b in itertools.pairwise(distinct)]
    return max(cuts, key=lambda c: (stats.youden_j(*stats.confusion(x, y, c)), -abs(c - current)))


def _judge_fits(
    metric: JudgedMetric, training: Sequence[LabelledRow], kind: LabelType, cut: float
) -> dict[str, JudgeFit]:
    """Each judge's agreement with the labels on the rows it scored (weight 1 for now)."""
    judges: dict[str, JudgeFit] = {}
    for label in (judge.label for judge in metric.llm):
        rated = [r for r in training if r.result is not None and label in r.result.per_model]
        value = _agreement(
            [r.result.per_model[label] for r in rated if r.result],
            [float(r.label) for r in rated],
            kind,
            cut,
        )
        agreement = value if stats.np.isfinite(value) else None
        judges[label] = JudgeFit(agreement=agreement, weight=1.0)
    return judges


def _weigh(judges: Mapping[str, JudgeFit], min_weight: float) -> None:
    """Each judge's weight: its agreement relative to the best judge's; at or below
    ``min_weight``, 0 (dropped). No judge agreeing at all keeps the panel as it is."""
    raw = {label: max(0.0, judge.agreement or 0.0) for label, judge in judges.items()}
    top = max(raw.values())
    if top <= 0:
        return
    for label, judge in judges.items():
        share = raw[label] / top
        judge.weight = round(share, 4) if share > min_weight else 0.0


def _rescored(training: Sequence[LabelledRow], kept: Mapping[str, float]) -> list[LabelledRow]:
    """The rows with the kept judges' weighted score, which the examples are chosen on."""
    return [
        row
        if row.result is None
        else replace(row, result=row.result.model_copy(update={"score": _panel_score(row, kept)}))
        for row in training
    ]


def fit(
    metric: JudgedMetric,
    training: Sequence[LabelledRow],
    *,
    kind: LabelType,
    examples_per_step: int = 4,
    weights: bool = True,
    threshold: bool = True,
    min_weight: float = DEFAULT_MIN_WEIGHT,
    seed: int = 0,
    similar: Any = None,
    pool_size: int = POOL_SIZE,
) -> Fit:
    """Fit weights, a threshold and examples on ``training`` (rows scored by ``metric``).
    With ``similar`` (embedding models), the examples are a pool of up to ``pool_size``
    per step, ``examples_per_step`` of them chosen per sample at scoring time
    (:class:`~langchain_answer_metrics.metrics.similar_examples.SimilarExamples`).

    Example:
        >>> fit(metric, training_rows, kind="binary", examples_per_step=2).judges
        {'judge-a': JudgeFit(agreement=0.4, weight=1.0)}
    """
    cut = metric.threshold if metric.threshold is not None else DEFAULT_THRESHOLD
    judges = _judge_fits(metric, training, kind, cut)
    if weights and len(judges) > 1:
        _weigh(judges, min_weight)
    kept = {label: fit_.weight for label, fit_ in judges.items() if fit_.weight > 0}
    pairs = [(s, float(r.label)) for r in training if (s := _panel_score(r, kept)) is not None]
    new_threshold = metric.threshold
    if threshold and kind == "binary" and pairs:
        new_threshold = round(_best_threshold([s for s, _ in pairs], [y for _, y in pairs], cut), 4)
    chosen: ChosenExamples = choose_examples(
        metric,
        _rescored(training, kept),
        judges=set(kept),
        per_step=examples_per_step if similar is None else pool_size,
        threshold=new_threshold if new_threshold is not None else cut,
        seed=seed,
    )
    weighted = weights and len(kept) > 1 and metric.aggregation == "mean"
    aligned: JudgedMetric | SimilarExamples = rebuilt(
        metric,
        judges=[j for j in metric.llm if j.label in kept],
        new_examples=chosen.examples if similar is None else {},
        judge_weights=kept if weighted and len(set(kept.values())) > 1 else None,
        threshold=new_threshold,
    )
    if similar is not None and chosen.examples:
        aligned = SimilarExamples(
            metric=aligned, pool=chosen.examples, embeddings=similar, k=max(1, examples_per_step)
        )
    return Fit(
        metric=aligned,
        judges=judges,
        threshold=new_threshold,
        examples=chosen.examples,
        example_rows=chosen.rows,
        training_rows=len(training),
    )


def splits_of(
    rows: Sequence[LabelledRow], folds: int, holdout: float | Collection[str] | None, seed: int
) -> list[Split]:
    """(training, held-out) pairs: k stratified folds, or the one hold-out split.

    Example:
        >>> [len(test) for _, test in splits_of(rows, 4, None, seed=0)]  # 48 rows
        [12, 12, 12, 12]
    """
    if holdout is not None:
        if isinstance(holdout, (int, float)):
            if not 0.0 < holdout < 1.0:
                raise ValueError(f"align: holdout must be a fraction in (0, 1), got {holdout}")
            order = list(rows)
            random.Random(seed).shuffle(order)
            held = {row.id for row in order[: max(1, round(len(order) * holdout))]}
        else:
            held = {str(item) for item in holdout}
            unknown = held - {row.id for row in rows}
            if unknown:
                raise ValueError(f"align: holdout names rows not labelled: {sorted(unknown)[:5]}")
        test = [row for row in rows if row.id in held]
        train = [row for row in rows if row.id not in held]
        if not test or not train:
            raise ValueError("align: the hold-out split leaves no training or no held-out rows")
        return [(train, test)]
    if folds < 2 or folds > len(rows):
        raise ValueError(
            f"align: folds must be between 2 and the {len(rows)} labelled rows, got {folds}"
        )
    order = list(rows)
    random.Random(seed).shuffle(order)
    order.sort(key=lambda row: float(row.label))  # stratified: each fold gets every label
    parts: list[list[LabelledRow]] = [order[i::folds] for i in range(folds)]
    return [
        ([row for j, part in enumerate(parts) if j != i for row in part], parts[i])
        for i in range(folds)
    ]
